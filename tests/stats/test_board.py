"""Board statistics (`scoring.stats.board`): exact at full review, paired differences, rank sets, coverage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from scoring.stats.board import (
    Board,
    PairDifference,
    board_estimate,
    competition_ranks,
    joint_vectors,
    rank_sets,
    rank_sets_listed,
    settled,
)
from scoring.stats.difference import difference_totals, unseen_moves
from scoring.stats.estimators import Estimate, metric_estimate


def f1(v: np.ndarray) -> float:
    tp, fp, fn = v
    return 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else 0.0


def simulate(rng: np.random.Generator, n_docs: int, systems: dict[str, float], judge_error: float):
    """Per system and document (tp, fp, fn) under the humans (truth) and under a judge that flips a share of
    decisions; the systems share each document's difficulty, so their residuals correlate."""
    human, judge = {s: {} for s in systems}, {s: {} for s in systems}
    for d in range(n_docs):
        hard = rng.random()
        for s, skill in systems.items():
            n = 6
            hits = rng.binomial(n, max(0.05, min(0.95, skill - 0.3 * hard)))
            h = np.array([hits, n - hits, n - hits], dtype=float)
            flips = rng.binomial(hits, judge_error)  # the judge rejects true matches
            j = h + np.array([-flips, flips, flips])
            human[s][f"d{d}"], judge[s][f"d{d}"] = h, j
    return human, judge


def board_of(human, judge, sampled_docs, strata=None):
    docs = list(joint_vectors(judge)[0])
    strata = strata or {d: "all" for d in docs}
    sampled = {s: {d: human[s][d] for d in sampled_docs} for s in human}
    return board_estimate(judge, strata, sampled, {s: f1 for s in human}), None


def test_a_full_review_is_exact_with_point_intervals_and_single_ranks():
    rng = np.random.default_rng(0)
    human, judge = simulate(rng, 40, {"A": 0.8, "B": 0.6, "C": 0.4}, 0.2)
    board, _ = board_of(human, judge, list(joint_vectors(human)[0]))
    for s, e in board.per_system.items():
        truth = f1(sum(human[s].values()))
        assert e.method == "exact" and e.estimate == pytest.approx(truth) and e.ci == (e.estimate, e.estimate)
        assert e.judge_only == pytest.approx(f1(sum(judge[s].values())))
    assert all(p.simultaneous.ci[0] == p.simultaneous.ci[1] for p in board.pairs)
    assert board.rank_sets == {s: (r, r) for s, r in board.rank_audited.items()}
    assert sorted(board.rank_audited.values()) == [1, 2, 3]


def test_the_difference_interval_uses_the_pairing():
    """Two systems that share their documents' difficulty: the difference's SE is below what independent samples
    of the two would give (sqrt of the sum of variances)."""
    rng = np.random.default_rng(1)
    human, judge = simulate(rng, 300, {"A": 0.7, "B": 0.65}, 0.25)
    docs = list(joint_vectors(human)[0])
    sample = list(rng.choice(docs, 80, replace=False))
    board, _ = board_of(human, judge, sample)
    a, b = board.per_system["A"], board.per_system["B"]
    (pair,) = board.pairs
    assert pair.estimate.se is not None and a.se and b.se
    assert pair.estimate.se < np.sqrt(a.se**2 + b.se**2)
    assert pair.estimate.estimate == pytest.approx(a.estimate - b.estimate)


def _exact(d: float) -> Estimate:
    return Estimate(d, (d, d), 0.0, d, 1, 1, 1, "exact")


