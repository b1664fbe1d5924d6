"""The expected order statistic under ties, built for every x at once (`metrics._inside_pmfs`), is bit-identical to
the one-x-at-a-time product it replaced (kept here as the reference): each review of a retrieval run computes several
medians, and on the BM25 demo (217 tied queries) one took 1.3 s, so a label waited 5-9 s to be saved."""

from __future__ import annotations

import bisect
import itertools
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.families.retrieval.metrics import _expected_order_statistic, median_of_counts


def reference(fixed, spread, j):
    """The former `_expected_order_statistic` (one x at a time), verbatim but for its docstring."""
    keys = sorted(fixed)
    cum = list(itertools.accumulate(fixed[k] for k in keys))
    if not spread:
        return float(keys[bisect.bisect_left(cum, j)])
    los = np.array([lo for lo, _ in spread], dtype=float)
    his = np.array([hi for _, hi in spread], dtype=float)
    widths = np.array([hi - lo + 1 for lo, hi in spread], dtype=float)
    size = len(spread) + 1

    def p_below(x, n_fixed_below):
        need = j - n_fixed_below
        if need <= 0:
            return 0.0
        inside = np.flatnonzero((los <= x) & (x < his))
        done = int(np.count_nonzero(his <= x))
        if not len(inside):
            return 1.0 if need > done else 0.0
        p = np.clip((x - los[inside] + 1) / widths[inside], 0.0, 1.0)
        part = np.zeros(len(p) + 1)
        part[0] = 1.0
        for i, pi in enumerate(p):
            part[1:i + 2] = part[1:i + 2] * (1 - pi) + part[:i + 1] * pi
            part[0] *= 1 - pi
        pmf = np.zeros(size)
        pmf[done:done + len(part)] = part
        return float(pmf[:need].sum())

    points = sorted({*keys, *(x for lo, hi in spread for x in range(lo, hi + 1))} | {0})
    total = 0.0
    for a, b in zip(points, [*points[1:], None], strict=True):
        i = bisect.bisect_right(keys, a)
        term = p_below(a, cum[i - 1] if i else 0)
        if b is None:
            break
        total += term * (b - a)
    return total


ranges = st.tuples(st.integers(1, 60), st.integers(1, 40)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=300, deadline=None)
@given(fixed=st.lists(st.integers(1, 120), max_size=12), spread=st.lists(ranges, max_size=14), data=st.data())
def test_bit_identical_to_the_one_x_at_a_time_product(fixed, spread, data):
    n = len(fixed) + len(spread)
    if n == 0:
        return
    j = data.draw(st.integers(1, n))
    assert _expected_order_statistic(Counter(fixed), spread, j) == reference(Counter(fixed), spread, j)


@pytest.mark.parametrize("seed", range(3))
def test_bit_identical_on_a_run_sized_input(seed):
    """250 queries, most tied over wide ranges that overlap (the BM25 demo's shape), both middle order statistics."""
    rng = random.Random(seed)
    fixed = Counter(rng.randint(1, 40) for _ in range(35))
    spread = [(lo, lo + rng.randint(1, 400)) for lo in (rng.randint(1, 200) for _ in range(215))]
    n = sum(fixed.values()) + len(spread)
    for j in (n // 2, n // 2 + 1):
        assert _expected_order_statistic(fixed, spread, j) == reference(fixed, spread, j)
    middle = (reference(fixed, spread, n // 2) + reference(fixed, spread, n // 2 + 1)) / 2
    assert median_of_counts(fixed, spread) == middle
