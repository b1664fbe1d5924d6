"""Chart builders shared by the dashboard pages and the audit report: one pure function per chart, plain rows in,
an Altair chart out (`chart.to_dict()` is its Vega-Lite spec), so a chart on screen and in the report never differ.

Rows are lists of dicts (or, for `original_vs_audited`, the Scores page's comparison table). No builder reads the
database or Streamlit; every text in a chart is drawn by Vega as SVG text, never as HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import altair as alt
import pandas as pd

from audit.outputs.agreement_rule import statistic_of

INTERVAL_COLUMNS = ["label", "series", "value", "low", "high", "n"]
HEADLINE_COLUMNS = [*INTERVAL_COLUMNS, "bound_low", "bound_high"]
SERIES_ORDER = ["judge only", "audited", "reviewed so far", "estimated", "human vs judge", "human vs human"]


def _interval_plot(rows: Sequence[Mapping], *, x_title: str, domain: tuple[float, float] | None = None,
                   reference: float | None = None, series_title: str | None = None) -> alt.LayerChart:
    """Dots with 95% interval rules, one line per label, series side by side (the shape several charts share)."""
    df = pd.DataFrame([{c: r.get(c) for c in INTERVAL_COLUMNS} for r in rows], columns=INTERVAL_COLUMNS)
    df["low"] = df["low"].where(df["low"].notna(), df["value"])
    df["high"] = df["high"].where(df["high"].notna(), df["value"])
    labels = list(dict.fromkeys(df["label"]))
    series = [s for s in SERIES_ORDER if s in set(df["series"])] + sorted(set(df["series"]) - set(SERIES_ORDER))
    scale = alt.Scale(domain=list(domain)) if domain else alt.Scale(zero=False)
    base = alt.Chart(df).encode(
        y=alt.Y("label:N", sort=labels, title=None, axis=alt.Axis(labelLimit=320)),
        yOffset=alt.YOffset("series:N", sort=series),
        color=alt.Color("series:N", sort=series, title=series_title, legend=alt.Legend(orient="bottom",
                                                                                        labelLimit=0)))
    rule = base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title=x_title, scale=scale,
                                                        axis=alt.Axis(format="~g", tickCount=5)),
                                                x2="high:Q")  # not -0.000000060, and ticks that do not collide
    dot = base.mark_point(filled=True, size=70).encode(
        x="value:Q", tooltip=["label:N", "series:N", alt.Tooltip("value:Q", format=".4f"),
                              alt.Tooltip("low:Q", format=".4f"), alt.Tooltip("high:Q", format=".4f"), "n:Q"])
    layers: list = [rule, dot]
    if reference is not None:
        layers.append(alt.Chart(pd.DataFrame({"ref": [reference]})).mark_rule(strokeDash=[4, 4], color="gray")
                      .encode(x="ref:Q"))
    return alt.layer(*layers).properties(height=alt.Step(16), width=420)


def headline_intervals(points: Sequence[Mapping]) -> alt.FacetChart:
    """The headline: per metric, judge-only vs audited (and the sample estimate with its interval), one row per
    metric on its own x scale (F1 and a median rank cannot share an axis). `points`: {label, series, value, low,
    high, n, bounds} (bounds: the metric's range, or None; the padded axis stays inside it: no F1 of 1.02)."""
    df = pd.DataFrame([{c: p.get(c) for c in INTERVAL_COLUMNS} | dict(zip(("bound_low", "bound_high"),
                                                                          p.get("bounds") or (None, None),
                                                                          strict=True)) for p in points],
                      columns=HEADLINE_COLUMNS)
    df["low"] = df["low"].where(df["low"].notna(), df["value"])
    df["high"] = df["high"].where(df["high"].notna(), df["value"])
    # a padded x range per metric, so equal values (no review yet) still get a readable axis
    lo, hi = df.groupby("label")["low"].transform("min"), df.groupby("label")["high"].transform("max")
    pad = ((hi - lo) * 0.25).combine(lo.abs().combine(hi.abs(), max) * 0.02, max).clip(lower=0.005)
    df["pad_low"], df["pad_high"] = lo - pad, hi + pad
    df[["bound_low", "bound_high"]] = df[["bound_low", "bound_high"]].astype(float)
    inside_low, inside_high = df["bound_low"].notna(), df["bound_high"].notna()
    df.loc[inside_low, "pad_low"] = df.loc[inside_low, ["pad_low", "bound_low"]].max(axis=1)
    df.loc[inside_high, "pad_high"] = df.loc[inside_high, ["pad_high", "bound_high"]].min(axis=1)
    # a value label at the right end of its axis (F1 = 1) goes left of its dot: to the right it is cut off
    df["at_right"] = df["high"] >= df["pad_high"] - (df["pad_high"] - df["pad_low"]) * 0.2
    labels = list(dict.fromkeys(df["label"]))
    series = [s for s in SERIES_ORDER if s in set(df["series"])]
    base = alt.Chart().encode(
        y=alt.Y("series:N", sort=series, title=None, axis=None),
        color=alt.Color("series:N", sort=series, title=None, legend=alt.Legend(orient="bottom", labelLimit=0)))
    span = base.mark_rule(opacity=0).encode(x=alt.X("pad_low:Q", title=None, scale=alt.Scale(zero=False),
                                                    axis=alt.Axis(tickCount=5)),
                                            x2="pad_high:Q")
    rule = base.mark_rule(strokeWidth=2).encode(x="low:Q", x2="high:Q")
    dot = base.mark_point(filled=True, size=80).encode(
        x="value:Q", tooltip=["label:N", "series:N", alt.Tooltip("value:Q", format=".4f"),
                              alt.Tooltip("low:Q", format=".4f"), alt.Tooltip("high:Q", format=".4f"), "n:Q"])
    text = base.mark_text(align="left", dx=8, fontSize=10).encode(x="high:Q", text=alt.Text("value:Q", format=".4~f")) \
        .transform_filter("!datum.at_right")
    text_left = base.mark_text(align="right", dx=-8, fontSize=10).encode(
        x="low:Q", text=alt.Text("value:Q", format=".4~f")).transform_filter("datum.at_right")
    return (alt.layer(span, rule, dot, text, text_left, data=df).properties(width=460, height=alt.Step(14))
            .facet(row=alt.Row("label:N", sort=labels, title=None,
                               header=alt.Header(labelAngle=0, labelAlign="left", labelLimit=260)))
            .resolve_scale(x="independent"))


def bias_intervals(rows: Sequence[Mapping]) -> alt.LayerChart:
    """The judge's bias (judge only − audited or estimated) per metric with its interval; 0 = no bias.
    `rows`: {label, value, low, high, n, against} (series defaults to "judge bias"); the axis title names what the
    rows subtract (`against`: `estimate`, or `audited (reviewed so far)`)."""
    against = " / ".join(dict.fromkeys(str(r.get("against") or "audited") for r in rows)) or "audited"
    return _interval_plot([{"series": "judge bias", **r} for r in rows],
                          x_title=f"judge bias (judge only − {against})", reference=0.0)


def board_intervals(points: Sequence[Mapping], *, metric: str) -> alt.LayerChart:
    """A board: per system its judge-only value and its audited (or estimated) value with the 95% interval where
    one exists (a dot alone where none is valid). `points`: {label (the system), series, value, low, high, n}."""
    return _interval_plot(points, x_title=metric, series_title=None)


def original_vs_audited(rows: pd.DataFrame, section: str) -> alt.Chart:
    """F1 per type of one section, original and audited side by side (tooltip: the change); `rows` as
    `ui.metrics.comparison_rows` (columns section, type, f1, f1 audited)."""
    part = rows[rows["section"] == section]
    data = [{"type": r["type"], "score": which, "F1": r[col], "change": r["f1 audited"] - r["f1"]}
            for _, r in part.iterrows() for which, col in (("original", "f1"), ("audited", "f1 audited"))]
    order = ["original", "audited"]
    return alt.Chart(pd.DataFrame(data, columns=["type", "score", "F1", "change"])).mark_bar().encode(
        # every type's label is drawn (no overlap culling, no truncation), slanted to fit narrow columns
        x=alt.X("type:N", title=None, sort=list(part["type"]),
                axis=alt.Axis(labelAngle=-35, labelLimit=0, labelOverlap=False, labelFontSize=11)),
        xOffset=alt.XOffset("score:N", sort=order),
        y=alt.Y("F1:Q", title="F1", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format=".1f")),
        # one entry per line: side by side, "audited" was cut off in a narrow column (five sections at 1280 px)
        color=alt.Color("score:N", sort=order, title=None, legend=alt.Legend(orient="bottom", direction="vertical",
                                                                              labelLimit=0)),
        tooltip=["type", "score", alt.Tooltip("F1:Q", format=".4f"), alt.Tooltip("change:Q", format="+.4f")],
    ).properties(height=240)