def test_ranks_and_rank_sets():
    assert competition_ranks({"A": 0.5, "B": 0.7, "C": 0.5}, higher_is_better=True) == {"A": 2, "B": 1, "C": 2}
    assert competition_ranks({"A": 3.0, "B": 1.0}, higher_is_better=False) == {"A": 2, "B": 1}
    # B surely above A and C; A vs C unsettled
    iv = {("A", "B"): (-0.3, -0.1), ("A", "C"): (-0.05, 0.1), ("B", "C"): (0.1, 0.4)}
    assert rank_sets(["A", "B", "C"], iv) == {"A": (2, 3), "B": (1, 1), "C": (2, 3)}
    # the same with lower is better: the signs turn
    assert rank_sets(["A", "B", "C"], iv, higher_is_better=False) == {"A": (1, 2), "B": (3, 3), "C": (1, 2)}
    # an exact tie shares the ranks it spans
    assert rank_sets(["A", "B"], {("A", "B"): (0.0, 0.0)}) == {"A": (1, 2), "B": (1, 2)}


def test_no_ranks_while_a_system_or_a_pair_is_unknown():
    """Ranks among fewer systems would read as places on the whole board (the one rule every board surface calls)."""
    assert competition_ranks({"A": 0.5, "B": None, "C": 0.7}, higher_is_better=True) is None
    iv = {("A", "B"): (-0.3, -0.1), ("A", "C"): None, ("B", "C"): (0.1, 0.4)}
    assert rank_sets(["A", "B", "C"], iv) is None
    assert rank_sets_listed(rank_sets(["A", "B"], {("A", "B"): (0.1, 0.2)})) == {"A": [1, 1], "B": [2, 2]}


def test_equal_values_summed_in_another_order_tie_everywhere():
    """(0.1+0.2+0.3)/3 and (0.3+0.2+0.1)/3 differ in the last bits: an exact review ranked the two systems 1 and 2,
    gave them one-rank rank sets and said "A > B holds"."""
    a, b = (0.1 + 0.2 + 0.3) / 3, (0.3 + 0.2 + 0.1) / 3
    assert a != b
    assert competition_ranks({"A": a, "B": b}, higher_is_better=True) == {"A": 1, "B": 1}
    assert rank_sets(["A", "B"], {("A", "B"): (a - b, a - b)}) == {"A": (1, 2), "B": (1, 2)}
    board = Board(["A", "B"], {}, [PairDifference("A", "B", _exact(a - b), _exact(a - b))], {"A": 1, "B": 1},
                  {"A": 1, "B": 2}, {"A": (1, 2), "B": (1, 2)}, True, 0.95)
    assert settled(board) == ["A and B tie"]


def test_settled_says_which_adjacent_pair_holds():
    rng = np.random.default_rng(2)
    human, judge = simulate(rng, 60, {"A": 0.95, "B": 0.6, "C": 0.2}, 0.1)
    human["D"], judge["D"] = human["C"], judge["C"]
    board, _ = board_of(human, judge, list(joint_vectors(human)[0]))
    assert settled(board) == ["A > B holds", "B > C holds", "C and D tie"]
    few = board_of(human, judge, list(joint_vectors(human)[0])[:5])[0]
    assert all("no interval" in w or "not settled" in w for w in settled(few))


@given(hs.integers(0, 2**31 - 1))
@settings(max_examples=25, deadline=None)
def test_estimates_equal_the_single_system_estimator(seed):
    """Each system's board estimate is the one-system difference estimator on its own vectors (same sample, same
    strata): the board never shows a system a number its own run would not under that plan."""
    rng = np.random.default_rng(seed)
    human, judge = simulate(rng, 50, {"A": 0.7, "B": 0.5}, 0.2)
    docs = list(joint_vectors(human)[0])
    sample = list(rng.choice(docs, 35, replace=False))
    board, _ = board_of(human, judge, sample)
    for s in human:
        own = difference_totals(judge[s], {d: "all" for d in docs}, {d: human[s][d] for d in sample},
                                variance="jeffreys")
        e = metric_estimate(own, f1)
        got = board.per_system[s]
        assert got == e


