"""Ideation scores on hand-computed cases (ideation.md sections 2-5) and the invariants of the pairwise design."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import bootstrap

from scoring.families.ideation.model import Rating, Verdict
from scoring.families.ideation.scores import (
    absolute_scores,
    idea_totals,
    ideation_scores,
    normalise,
    pairwise_scores,
    position_bias,
    win_rates,
)
from scoring.stats.bootstrap import ratio_interval

POOLS = {"q": ("A", "B", "C")}
# A beats B in both orders; A-C: a tie (A first) then C wins (C first); B-C: B wins (B first), C first unreadable.
CALLS = [Verdict("q", "novelty", "A", "B", "first"), Verdict("q", "novelty", "B", "A", "second"),
         Verdict("q", "novelty", "A", "C", "tie"), Verdict("q", "novelty", "C", "A", "first"),
         Verdict("q", "novelty", "B", "C", "first"), Verdict("q", "novelty", "C", "B", "invalid")]


def test_outcomes_are_from_each_ideas_own_point_of_view():
    # S_A = +1 +1 +0 -1 = 1; S_B = -1 -1 +1 = -1; S_C = 0 +1 -1 = 0 (the invalid call counts for nobody)
    assert idea_totals(CALLS) == {("q", "novelty", "A"): [1, 4], ("q", "novelty", "B"): [-1, 3],
                                  ("q", "novelty", "C"): [0, 3]}


def test_the_winner_of_compare_j_i_is_credited_not_the_idea_shown_second():
    t = idea_totals([Verdict("q", "c", "B", "A", "first")])
    assert t[("q", "c", "B")] == [1, 1] and t[("q", "c", "A")] == [-1, 1]


def test_fixed_and_valid_bounds_by_hand():
    fixed = pairwise_scores(CALLS, POOLS, n_resamples=0)
    # 3 + S / (N - 1), N = 3
    assert {s: fixed[s]["novelty"]["score"] for s in "ABC"} == {"A": 3.5, "B": 2.5, "C": 3.0}
    assert {s: fixed[s]["novelty"]["n_invalid_calls"] for s in "ABC"} == {"A": 0, "B": 1, "C": 1}
    valid = pairwise_scores(CALLS, POOLS, bounds="valid", n_resamples=0)
    # 3 + 2 S / n: A 3 + 2/4, B 3 - 2/3, C 3
    assert valid["A"]["novelty"]["score"] == 3.5
    assert valid["B"]["novelty"]["score"] == pytest.approx(3 - 2 / 3, abs=1e-15)
    assert valid["C"]["novelty"]["score"] == 3.0


def test_normalise_bounds_and_undefined_cases():
    assert normalise(4, 4, 3) == 5 and normalise(-4, 4, 3) == 1  # +-2(N-1) map to 5 and 1
    assert normalise(2, 2, 2, "valid") == 5 and normalise(0, 0, 3, "valid") is None
    assert normalise(0, 0, 1) is None
    with pytest.raises(ValueError, match="bounds"):
        normalise(0, 1, 2, "other")


def test_position_bias_by_hand():
    b = position_bias(CALLS, POOLS)["novelty"]
    assert (b["pairs_compared"], b["pairs_lost_invalid"]) == (2, 1)
    assert (b["consistency_rate"], b["flip_rate"], b["partial_rate"]) == (0.5, 0.0, 0.5)
    # decisive calls: A>B (first slot), B<A (second slot), C>A (first), B>C (first): 3 of 4 won by the first slot
    assert (b["decisive_calls"], b["first_slot_wins"], b["first_slot_win_share"]) == (4, 3, 0.75)
    assert (b["tie_rate"], b["invalid_rate"]) == (1 / 6, 1 / 6)
    # Wilson 95% for 3/4, as scipy computes it
    from scipy.stats import binomtest
    ci = binomtest(3, 4).proportion_ci(method="wilson")
    assert b["first_slot_ci"] == pytest.approx([ci.low, ci.high], abs=1e-12)
    assert b["first_slot_p"] == pytest.approx(binomtest(3, 4, 0.5).pvalue)


def test_a_position_flip_in_a_pool_of_two():
    calls = [Verdict("q", "c", "A", "B", "first"), Verdict("q", "c", "B", "A", "first")]
    pools = {"q": ("A", "B")}
    p = pairwise_scores(calls, pools, n_resamples=0)
    assert p["A"]["c"]["score"] == 3 and p["B"]["c"]["score"] == 3  # +1 and -1 cancel, like a tie
    b = position_bias(calls, pools)["c"]
    assert b["flip_rate"] == 1 and b["consistency_rate"] == 0 and b["first_slot_win_share"] == 1


def test_pool_of_two_without_invalid_spans_1_to_5():
    calls = [Verdict("q", "c", "A", "B", "first"), Verdict("q", "c", "B", "A", "second")]
    p = pairwise_scores(calls, {"q": ("A", "B")}, n_resamples=0)
    assert (p["A"]["c"]["score"], p["B"]["c"]["score"]) == (5, 1)


def test_win_rates_count_decisive_calls_only():
    w = win_rates(CALLS)["novelty"]
    assert w["A"]["B"] == {"wins": 2, "losses": 0, "ties": 0, "win_rate": 1.0}
    assert w["A"]["C"] == {"wins": 0, "losses": 1, "ties": 1, "win_rate": 0.0}
    assert w["C"]["B"] == {"wins": 0, "losses": 1, "ties": 0, "win_rate": 0.0}


def test_absolute_mean_excludes_invalid_and_counts_absent_ratings_as_invalid():
    pools = {"q1": ("A", "B"), "q2": ("A", "B"), "q3": ("A",)}
    ratings = [Rating("q1", "A", "nov", 4), Rating("q1", "B", "nov", None), Rating("q2", "A", "nov", 2),
               Rating("q2", "B", "nov", 5)]  # q3/A has no rating at all
    a = absolute_scores(ratings, pools, n_resamples=0)
    assert a["A"]["nov"] == {"mean": 3.0, "ci": None, "n_valid": 2, "n_invalid": 1}
    assert a["B"]["nov"] == {"mean": 5.0, "ci": None, "n_valid": 1, "n_invalid": 1}


def test_a_system_missing_from_a_question_is_averaged_over_its_own_questions():
    pools = {"q1": ("A", "B"), "q2": ("A", "B", "C")}
    calls = [Verdict("q1", "c", "A", "B", "first"), Verdict("q1", "c", "B", "A", "second"),
             Verdict("q2", "c", "C", "A", "first"), Verdict("q2", "c", "A", "C", "second")]
    p = pairwise_scores(calls, pools, n_resamples=0)
    # q1 (N=2): A 3 + 2/1 = 5. q2 (N=3): A lost twice to C: 3 - 2/2 = 2. Mean 3.5
    assert p["A"]["c"]["score"] == 3.5 and p["A"]["c"]["n_questions"] == 2
    assert p["C"]["c"]["score"] == 4 and p["C"]["c"]["n_questions"] == 1
    # B: q1 3 - 2 = 1; q2 no call at all: fixed mode 3 (4 unasked calls count as invalid) -> mean 2
    assert p["B"]["c"]["score"] == 2 and p["B"]["c"]["n_invalid_calls"] == 4
    assert pairwise_scores(calls, pools, bounds="valid", n_resamples=0)["B"]["c"]["n_questions"] == 1


def test_single_idea_questions_are_skipped_with_a_note():
    pools = {"q1": ("A", "B"), "q2": ("A",)}
    calls = [Verdict("q1", "c", "A", "B", "tie"), Verdict("q1", "c", "B", "A", "tie")]
    out = ideation_scores(pools, None, calls, n_resamples=0)
    assert out["pairwise"]["A"]["c"]["n_questions"] == 1
    assert out["notes"] and "1 question has a single idea" in out["notes"][0]


def test_empty_subset_gives_empty_sections_and_undefined_rates():
    out = ideation_scores({"q": ("A", "B")}, [], [], n_resamples=0)
    assert (out["absolute"], out["pairwise"], out["position_bias"], out["win_rates"]) == ({}, {}, {}, {})
    assert out["summary"]["consistency_rate"] is None and out["summary"]["rating_invalid_rate"] is None
    named = ideation_scores({"q": ("A", "B")}, [], [], absolute_criteria=["nov"], pairwise_criteria=["nov"],
                            n_resamples=0)
    assert named["absolute"]["A"]["nov"] == {"mean": None, "ci": None, "n_valid": 0, "n_invalid": 1}
    assert named["pairwise"]["A"]["nov"]["score"] == 3 and named["pairwise"]["A"]["nov"]["n_invalid_calls"] == 2
    assert named["position_bias"]["nov"]["pairs_lost_invalid"] == 1
    assert named["position_bias"]["nov"]["consistency_rate"] is None


def test_ratio_ci_matches_scipy_percentile_bootstrap():
    rng = np.random.default_rng(1)
    x = rng.integers(1, 6, size=40).astype(float)
    ours = ratio_interval(x, np.ones_like(x), n_resamples=20000)
    ref = bootstrap((x,), np.mean, n_resamples=20000, method="percentile", rng=np.random.default_rng(2))
    assert ours == pytest.approx([ref.confidence_interval.low, ref.confidence_interval.high], abs=0.06)
    assert ratio_interval(x, np.ones_like(x)) == ratio_interval(x, np.ones_like(x))  # seeded
    assert ratio_interval([1.0], [1.0]) is None


def test_bootstrap_resamples_questions_not_ratings():
    # two questions: one with many ratings of 5, one with a single 1 -> a resample can be all-5 or all-1
    ci = ratio_interval([50.0, 1.0], [10, 1], n_resamples=4000)
    assert ci[0] == 1.0 and ci[1] == 5.0


verdict_st = st.sampled_from(["first", "second", "tie"])


@st.composite
def pools_and_calls(draw, invalid: bool = False):
    n = draw(st.integers(2, 6))
    systems = [f"s{i}" for i in range(n)]
    words = ["first", "second", "tie", "invalid"] if invalid else ["first", "second", "tie"]
    calls = [Verdict("q", "c", a, b, draw(st.sampled_from(words))) for a in systems for b in systems if a != b]
    return {"q": tuple(systems)}, calls


@settings(max_examples=60, derandomize=True, deadline=None)
@given(pools_and_calls())
def test_zero_sum_and_a_pool_without_invalid_calls_averages_exactly_3(data):
    pools, calls = data
    totals = idea_totals(calls)
    assert sum(s for s, _ in totals.values()) == 0
    assert all(n == 2 * (len(pools["q"]) - 1) for _, n in totals.values())
    for bounds in ("fixed", "valid"):  # every idea has all its calls, so both modes agree
        p = pairwise_scores(calls, pools, bounds=bounds, n_resamples=0)
        assert np.mean([p[s]["c"]["score"] for s in pools["q"]]) == pytest.approx(3, abs=1e-12)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(pools_and_calls(invalid=True), st.data())
def test_both_orders_cancel_a_pure_position_flip(data, draw):
    """A pair whose two calls pick the same slot scores exactly like a pair judged a tie twice."""
    pools, calls = data
    systems = pools["q"]
    a, b = draw.draw(st.sampled_from([(x, y) for x in systems for y in systems if x < y]))
    slot = draw.draw(st.sampled_from(["first", "second"]))

    def with_pair(v_ab, v_ba):
        out = [c for c in calls if {c.first, c.second} != {a, b}]
        return out + [Verdict("q", "c", a, b, v_ab), Verdict("q", "c", b, a, v_ba)]

    for bounds in ("fixed", "valid"):
        flipped = pairwise_scores(with_pair(slot, slot), pools, bounds=bounds, n_resamples=0)
        tied = pairwise_scores(with_pair("tie", "tie"), pools, bounds=bounds, n_resamples=0)
        assert flipped == tied


@settings(max_examples=40, derandomize=True, deadline=None)
@given(pools_and_calls(invalid=True))
def test_fixed_mode_keeps_the_pool_mean_at_3_even_with_invalid_calls(data):
    pools, calls = data
    p = pairwise_scores(calls, pools, n_resamples=0)
    assert np.mean([p[s]["c"]["score"] for s in pools["q"]]) == pytest.approx(3, abs=1e-12)
    b = position_bias(calls, pools)["c"]
    n = len(pools["q"])
    assert b["pairs_compared"] + b["pairs_lost_invalid"] == n * (n - 1) // 2
    assert b["consistent"] + b["flips"] + b["partial"] == b["pairs_compared"]
