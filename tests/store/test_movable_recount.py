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