@given(hs.integers(0, 2**31 - 1), hs.integers(20, 50))
@settings(max_examples=25, deadline=None)
def test_the_differences_alone_are_the_differences_of_the_whole_board(seed, n):
    """`per_system=False` (a caller that estimates each system on its own population) gives the same pairs and rank
    sets, to the last digit, and no per-system numbers to misread."""
    rng = np.random.default_rng(seed)
    human, judge = simulate(rng, 50, {"A": 0.7, "B": 0.6, "C": 0.5}, 0.2)
    docs = list(joint_vectors(human)[0])
    sample = [str(d) for d in rng.choice(docs, n, replace=False)]
    sampled = {s: {d: human[s][d] for d in sample} for s in human}
    strata = {d: "all" for d in docs}
    whole = board_estimate(judge, strata, sampled, {s: f1 for s in human})
    alone = board_estimate(judge, strata, sampled, {s: f1 for s in human}, per_system=False)
    assert alone.pairs == whole.pairs and alone.rank_sets == whole.rank_sets
    assert alone.per_system == {} and alone.rank_judge is None and alone.rank_audited is None


def test_coverage_of_differences_on_a_known_truth():
    """Seeded simulation: the nominal 95% difference interval covers the true difference in most rounds (a quick
    check; bench/board_coverage.py measures it with its binomial interval)."""
    rng = np.random.default_rng(3)
    covered = total = 0
    for _ in range(60):
        human, judge = simulate(rng, 200, {"A": 0.7, "B": 0.6}, 0.3)
        truth = f1(sum(human["A"].values())) - f1(sum(human["B"].values()))
        docs = list(joint_vectors(human)[0])
        board, _ = board_of(human, judge, list(rng.choice(docs, 60, replace=False)))
        ci = board.pairs[0].estimate.ci
        if ci is not None:
            total += 1
            covered += ci[0] <= truth <= ci[1]
    assert total >= 50 and covered / total >= 0.85


def test_each_systems_gradient_once_gives_the_numbers_of_the_whole_numerical_gradient():
    """board_estimate linearises every system and every pair with each system's gradient, taken once: the estimates,
    standard errors and intervals are those of the estimator differentiating each metric and each difference over
    the whole joint vector, and those of each system alone."""
    rng = np.random.default_rng(5)
    human, judge = simulate(rng, 200, {"A": 0.7, "B": 0.6, "C": 0.5}, 0.2)
    docs = list(joint_vectors(human)[0])
    strata = {d: "even" if i % 2 else "odd" for i, d in enumerate(docs)}
    sample = list(rng.choice(docs, 70, replace=False))
    board = board_estimate(judge, strata, {s: {d: human[s][d] for d in sample} for s in human},
                           {s: f1 for s in human})
    joint_judge, slices = joint_vectors(judge)
    joint_human = joint_vectors(human)[0]
    joint = difference_totals(joint_judge, strata, {d: joint_human[d] for d in sample}, variance="jeffreys")
    for p in board.pairs:
        whole = metric_estimate(joint, lambda t, a=p.a, b=p.b: f1(t[slices[a]]) - f1(t[slices[b]]), bounds=None)
        assert p.estimate.estimate == pytest.approx(whole.estimate, rel=1e-12)
        assert p.estimate.se == pytest.approx(whole.se, rel=1e-6)
        assert p.estimate.ci == pytest.approx(whole.ci, rel=1e-6)
    for s, e in board.per_system.items():
        own = metric_estimate(difference_totals(judge[s], strata, {d: human[s][d] for d in sample},
                                                variance="jeffreys"), f1)
        assert e.estimate == pytest.approx(own.estimate, rel=1e-12)
        assert e.se == pytest.approx(own.se, rel=1e-6) and e.ci == pytest.approx(own.ci, rel=1e-6)


