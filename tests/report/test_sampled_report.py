"""The report of a sampled audit: a confusion matrix per stratum (whose cells count the reviewed decisions of that
stratum), the sample estimate in the headline chart, and for LitXBench the pairings reviews forced and forbade."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from audit.outputs.report import build_report, report_html
from audit.review.reviews import add_review
from audit.review.sampling import ALL_KINDS, create_plan, next_sample, plans
from audit.store.database import open_db
from audit.views import load_view
from tests.conftest import copy_of
from ui.families import report_panel
from ui.families.litxbench import pairings_overruled

CHIMERA = "demo-chimera-mixed"
LITX = "demo-litxbench-drop-meas30"


def rows_of(spec: dict) -> list[dict]:
    return [r for values in spec.get("datasets", {}).values() for r in values]


def review_sampled_blocks(db, run: str, blocks: int) -> dict[int, str]:
    """Review `blocks` documents the sample queue serves, overruling the first decision of each; {id: label}."""
    given = {}
    for _ in range(blocks):
        pick = next_sample(db, run)
        assert pick is not None
        view = load_view(db, run)
        for i, decision_id in enumerate(pick["decisions"]):
            d = view.decision(decision_id)
            labels = view.task.label_schemes[d["kind"]].labels
            label = next(lab for lab in labels if lab != d["judge"]) if i == 0 else d["judge"]
            add_review(db, run, decision_id, label, "ana", sampled=True)
            given[decision_id] = label
    return given


def blocks_to_every_stratum(plan: dict) -> int:
    """How many documents the sample queue serves before every stratum has a reviewed one (what an estimate needs):
    the take-all strata whole first, then one block of each other stratum (the `minimum` rule)."""
    take_all = [b for b in plan["blocks"] if b["stratum"] in plan["take_all"]]
    return len(take_all) + len({b["stratum"] for b in plan["blocks"]} - set(plan["take_all"]))


@pytest.fixture(scope="module")
def sampled(tmp_path_factory, demo_template):
    db = open_db(copy_of(demo_template, tmp_path_factory.mktemp("sampled") / "demo.db"))
    create_plan(db, CHIMERA, seed=3)
    (plan,) = plans(db, CHIMERA).values()
    given = review_sampled_blocks(db, CHIMERA, blocks_to_every_stratum(plan))
    return db, plan, given


def test_each_stratum_gets_a_confusion_matrix_of_its_reviewed_decisions(sampled):
    db, plan, given = sampled
    view = load_view(db, CHIMERA)
    report = build_report(view)
    stratum_of = {int(u): b["stratum"] for b in plan["blocks"] for u in b["units"]}
    judge = {i: view.decision(i)["judge"] for i in given}
    want = {h: Counter() for h in {stratum_of[i] for i in given}}
    for i, label in given.items():
        want[stratum_of[i]][(label, judge[i])] += 1
    figs = {f.title.removeprefix("Confusion: stratum "): f for f in report.figures if f.name.startswith(
        "confusion-stratum-")}
    assert set(figs) == set(want)
    for stratum, fig in figs.items():
        cells = Counter({(r["human"], r["judge"]): r["count"] for r in rows_of(fig.spec)})
        assert +cells == want[stratum]
    page = report_html(report)
    for stratum in want:
        assert f"Stratum {stratum}: audited (rows) vs judge (columns)" in page
    # the per-stratum table's cells add up to the stratum's reviewed decisions
    section = next(s for s in report.sections if s.title.startswith("2."))
    tables = [b for b in section.body if b.startswith("<table><thead><tr><th>audited \\ judge")]
    assert len(tables) == len(want)
    totals = sorted(sum(int(x) for x in re.findall(r"<td(?: class=\"num\")?>(\d+)</td>", t)) for t in tables)
    assert totals == sorted(sum(c.values()) for c in want.values())


def test_the_headline_shows_the_sample_estimate_and_its_bias(sampled):
    db, _, _ = sampled
    report = build_report(load_view(db, CHIMERA))
    headline = next(f for f in report.figures if f.name == "headline")
    series = {r["series"] for r in rows_of(headline.spec) if "series" in r}
    assert {"judge only", "audited", "estimated"} <= series
    est = report.data["sampling"][ALL_KINDS]["estimate"]  # the plan was made over all decision kinds
    first = next(iter(est.values()))
    drawn = [r for r in rows_of(headline.spec) if r.get("series") == "estimated" and r["label"] == first["label"]]
    assert [r["value"] for r in drawn] == [first["estimate"]]
    bias = next(f for f in report.figures if f.name == "bias")
    assert [r["value"] for r in rows_of(bias.spec) if r.get("label") == first["label"]] == [first["bias"]]


def test_litxbench_panel_counts_the_pairings_reviews_forced_and_forbade(tmp_path, demo_template):
    db = open_db(copy_of(demo_template, tmp_path / "demo.db"))
    view = load_view(db, LITX)
    pairs = [d for d in view.decisions() if d["kind"].endswith("_pair")]
    yes = [d for d in pairs if d["judge"] == "match"][:2]
    no = [d for d in pairs if d["judge"] == "no-match"][:3]
    assert len(yes) == 2 and len(no) == 3
    for d in yes[:1] + no:  # one pair forbidden, three forced; the second judged pair confirmed
        add_review(db, LITX, d["id"], "no-match" if d["judge"] == "match" else "match", "ana")
    add_review(db, LITX, yes[1]["id"], "match", "ana")
    view = load_view(db, LITX)
    assert pairings_overruled(view) == (3, 1)
    page = report_html(build_report(view, report_panel(view.task.name)))
    assert "Pairings forced by reviews (judge: no pair, reviewers: a pair): 3; pairings forbidden by reviews " \
           "(judge: a pair, reviewers: none): 1." in page


def test_the_headline_says_what_the_estimate_rests_on_in_the_estimates_own_words(sampled):
    db, _, _ = sampled
    report = build_report(load_view(db, CHIMERA))
    first = next(iter(report.data["sampling"][ALL_KINDS]["estimate"].values()))
    headline = next(s for s in report.sections if s.title.startswith("1."))
    assert any(f"from {first['documents']}." in b for b in headline.body)
    assert "sampled documents (of" in first["documents"]


def test_raw_agreement_shows_the_document_bootstrap_interval_its_caption_names(sampled):
    """Issue 39 point 5: the report printed the Wilson interval (decisions independent) under "bootstrap resampling
    documents"; it now prints the interval the caption names."""
    from audit.outputs.report import interval

    db, _, _ = sampled
    report = build_report(load_view(db, CHIMERA))
    hvj = report.data["agreement"]["human_vs_judge"]
    section = next(s for s in report.sections if s.title.startswith("4."))
    page = "".join(section.body)
    assert "bootstrap resampling documents" in page
    checked = 0
    for stats in hvj.values():
        cluster, wilson = stats.get("raw_agreement_cluster_ci"), stats.get("raw_agreement_ci")
        if cluster is None or wilson is None or interval(cluster, 3) == interval(wilson, 3):
            continue
        assert interval(cluster, 3) in page
        assert interval(wilson, 3) not in page
        checked += 1
    assert checked
