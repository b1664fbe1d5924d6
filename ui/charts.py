"""Altair charts: original vs audited scores, agreement with intervals, confusion heatmap."""

from __future__ import annotations

import altair as alt
import pandas as pd


def original_vs_audited(original: dict, audited: dict, section: str) -> alt.Chart:
    """F1 per type of one section, original and audited side by side (tooltip: the change)."""
    rows = [{"type": t, "score": which, "F1": m[section][t]["f1"], "change": audited[section][t]["f1"] -
             original[section][t]["f1"]} for which, m in (("original", original), ("audited", audited))
            for t in original[section]]
    order = ["original", "audited"]
    return alt.Chart(pd.DataFrame(rows)).mark_bar().encode(
        x=alt.X("type:N", title=None, sort=list(original[section]), axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("score:N", sort=order), y=alt.Y("F1:Q", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("score:N", sort=order, title=None),
        tooltip=["type", "score", alt.Tooltip("F1:Q", format=".4f"), alt.Tooltip("change:Q", format="+.4f")],
    ).properties(height=220)


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