def test_unseen_moves_adds_a_jeffreys_rate_of_unit_moves_to_counts_no_sampled_block_moved():
    # one stratum of 10 blocks, 4 sampled; count 0 moved in a sampled block, count 1 can move in 5 blocks (2 of them
    # sampled) but moved in none, count 2 can move nowhere
    judge = {f"b{i}": np.array([3.0, 1.0, 2.0]) for i in range(10)}
    strata = dict.fromkeys(judge, "h")
    sampled = {"b0": np.array([2.0, 1.0, 2.0]), "b1": np.array([3.0, 1.0, 2.0]), "b2": np.array([3.0, 1.0, 2.0]),
               "b3": np.array([3.0, 1.0, 2.0])}
    movable = {b: np.array([True, i in (0, 1, 5, 6, 7), False]) for i, b in enumerate(judge)}
    tot = difference_totals(judge, strata, sampled, variance="jeffreys")
    out = unseen_moves(tot, judge, strata, sampled, movable)
    m, big_m = 4, 10
    rate = 5 / big_m * 0.5 / (2 + 1)  # share of blocks where it can move · Jeffreys ½/(sampled movable + 1)
    expected = big_m ** 2 * (1 - m / big_m) / m * m / (m - 1) * rate
    added = out.cov - tot.cov
    assert added[1, 1] == pytest.approx(expected)
    assert np.count_nonzero(added) == 1  # the seen count and the count that cannot move get nothing
    assert np.array_equal(out.total, tot.total)
    assert sum(c for c, _ in out.parts.values()) == pytest.approx(out.cov)
    # the estimate says so, per stratum (`estimate`'s "strata")
    assert out.strata["h"].assumption == (tot.strata["h"].assumption + "; plus unit moves at a Jeffreys rate on 1 "
                                          "count some of its blocks can move but none of its sampled blocks moved")
    nothing = unseen_moves(tot, judge, strata, sampled, dict.fromkeys(judge, np.zeros(3, dtype=bool)))
    assert nothing.strata == tot.strata and np.array_equal(nothing.cov, tot.cov)
    # movable named for some blocks only (the sampled ones among them): the share is theirs, 4 of 6 here
    some = {b: movable[b] for b in ("b0", "b1", "b2", "b3", "b5", "b6")}
    part = unseen_moves(tot, judge, strata, sampled, some).cov - tot.cov
    assert part[1, 1] == pytest.approx(expected / rate * (4 / 6 * 0.5 / (2 + 1)))


@settings(max_examples=30, deadline=None)
@given(seed=hs.integers(0, 10_000), n=hs.integers(30, 60))
def test_unseen_moves_only_widens_and_a_full_review_stays_exact(seed, n):
    rng = np.random.default_rng(seed)
    human, judge = simulate(rng, 60, {"a": 0.7, "b": 0.6}, 0.05)
    movable = {s: {d: np.array([True, True, True]) for d in judge[s]} for s in judge}
    strata = {d: ("x" if i % 2 else "y") for i, d in enumerate(judge["a"])}
    docs = [f"d{i}" for i in rng.choice(60, n, replace=False)]
    sampled = {s: {d: human[s][d] for d in docs} for s in human}
    metrics = {s: f1 for s in human}
    plain = board_estimate(judge, strata, sampled, metrics)
    floored = board_estimate(judge, strata, sampled, metrics, movable=movable)
    for s in human:
        assert floored.per_system[s].estimate == plain.per_system[s].estimate
        if plain.per_system[s].se is not None:
            assert floored.per_system[s].se >= plain.per_system[s].se - 1e-15
    for p, q in zip(plain.pairs, floored.pairs, strict=True):
        if p.estimate.se is not None:
            assert q.estimate.se >= p.estimate.se - 1e-15
    everything = {s: dict(human[s]) for s in human}
    full = board_estimate(judge, strata, everything, metrics, movable=movable)
    assert all(e.ci[0] == e.ci[1] for e in full.per_system.values())
    assert all(p.simultaneous.ci[0] == p.simultaneous.ci[1] for p in full.pairs)
