"""The `mean` tie policy is the expected figure over every order within the ties, checked by enumerating them."""

import itertools
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.families.retrieval.metrics import expected_median, rank_range, summarise
from scoring.families.retrieval.model import HITS_AT


def _brute(ranges: list[tuple[int, int]]) -> dict:
    """Every figure averaged over all combinations of ranks (each query's rank uniform on its range)."""
    combos = list(itertools.product(*[range(lo, hi + 1) for lo, hi in ranges]))
    out = {"mr": statistics.fmean(statistics.fmean(c) for c in combos),
           "mrr": statistics.fmean(statistics.fmean(1 / r for r in c) for c in combos),
           "median_rank": statistics.fmean(statistics.median(c) for c in combos)}
    for k in HITS_AT:
        out[f"hits@{k}"] = statistics.fmean(statistics.fmean(r <= k for r in c) for c in combos)
    return out


blocks = st.tuples(st.integers(0, 12), st.integers(0, 4))  # (above, tied)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(blocks, min_size=1, max_size=5))
def test_mean_policy_is_the_exact_expectation_over_tie_orders(queries):
    ranges = [rank_range(a, t, "mean") for a, t in queries]
    got, want = summarise(ranges), _brute(ranges)
    for figure, value in want.items():
        assert got[figure] == pytest.approx(value, abs=1e-12), figure


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(blocks, min_size=1, max_size=6))
def test_optimistic_and_pessimistic_bound_the_mean_policy(queries):
    by = {p: summarise([rank_range(a, t, p) for a, t in queries]) for p in ("optimistic", "mean", "pessimistic")}
    for k in HITS_AT:
        assert by["pessimistic"][f"hits@{k}"] <= by["mean"][f"hits@{k}"] + 1e-12
        assert by["mean"][f"hits@{k}"] <= by["optimistic"][f"hits@{k}"] + 1e-12
    assert by["optimistic"]["median_rank"] <= by["mean"]["median_rank"] + 1e-12
    assert by["mean"]["median_rank"] <= by["pessimistic"]["median_rank"] + 1e-12


def test_hits_at_1_of_a_tied_gold_is_its_chance_to_come_first():
    # the case in small: a gold tied with 9 others at the top has a 1 in 10 chance of rank 1, where the
    # rank of the mean (5.5) would say never
    assert summarise([rank_range(0, 9, "mean")])["hits@1"] == pytest.approx(0.1)
    assert summarise([rank_range(0, 9, "mean")])["mrr"] == pytest.approx(sum(1 / r for r in range(1, 11)) / 10)


def test_large_blocks_use_the_closed_form_reciprocal():
    got = summarise([rank_range(3, 5000, "mean")])["mrr"]
    assert got == pytest.approx(sum(1 / r for r in range(4, 5005)) / 5001, rel=1e-12)
    assert expected_median([(1, 1), (2, 2), (3, 3000)]) == pytest.approx(2)
