"""The partial audit's reads at scale (#38) give what reading every decision as `RunView.decisions()` gave.

`create_plan` reads decisions one document at a time (judge side only, the detail decoded when the family asks for
it) and `_blocks_state` reads only the reviewed decisions; the references below are the former reads, over every
decision of every demo run, after a seeded mix of sampled, hand-picked, conflicting and undone reviews.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from audit.effective import HUMAN_SOURCES
from audit.review.reviews import add_review
from audit.review.sampling import _blocks_state, create_plan, estimate, flatten, leaf_paths, load_plan, next_sample
from audit.store.database import open_db
from audit.views import load_view
from scoring.stats.sampling import Unit, build_plan
from tests.conftest import copy_of


def _reference_plan(view, seed: int):
    """The plan as `create_plan` built it from `view.decisions()` (before #38)."""
    decs = view.decisions()
    units = [Unit(str(d["id"]), d["doc"], d["judge"], {"decision": {k: d[k] for k in
                                                                     ("kind", "type", "left", "right", "judge",
                                                                      "detail")}}) for d in decs]
    return build_plan(units, lambda us: view.task.sampling_stratum([u.info["decision"] for u in us]), seed)


def _reference_blocks_state(view, plan):
    """`_blocks_state`'s sampled and certain documents from every decision's effective label (before #38)."""
    in_plan = {b.id for b in plan.blocks}
    unit_ids = {u for b in plan.blocks for u in b.units}
    sampled_reviews = {r[0] for r in view.db.execute("SELECT DISTINCT decision_id FROM run_reviews WHERE run_id = ? "
                                                     "AND sampled = 1", [view.id])}
    labelled: dict[str, list[bool]] = {}
    via_sample: dict[str, bool] = {}
    for d in view.decisions():
        if str(d["id"]) in unit_ids:
            labelled.setdefault(d["doc"], []).append(d["source"] in HUMAN_SOURCES)
            via_sample[d["doc"]] = via_sample.get(d["doc"], False) or d["id"] in sampled_reviews
    docs = [r[0] for r in view.db.execute("SELECT doc_id FROM documents WHERE run_id = ?", [view.id])]
    sampled, certain = set(), set()
    for doc in docs:
        if doc not in in_plan:
            certain.add(doc)
        elif all(labelled.get(doc, [False])):
            (sampled if via_sample.get(doc) else certain).add(doc)
    return sampled, certain


def _labels(view, decision: dict) -> list[str]:
    return list(view.task.label_schemes[decision["kind"]].labels)


def _review_mix(db, view, rng: random.Random) -> None:
    """Sample-queue documents reviewed whole (one left one decision short), hand-picked whole documents,
    conflicting reviewers and an undone label."""
    decs = view.decisions()
    for _ in range(2):
        pick = next_sample(db, view.name)
        if pick is None:
            break
        whole = len(pick["decisions"]) <= 40 and rng.random() < 0.7
        ids = pick["decisions"] if whole else pick["decisions"][:min(5, len(pick["decisions"]) - 1)]
        for i in ids:
            d = next(x for x in decs if x["id"] == i)
            add_review(db, view.name, i, rng.choice(_labels(view, d)), "ana", sampled=True)
    by_doc: dict[str, list[dict]] = {}
    for d in decs:
        by_doc.setdefault(d["doc"], []).append(d)
    smallest = sorted(by_doc, key=lambda doc: (len(by_doc[doc]), doc))[:8]  # a LitXBench paper has hundreds
    hand = rng.sample(smallest, min(3, len(smallest)))
    for n, doc in enumerate(hand):  # the first one adjudicated (a run may hold reviews that conflict with ana's)
        for d in by_doc[doc]:
            add_review(db, view.name, d["id"], rng.choice(_labels(view, d)), "ana",
                       role="adjudicator" if n == 0 else "reviewer")
    others = [d for d in decs if d["doc"] not in hand]
    for d in rng.sample(others, min(6, len(others))):
        add_review(db, view.name, d["id"], _labels(view, d)[0], "ben")
        add_review(db, view.name, d["id"], _labels(view, d)[-1], "cy")
    d = rng.choice(decs)
    add_review(db, view.name, d["id"], _labels(view, d)[0], "dee")
    add_review(db, view.name, d["id"], None, "dee")


@pytest.fixture(scope="module")
def demo_db(demo_template, tmp_path_factory):
    db = open_db(copy_of(demo_template, tmp_path_factory.mktemp("reads") / "demo.db"))
    yield db
    db.conn.close()


def _plannable(db) -> list[str]:
    runs = [r[0] for r in db.execute("SELECT name FROM runs ORDER BY id")]
    out = []
    for run in runs:
        view = load_view(db, run)
        if any(view.task.sampled_by(c) for c in view.task.headline):
            out.append(run)
    return out


def _one_per_family_and_judge(db) -> list[str]:
    """The first plannable run of each family and kind of judge (replayed answers, a fuzzy matcher, ...): the reads
    these tests compare depend on the family's counts and the judge's labels, not on which of a family's demo
    predictions were scored (CHIMERA's six demo runs are two kinds of judge)."""
    seen, out = set(), []
    for run in _plannable(db):
        task, spec = db.execute("SELECT task, judge_spec FROM runs WHERE name = ?", [run]).fetchone()
        if (key := (task, spec.split(":")[0])) not in seen:
            seen.add(key)
            out.append(run)
    return out


def test_every_demo_family_has_a_plannable_run(demo_db):
    tasks = {load_view(demo_db, r).task.name for r in _one_per_family_and_judge(demo_db)}
    assert {"chimera", "retrieval", "litxbench", "ideation"} <= tasks


def test_plan_and_sample_state_read_per_document_equal_the_reads_of_every_decision(demo_db):
    for n, run in enumerate(_one_per_family_and_judge(demo_db)):
        view = load_view(demo_db, run)
        create_plan(demo_db, run, seed=7 + n)
        plan = load_plan(demo_db, run)
        reference = _reference_plan(view, 7 + n)
        assert plan.blocks == reference.blocks, run
        assert reference.take_all <= plan.take_all, run
        _review_mix(demo_db, view, random.Random(n))
        view = load_view(demo_db, run)
        state = _blocks_state(view, plan)
        sampled, certain = state.sampled, state.certain
        ref_sampled, ref_certain = _reference_blocks_state(view, plan)
        assert (set(sampled), set(certain)) == (ref_sampled, ref_certain), run
        assert sampled or certain, run  # the mix reached the estimator
        estimate(demo_db, run)  # and the estimate reads them


def test_flatten_walks_the_counts_once_and_reads_what_every_path_walk_read():
    def per_path(counts, paths):  # the former flatten: one walk from the root per path
        vec = np.zeros(len(paths))
        for i, p in enumerate(paths):
            v = counts
            for k in p:
                v = v.get(k, {}) if isinstance(v, dict) else {}
            vec[i] = v if isinstance(v, int | float) else 0.0
        return vec

    counts = {"a": {"tp": 3, "fp": 1.5, "flag": True, "note": "x"}, "b": 2, "c": {"d": {"e": 7}}, "n": None}
    paths = [*leaf_paths(counts), ("a", "missing"), ("c",), ("c", "d"), ("b", "deeper"), ("zz",)]
    assert flatten(counts, paths).tolist() == per_path(counts, paths).tolist() == [
        3, 1.5, 1, 0, 2, 7, 0, 0, 0, 0, 0, 0]


def test_plan_queue_and_estimate_never_read_every_decision(demo_db, monkeypatch):
    """At 683k retrieval decisions `RunView.decisions()` held 2.4 GiB and took minutes (#38): the sample's
    reads go per document (plan) or through the reviewed decisions only (queue, estimate)."""
    from audit.views import RunView

    run = next(r for r in _plannable(demo_db) if load_view(demo_db, r).task.name == "retrieval")
    demo_db.execute("DELETE FROM sampling_plans WHERE run_id = (SELECT id FROM runs WHERE name = ?)", [run])

    def every_decision(self, doc=None):
        raise AssertionError("read every decision of the run")

    monkeypatch.setattr(RunView, "decisions", every_decision)
    create_plan(demo_db, run, seed=1)
    assert next_sample(demo_db, run) is not None
    assert estimate(demo_db, run)


def test_a_plans_strata_are_built_once():
    """`estimate` asked `Plan.stratum_of()` once per document: a fresh dict each time was quadratic."""
    plan = build_plan([Unit(str(i), f"doc{i % 5}", "match") for i in range(20)], lambda us: "s", 0)
    assert plan.stratum_of() is plan.stratum_of()
    assert dict(plan.stratum_of()) == {f"doc{i}": "s" for i in range(5)}
    assert plan.blocks_by_id() is plan.blocks_by_id()
    assert list(plan.blocks_by_id().values()) == list(plan.blocks)
    assert all(plan.blocks_by_id()[b.id] is b for b in plan.blocks)


def test_decisions_of_a_run_read_at_once_equal_each_decision_read_alone(demo_db):
    """`RunView.decisions()` gives unreviewed decisions one shared judge-label Effective: each row still equals the
    decision read alone (`RunView.decision`, its reviews read now), reviewed or not."""
    for run in _plannable(demo_db):
        view = load_view(demo_db, run)
        decs = view.decisions()
        reviewed = [d for d in decs if d["reviews"]]
        picked = reviewed[:40] + random.Random(3).sample(decs, min(60, len(decs)))
        for d in picked:
            alone = view.decision(d["id"])
            assert {k: alone[k] for k in ("effective", "source", "human", "judge", "detail")} == \
                {k: d[k] for k in ("effective", "source", "human", "judge", "detail")}, (run, d["id"])


def test_a_plan_is_decoded_once_and_a_plan_made_again_is_read_afresh(demo_db, monkeypatch):
    """`load_plan` keeps the decoded plan per database file and plan row (0.6 s a render at 100,000 abstracts, #38);
    a plan deleted and made again with another seed is read afresh, never served from the kept one."""
    from scoring.stats import sampling as stats_sampling

    run = _plannable(demo_db)[0]
    forget = "DELETE FROM sampling_plans WHERE run_id = (SELECT id FROM runs WHERE name = ?)"
    demo_db.execute(forget, [run])
    create_plan(demo_db, run, seed=11)
    decoded: list = []
    real = stats_sampling.Plan.from_json.__func__
    monkeypatch.setattr(stats_sampling.Plan, "from_json", classmethod(lambda cls, d: decoded.append(1) or real(cls, d)))
    first = load_plan(demo_db, run)
    assert load_plan(demo_db, run) is first and len(decoded) <= 1
    demo_db.execute(forget, [run])
    assert load_plan(demo_db, run) is None
    create_plan(demo_db, run, seed=12)
    again = load_plan(demo_db, run)
    assert again.seed == 12 and again is not first
    assert again.blocks == _reference_plan(load_view(demo_db, run), 12).blocks