def agreement_intervals(rows: Sequence[Mapping], *, x_title: str = "agreement (95% document-bootstrap interval)"
                        ) -> alt.LayerChart:
    """Agreement statistics with intervals on [-1, 1]: human vs judge beside the human-human ceiling.
    `rows`: {label, series, value, low, high, n}."""
    return _interval_plot(rows, x_title=x_title, domain=(-1.0, 1.0), reference=0.0)


def kappa_with_intervals(groups: Mapping[str, Mapping]) -> alt.LayerChart:
    """Each group's headline κ (`audit.outputs.agreement_rule`: weighted for ordinal groups) with its interval: one
    series
    of `agreement_intervals`."""
    return agreement_intervals(kappa_rows(groups, "human vs judge"), x_title="κ (95% cluster-bootstrap interval)")


def kappa_rows(groups: Mapping[str, Mapping], series: str, title: Callable[[str], str] = str) -> list[dict]:
    """Interval rows of each group's headline statistic (`audit.outputs.agreement_rule.statistic_of`), labelled with the
    group's `title` and the statistic's name; an undefined one is left out, never drawn at 0."""
    out = []
    for g, s in groups.items():
        stat = statistic_of(s)
        if not stat.defined:
            continue
        low, high = stat.ci or (stat.value, stat.value)
        out.append({"label": f"{title(g)} ({stat.name})", "series": series, "value": stat.value, "low": low,
                    "high": high, "n": stat.n})
    return out


