"""The chart builders of `audit.outputs.figures`, tested on the Vega-Lite spec each one produces: its marks, its
fields and
the numbers in its inline data (the builders are pure: rows in, spec out)."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from audit.outputs import figures


def rows_of(spec: dict) -> list[dict]:
    """Every inline data row of a spec (Altair puts them under `datasets`)."""
    return [r for values in spec.get("datasets", {}).values() for r in values]


def marks_of(spec: dict) -> list[str]:
    out = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            m = node.get("mark")
            if m is not None:
                out.append(m if isinstance(m, str) else m["type"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    return out


INTERVALS = [{"label": "F1", "series": "judge only", "value": 0.6, "low": None, "high": None, "n": None},
             {"label": "F1", "series": "audited", "value": 0.55, "low": None, "high": None, "n": 10},
             {"label": "F1", "series": "estimated", "value": 0.5, "low": 0.4, "high": 0.62, "n": 30},
             {"label": "median rank", "series": "judge only", "value": 140.0, "low": None, "high": None, "n": None}]


def test_headline_has_one_row_per_metric_on_its_own_scale_and_keeps_every_number():
    spec = figures.headline_intervals(INTERVALS).to_dict()
    assert spec["facet"]["row"]["field"] == "label"
    assert spec["resolve"]["scale"]["x"] == "independent"
    assert {"rule", "point", "text"} <= set(marks_of(spec))
    data = {(r["label"], r["series"]): r for r in rows_of(spec)}
    for p in INTERVALS:
        r = data[(p["label"], p["series"])]
        assert r["value"] == p["value"]
        # a point without an interval is drawn as a zero-width one at its value
        assert (r["low"], r["high"]) == ((p["low"], p["high"]) if p["low"] is not None else (p["value"], p["value"]))
        assert r["pad_low"] < r["low"] <= r["high"] < r["pad_high"]  # equal values still get an axis


@pytest.mark.parametrize("builder,reference", [(figures.bias_intervals, 0.0), (figures.position_bias, 0.5)])
def test_interval_charts_draw_the_reference_line(builder, reference):
    spec = builder([{"label": "novelty", "value": 0.52, "low": 0.45, "high": 0.58, "n": 200}]).to_dict()
    assert reference in [r.get("ref") for r in rows_of(spec)]
    assert [r["value"] for r in rows_of(spec) if "value" in r] == [0.52]


def test_agreement_intervals_span_minus_one_to_one_and_carry_both_series():
    rows = [{"label": "all", "series": "human vs judge", "value": 0.4, "low": 0.3, "high": 0.5, "n": 100},
            {"label": "a vs b", "series": "human vs human", "value": 0.7, "low": 0.6, "high": 0.8, "n": 50}]
    spec = figures.agreement_intervals(rows).to_dict()
    xs = [layer["encoding"]["x"] for layer in spec["layer"] if "x" in layer.get("encoding", {})]
    assert any(x.get("scale", {}).get("domain") == [-1.0, 1.0] for x in xs)
    assert {r["series"] for r in rows_of(spec) if "series" in r} == {"human vs judge", "human vs human"}


def test_kappa_rows_skip_degenerate_and_missing_groups():
    groups = {"all": {"kappa": 0.5, "kappa_ci": [0.4, 0.6], "n": 9},
              "one label": {"kappa": 0.0, "degenerate": "judge used one label", "n": 3},
              "none": {"kappa": None, "n": 0},
              "no ci": {"kappa": 0.2, "n": 4}}
    rows = figures.kappa_rows(groups, "human vs judge")
    assert [(r["label"], r["low"], r["high"]) for r in rows] == [("all (Cohen's κ)", 0.4, 0.6),
                                                                 ("no ci (Cohen's κ)", 0.2, 0.2)]
    spec = figures.kappa_with_intervals(groups).to_dict()
    assert sorted(r["value"] for r in rows_of(spec) if "value" in r) == [0.2, 0.5]


def test_confusion_heatmap_cells_equal_the_table():
    conf = {"labels": ["match", "no-match"], "counts": [[5, 2], [1, 7]]}
    spec = figures.confusion_heatmap(conf, row_title="human", col_title="judge", title="t").to_dict()
    cells = {(r["human"], r["judge"]): r["count"] for r in rows_of(spec)}
    assert cells == {("match", "match"): 5, ("match", "no-match"): 2, ("no-match", "match"): 1,
                     ("no-match", "no-match"): 7}
    assert spec["title"] == "t" and spec["params"][0]["name"] == "cell"  # the Agreement page reads this selection


def test_original_vs_audited_keeps_one_section_and_its_changes():
    df = pd.DataFrame([{"section": "entities", "type": "a", "f1": 0.5, "f1 audited": 0.6},
                       {"section": "relations", "type": "b", "f1": 0.3, "f1 audited": 0.3}])
    spec = figures.original_vs_audited(df, "entities").to_dict()
    assert marks_of(spec) == ["bar"]
    got = {(r["type"], r["score"]): (r["F1"], r["change"]) for r in rows_of(spec)}
    assert got == {("a", "original"): (0.5, pytest.approx(0.1)), ("a", "audited"): (0.6, pytest.approx(0.1))}


def test_coverage_reviewer_and_variant_bars_keep_their_numbers():
    cov = figures.coverage_bars([{"group": "k · t", "reviewed": 3, "total": 10}]).to_dict()
    assert [(r["reviewed"], r["total"], r["text"]) for r in rows_of(cov)] == [(3, 10, "3 of 10")]
    rev = figures.reviewer_bars([{"reviewer": "ana", "mode": "blind", "reviews": 4},
                                 {"reviewer": "ana", "mode": "sighted", "reviews": 1}]).to_dict()
    assert rev["encoding"]["x"]["stack"] == "zero" and sum(r["reviews"] for r in rows_of(rev)) == 5
    var = figures.variant_bars([{"group": "g", "variant": "paper", "value": 0.5},
                                {"group": "g", "variant": "strict", "value": 0.6}]).to_dict()
    assert var["encoding"]["xOffset"]["field"] == "variant"
    assert var["encoding"]["y"]["scale"]["domain"] == [0, 1]
    assert [r["value"] for r in rows_of(var)] == [0.5, 0.6]



def test_the_headline_axis_stays_inside_the_metrics_range_and_holds_every_value():
    """For any values in a metric's range, the padded axis holds every value and interval and never leaves the
    range (an F1 of 1.0 once drew an axis to 1.02). The 200 random metrics are drawn as one chart, as a report draws
    several metrics, each on its own padded axis; the first of each kind of range is also drawn alone. (Four charts
    instead of 200: Altair takes about 0.1 s of CPU to build and validate each.)"""
    rng = random.Random(26)
    cases = []
    for i in range(200):
        bounds = rng.choice([(0.0, 1.0), (1.0, 5.0), None])
        lo_b, hi_b = bounds or (0.0, 300.0)
        points = []
        for series in ("judge only", "audited", "estimated"):
            v = rng.choice([lo_b, hi_b, rng.uniform(lo_b, hi_b)])
            half = rng.choice([0.0, rng.uniform(0, 0.1) * (hi_b - lo_b)])
            low, high = (max(lo_b, v - half), min(hi_b, v + half)) if series == "estimated" else (None, None)
            points.append({"label": f"m{i}", "series": series, "value": v, "low": low, "high": high, "n": 3,
                           "bounds": bounds})
        cases.append((bounds, points))

    def check(points: list[dict]) -> None:
        rows = rows_of(figures.headline_intervals(points).to_dict())
        assert len(rows) == len(points)
        bounds_of = {p["label"]: p["bounds"] for p in points}
        for r in rows:
            assert r["pad_low"] <= min(r["low"], r["value"]) and max(r["high"], r["value"]) <= r["pad_high"]
            bounds = bounds_of[r["label"]]
            if bounds is not None:
                assert bounds[0] <= r["pad_low"] and r["pad_high"] <= bounds[1]

    check([p for _, points in cases for p in points])
    for kind in ((0.0, 1.0), (1.0, 5.0), None):
        check(next(points for bounds, points in cases if bounds == kind))


def _text_layers(spec: dict) -> list[dict]:
    return [layer for layer in spec["spec"]["layer"] if (layer.get("mark") or {}).get("type") == "text"]


def test_a_value_at_the_top_of_its_axis_is_labelled_left_of_its_dot():
    """Issue #40 point 9: LitXBench's F1 = 1 labels were cut at the right edge (the axis ends at the bound 1)."""
    points = [{"label": "process F1", "series": s, "value": 1.0, "low": None, "high": None, "n": 1,
               "bounds": (0.0, 1.0)} for s in ("judge only", "audited")]
    points += [{"label": "value F1", "series": s, "value": v, "low": None, "high": None, "n": 1,
                "bounds": (0.0, 1.0)} for s, v in (("judge only", 0.90), ("audited", 0.93))]
    spec = figures.headline_intervals(points).to_dict()
    at_right = {(r["label"], r["series"]): r["at_right"] for r in rows_of(spec) if "at_right" in r}
    assert at_right[("process F1", "judge only")] and at_right[("process F1", "audited")]
    assert not at_right[("value F1", "judge only")]  # the lower of two values keeps its label on the right
    layers = {layer["mark"]["align"]: layer for layer in _text_layers(spec)}
    assert layers["right"]["encoding"]["x"]["field"] == "low" and layers["right"]["mark"]["dx"] < 0
    assert layers["right"]["transform"] == [{"filter": "datum.at_right"}]
    assert layers["left"]["transform"] == [{"filter": "!datum.at_right"}]


def test_the_per_type_legend_stacks_its_entries():
    """Five sections side by side at 1280 px: a horizontal legend lost its second entry ("audited")."""
    rows = pd.DataFrame([{"section": "entities", "type": "a", "f1": 0.5, "f1 audited": 0.6}])
    legend = figures.original_vs_audited(rows, "entities").to_dict()["encoding"]["color"]["legend"]
    assert legend["direction"] == "vertical" and legend["labelLimit"] == 0
