"""`BlockVectors`: a run's judge vectors stacked once for every estimate (#38: stacking 100,000 of them took 0.3 s a
call), and `difference_totals`' certain blocks summed from that matrix.

Invariant, on random populations (fractional vectors included, where the order of additions shows): the totals equal
the former computation to the last bit (every block stacked afresh, the certain blocks' human vectors stacked in the
judge's order), with the judge vectors given as a plain mapping or as `BlockVectors`, whether a certain block's
human vector is its judge vector itself or another array."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.stats.difference import BlockVectors, difference_totals


def _former_total(judge, strata, sampled, certain, lam):
    """`Totals.total` and the strata sizes as `difference_totals` computed them before `BlockVectors`."""
    blocks = list(judge)
    j_all = np.array([np.asarray(judge[b], dtype=float) for b in blocks])
    k = j_all.shape[1]
    is_certain = np.fromiter((b in certain for b in blocks), dtype=bool, count=len(blocks))
    total = lam * j_all[~is_certain].sum(axis=0)
    if certain:
        known = [np.asarray(certain[b], dtype=float) for b, c in zip(blocks, is_certain, strict=True) if c]
        total = total + np.array(known).reshape(-1, k).sum(axis=0)
    size = dict(Counter(strata[b] for b, c in zip(blocks, is_certain, strict=True) if not c))
    diffs: dict[str, list] = {}
    for b in blocks:
        if b in sampled:
            diffs.setdefault(strata[b], []).append(np.asarray(sampled[b], dtype=float) - lam * judge[b])
    for h in sorted(size):
        d = np.array(diffs.get(h, []), dtype=float).reshape(-1, k)
        if len(d):
            total += size[h] / len(d) * d.sum(axis=0)
    return total, size


@st.composite
def populations(draw):
    n = draw(st.integers(1, 40))
    k = draw(st.integers(1, 4))
    shared = [np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 0.5, 1 / 3, 0.1, 1 / 7]), min_size=k,
                                     max_size=k))) for _ in range(draw(st.integers(1, 5)))]
    for v in shared:
        v.flags.writeable = False
    blocks = [f"d{i}" for i in draw(st.permutations(range(n)))]
    judge = {b: shared[draw(st.integers(0, len(shared) - 1))] for b in blocks}
    strata = {b: draw(st.sampled_from("abc")) for b in blocks}
    role = {b: draw(st.sampled_from(["open", "sampled", "certain-same", "certain-other"])) for b in blocks}
    other = [np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 3.0, 0.25, 1 / 3]), min_size=k, max_size=k)))
             for _ in range(3)]
    given_order = draw(st.permutations(blocks))  # callers need not list them in the judge's order
    sampled = {b: other[i % 3] for i, b in enumerate(given_order) if role[b] == "sampled"}
    certain = {b: judge[b] if role[b] == "certain-same" else other[i % 3] for i, b in enumerate(given_order)
               if role[b].startswith("certain")}
    return judge, strata, sampled, certain


@settings(max_examples=150, deadline=None)
@given(populations(), st.sampled_from([1.0, 0.0, 0.37]), st.sampled_from(["plain", "jeffreys", "pooled"]))
def test_totals_equal_the_former_computation_to_the_last_bit(population, lam, variance):
    judge, strata, sampled, certain = population
    former, size = _former_total(judge, strata, sampled, certain, lam)
    plain = difference_totals(judge, strata, sampled, certain=certain, lam=lam, variance=variance)
    stacked = BlockVectors(judge)
    for _ in range(2):  # the second call reads the matrix stacked by the first
        tot = difference_totals(stacked, strata, sampled, certain=certain, lam=lam, variance=variance)
        assert {h: s.size for h, s in tot.strata.items()} == size
        assert np.array_equal(tot.judge, plain.judge)
        if tot.total is None:
            assert plain.total is None
            continue
        assert tot.total.tobytes() == plain.total.tobytes() == former.tobytes()
        assert (tot.cov is None and plain.cov is None) or np.array_equal(tot.cov, plain.cov)


def test_block_vectors_are_read_only_and_sum_in_order():
    vecs = BlockVectors({"a": np.array([0.1, 1.0]), "b": np.array([0.2, 2.0]), "c": np.array([0.3, 3.0])})
    for change in (lambda v: v.__setitem__("a", np.zeros(2)), lambda v: v.pop("a"), lambda v: v.update(a=1),
                   lambda v: v.clear(), lambda v: v.setdefault("d", 1), lambda v: v.__delitem__("a"),
                   lambda v: v.popitem()):
        with pytest.raises(TypeError, match="read-only"):
            change(vecs)
    assert list(vecs) == ["a", "b", "c"]
    assert vecs.in_order_sum().tobytes() == sum(vecs.values()).tobytes()
    assert vecs.stacked() is vecs.stacked()
    with pytest.raises(ValueError, match="certain block 'b'"):
        difference_totals(vecs, dict.fromkeys(vecs, "s"), {}, certain={"b": np.zeros(3)})
