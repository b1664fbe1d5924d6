"""The sampled median's anytime interval (scoring/stats/quantile.py, `median_estimates`): zero width at a full
review, it holds the point and the fixed-n interval, and under "stop once the interval is narrow enough" it covers
the full-review median at least as often as the fixed-n bootstrap interval does under the same rule."""

from __future__ import annotations

import random
import statistics

import pytest

from scoring.stats.quantile import ANYTIME_METHOD, median_estimates


def point(x: float):
    return ([x], [1.0])


def _population(seed: int, n: int):
    """Judge ranks 1-60; the human's is 1-15 lower for 60% of blocks (accepted candidates above the gold)."""
    rng = random.Random(seed)
    judge, human = {}, {}
    for i in range(n):
        j = rng.randint(1, 60)
        judge[f"b{i}"] = point(j)
        human[f"b{i}"] = point(max(1, j - (rng.randint(1, 15) if rng.random() < 0.6 else 0)))
    return judge, human, {b: "all" for b in judge}


@pytest.mark.parametrize("seed", range(5))
def test_full_review_gives_zero_width_at_the_exact_median(seed):
    judge, human, strata = _population(seed, 41 + seed)
    fixed, anytime = median_estimates(judge, strata, human, planned_n=30)
    truth = statistics.median(v[0][0] for v in human.values())
    assert fixed.estimate == anytime.estimate == truth
    assert anytime.ci == (truth, truth)


@pytest.mark.parametrize("seed", range(8))
def test_anytime_interval_holds_the_point_and_the_fixed_n_interval(seed):
    judge, human, strata = _population(seed, 200)
    rng = random.Random(seed)
    sample = rng.sample(list(judge), rng.randint(30, 120))
    fixed, anytime = median_estimates(judge, strata, {b: human[b] for b in sample}, n_boot=200, seed=seed,
                                      planned_n=50)
    assert fixed.ci is not None and anytime.ci is not None, fixed.note
    assert anytime.method == ANYTIME_METHOD and anytime.estimate == fixed.estimate
    assert anytime.ci[0] <= fixed.ci[0] <= fixed.estimate <= fixed.ci[1] <= anytime.ci[1]
    assert anytime.ci[1] - anytime.ci[0] > 0


def test_withheld_below_the_minimum_sample_in_both():
    judge, human, strata = _population(1, 100)
    fixed, anytime = median_estimates(judge, strata, {b: human[b] for b in list(judge)[:20]}, planned_n=30)
    assert fixed.ci is None and anytime.ci is None and anytime.note.startswith("insufficient reviews")


def _stopped_coverage(which: int, target: float, populations: int = 15, repeats: int = 4) -> float:
    """Share of runs whose interval (0 fixed-n, 1 anytime) covers the full-review median at the stop: random small
    populations of 100 blocks, draws in a random order (iid draws without replacement), stop at the first n ≥ 30
    (in steps of 3) where the interval's half-width is at most `target`."""
    covered = runs = 0
    for p in range(populations):
        judge, human, strata = _population(1000 + p, 100)
        truth = statistics.median(v[0][0] for v in human.values())
        for r in range(repeats):
            order = random.Random(p * 10 + r).sample(list(judge), len(judge))
            for n in range(30, len(order) + 1, 3):
                est = median_estimates(judge, strata, {b: human[b] for b in order[:n]}, n_boot=100, seed=n,
                                       planned_n=30)[which]
                if est.ci is not None and (est.ci[1] - est.ci[0]) / 2 <= target:
                    break
            runs += 1
            covered += est.ci is not None and est.ci[0] <= truth <= est.ci[1]
    return covered / runs


def test_optional_stopping_coverage_of_the_anytime_interval_at_least_the_fixed_ns():
    fixed, anytime = _stopped_coverage(0, target=3.0), _stopped_coverage(1, target=3.0)
    assert anytime >= fixed
    assert anytime >= 0.9