def confusion_heatmap(confusion: Mapping, *, row_title: str, col_title: str,
                      title: str | None = None) -> alt.LayerChart:
    """Counts of (human, judge) labels; a click selects a cell (the Agreement page lists the decisions behind it)."""
    labels, counts = list(confusion["labels"]), confusion["counts"]
    df = pd.DataFrame([{"human": labels[i], "judge": labels[j], "count": counts[i][j]}
                       for i in range(len(labels)) for j in range(len(labels))], columns=["human", "judge", "count"])
    pick = alt.selection_point(name="cell", fields=["human", "judge"], on="click")
    base = alt.Chart(df).encode(x=alt.X("judge:N", title=col_title, sort=labels, axis=alt.Axis(labelAngle=0)),
                                y=alt.Y("human:N", title=row_title, sort=labels))
    rect = base.mark_rect(stroke="black").encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues")),
        opacity=alt.condition(pick, alt.value(1), alt.value(0.5)), tooltip=["human", "judge", "count"],
    ).add_params(pick)
    text = base.mark_text(fontSize=16).encode(text="count:Q")
    chart = (rect + text).properties(width=260, height=200)
    return chart.properties(title=title) if title else chart


def coverage_bars(rows: Sequence[Mapping], *, group_title: str = "decisions") -> alt.LayerChart:
    """Decisions reviewed of N per group (kind · type, or stratum): a grey bar of N, the reviewed part over it.
    `rows`: {group, reviewed, total}."""
    df = pd.DataFrame([{"group": r["group"], "reviewed": r["reviewed"], "total": r["total"],
                        "text": f"{r['reviewed']} of {r['total']}"} for r in rows],
                      columns=["group", "reviewed", "total", "text"])
    base = alt.Chart(df).encode(y=alt.Y("group:N", sort=list(df["group"]), title=None, axis=alt.Axis(labelLimit=320)))
    total = base.mark_bar(color="#e5e7eb").encode(x=alt.X("total:Q", title=f"{group_title} reviewed of N"))
    done = base.mark_bar(color="#2563eb").encode(x="reviewed:Q", tooltip=["group:N", "reviewed:Q", "total:Q"])
    text = base.mark_text(align="left", dx=4, fontSize=11).encode(x="total:Q", text="text:N")
    return (total + done + text).properties(width=420, height=alt.Step(20))


def reviewer_bars(rows: Sequence[Mapping]) -> alt.Chart:
    """Review rows per reviewer, blind and sighted stacked. `rows`: {reviewer, mode, reviews}."""
    df = pd.DataFrame(list(rows), columns=["reviewer", "mode", "reviews"])
    order = ["blind", "sighted", "adjudicator"]
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("reviewer:N", title=None, sort=list(dict.fromkeys(df["reviewer"])), axis=alt.Axis(labelLimit=320)),
        x=alt.X("reviews:Q", title="review rows", stack="zero"),
        color=alt.Color("mode:N", sort=order, title=None, legend=alt.Legend(orient="bottom")),
        order=alt.Order("mode:N"), tooltip=["reviewer:N", "mode:N", "reviews:Q"],
    ).properties(width=420, height=alt.Step(22))


def variant_bars(rows: Sequence[Mapping], *, value_title: str = "F1", domain: tuple[float, float] | None = (0, 1)
                 ) -> alt.Chart:
    """One number under two or more variants side by side per group (e.g. the paper's scorer vs a strict
    variant, or tie policies). `rows`: {group, variant, value}."""
    df = pd.DataFrame(list(rows), columns=["group", "variant", "value"])
    variants = list(dict.fromkeys(df["variant"]))
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("group:N", title=None, sort=list(dict.fromkeys(df["group"])),
                axis=alt.Axis(labelAngle=-35, labelLimit=0, labelOverlap=False)),
        xOffset=alt.XOffset("variant:N", sort=variants),
        y=alt.Y("value:Q", title=value_title, scale=alt.Scale(domain=list(domain)) if domain else alt.Scale()),
        color=alt.Color("variant:N", sort=variants, title=None, legend=alt.Legend(orient="bottom", labelLimit=0)),
        tooltip=["group:N", "variant:N", alt.Tooltip("value:Q", format=".4f")],
    ).properties(height=220, width=alt.Step(22))


def position_bias(rows: Sequence[Mapping]) -> alt.LayerChart:
    """Share of decisive pairwise calls won by the idea shown first, per criterion, with its interval; 0.5 = no
    position bias. `rows`: {label, value, low, high, n}."""
    return _interval_plot([{"series": "first-slot win share", **r} for r in rows], x_title="first-slot win share",
                          domain=(0.0, 1.0), reference=0.5)

