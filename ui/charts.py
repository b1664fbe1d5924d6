"""Altair charts: original vs audited scores, agreement with intervals, confusion heatmap."""

from __future__ import annotations

import altair as alt
import pandas as pd


def original_vs_audited(rows: pd.DataFrame, section: str) -> alt.Chart:
    """F1 per type of one section, original and audited side by side (tooltip: the change); `rows` as
    `ui.metrics.comparison_rows`."""
    part = rows[rows["section"] == section]
    data = [{"type": r["type"], "score": which, "F1": r[col], "change": r["f1 audited"] - r["f1"]}
            for _, r in part.iterrows() for which, col in (("original", "f1"), ("audited", "f1 audited"))]
    order = ["original", "audited"]
    return alt.Chart(pd.DataFrame(data)).mark_bar().encode(
        # every type's label is drawn (no overlap culling, no truncation), slanted to fit narrow columns
        x=alt.X("type:N", title=None, sort=list(part["type"]),
                axis=alt.Axis(labelAngle=-35, labelLimit=0, labelOverlap=False, labelFontSize=11)),
        xOffset=alt.XOffset("score:N", sort=order),
        y=alt.Y("F1:Q", title="F1", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format=".1f")),
        color=alt.Color("score:N", sort=order, title=None, legend=alt.Legend(orient="bottom", labelLimit=0)),
        tooltip=["type", "score", alt.Tooltip("F1:Q", format=".4f"), alt.Tooltip("change:Q", format="+.4f")],
    ).properties(height=240)


def kappa_with_intervals(groups: dict) -> alt.Chart:
    rows = []
    for g, s in groups.items():
        if s.get("kappa") is None:
            continue
        lo, hi = s["kappa_ci"] if s.get("kappa_ci") else (s["kappa"], s["kappa"])
        rows.append({"group": g, "kappa": s["kappa"], "low": lo, "high": hi, "n": s["n"]})
    df = pd.DataFrame(rows, columns=["group", "kappa", "low", "high", "n"])
    base = alt.Chart(df).encode(y=alt.Y("group:N", sort=list(df["group"]), title=None,
                                        axis=alt.Axis(labelLimit=260)))
    return (base.mark_rule().encode(x=alt.X("low:Q", title="Cohen's kappa (95% cluster-bootstrap interval)",
                                            scale=alt.Scale(domain=[-1, 1])), x2="high:Q")
            + base.mark_point(filled=True, size=70).encode(
                x="kappa:Q", tooltip=["group", alt.Tooltip("kappa:Q", format=".3f"),
                                      alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f"), "n"])
            ).properties(height=alt.Step(32))


def confusion_heatmap(confusion: dict, *, row_title: str, col_title: str) -> alt.Chart:
    labels, counts = confusion["labels"], confusion["counts"]
    df = pd.DataFrame([{"human": labels[i], "judge": labels[j], "count": counts[i][j]}
                       for i in range(len(labels)) for j in range(len(labels))])
    pick = alt.selection_point(name="cell", fields=["human", "judge"], on="click")
    base = alt.Chart(df).encode(x=alt.X("judge:N", title=col_title, sort=labels, axis=alt.Axis(labelAngle=0)),
                                y=alt.Y("human:N", title=row_title, sort=labels))
    rect = base.mark_rect(stroke="black").encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues")),
        opacity=alt.condition(pick, alt.value(1), alt.value(0.5)), tooltip=["human", "judge", "count"],
    ).add_params(pick)
    text = base.mark_text(fontSize=16).encode(text="count:Q")
    return (rect + text).properties(width=260, height=200)
