"""Which documents the single-run estimate recounts for `unseen_moves` (audit/review/movable.py): a bounded number
per stratum, so the cost of an estimate does not grow with the run (a recount is 0.3-2.3 ms a document)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as hs

from audit.review.movable import RECOUNTED_PER_STRATUM, documents_to_recount, leaves_a_review_can_move
from scoring.families import get_task
from scoring.stats.sampling import Unit, build_plan


@settings(max_examples=30, deadline=None)
@given(seed=hs.integers(0, 10_000), sizes=hs.lists(hs.integers(1, 600), min_size=1, max_size=4),
       n_sampled=hs.integers(0, 300))
def test_every_sampled_document_and_a_bounded_random_subset_of_each_sampled_stratum(seed, sizes, n_sampled):
    rng = random.Random(seed)
    units = [Unit(f"u{h}-{i}", f"d{h}-{i}", "match", {}) for h, n in enumerate(sizes) for i in range(n)]
    take_all = {"d0"} if len(sizes) > 1 and seed % 2 else set()
    plan = build_plan(units, lambda us: us[0].block.split("-")[0], seed, take_all=take_all)
    docs = [b.id for b in plan.blocks]
    sampled = set(rng.sample(docs, min(n_sampled, len(docs))))
    out = documents_to_recount(plan, sampled)
    assert sampled <= out
    for h, blocks in plan.strata().items():
        rest = {b.id for b in blocks} & out - sampled
        if h in plan.take_all:
            assert not rest
            continue
        first = [b.id for b in sorted(blocks, key=lambda b: b.rank)][:RECOUNTED_PER_STRATUM]
        assert {b.id for b in blocks} & out == set(first) | ({b.id for b in blocks} & sampled)
    assert len(out) <= len(sampled) + RECOUNTED_PER_STRATUM * len(plan.strata())


def test_litxbench_declares_no_unit_moves_and_is_never_recounted():
    """A LitXBench recount re-solves the paper's pairing (57 ms a paper): the family opts out, so nothing is
    recounted and its intervals keep the hurdle variance alone; a family that opts in is recounted."""
    litx, chimera = get_task("litxbench"), get_task("chimera")
    assert litx.sampling_unseen_moves is False and chimera.sampling_unseen_moves is True

    class Exploding:
        def __getattr__(self, name):
            raise AssertionError(f"recounted: {name}")

    assert leaves_a_review_can_move(litx, Exploding(), [("material_pair", "t", "a", "b")], {}) == set()


def test_skipping_the_judges_own_labelling_changes_no_movable_count(demo_template, tmp_path):
    """Invariant, on every demo run of a family with unit moves: a labelling equal to the judge's is not recounted
    (its counts are the judge's), and the movable counts are those of recounting every labelling."""
    import json
    import shutil

    from audit.store.database import open_db
    from audit.views import as_view

    db = open_db(shutil.copyfile(demo_template, tmp_path / "demo.db"))
    compared = 0
    for (run,) in db.execute("SELECT name FROM runs ORDER BY name").fetchall():
        view = as_view(db, run)
        if not view.task.sampling_unseen_moves:
            continue
        keys: dict[str, dict] = {}
        for d in view.decisions():
            keys.setdefault(d["doc"], {})[(d["kind"], d["type"], d["left"], d["right"])] = d["judge"]
        rows = db.execute("SELECT doc_id, payload, counts FROM documents WHERE run_id = ?", [view.id]).fetchall()
        for doc, payload, counts in [r for r in rows if r[0] in keys][:25]:
            payload, counts = json.loads(payload), json.loads(counts)
            every = leaves_a_review_can_move(view.task, payload, keys[doc], counts)
            assert leaves_a_review_can_move(view.task, payload, keys[doc], counts, judge_labels=keys[doc]) == every
            compared += 1
    assert compared >= 100, compared
