"""The stratified PPI median (scoring/stats/quantile.py): exact at full review, none without reviews, interval
from the stratified bootstrap, and close to the truth on average."""

from __future__ import annotations

import random
import statistics

import pytest

from scoring.stats.quantile import median_estimate, median_of_cdf


def point(x: float):
    return ([x], [1.0])


def _population(seed: int, n: int = 120):
    rng = random.Random(seed)
    judge, human, strata = {}, {}, {}
    for i in range(n):
        b = f"b{i}"
        j = rng.randint(1, 200)
        judge[b] = point(j)
        human[b] = point(max(1, j - (rng.randint(0, 6) if rng.random() < 0.6 else 0)))
        strata[b] = "low" if j <= 50 else "high"
    return judge, human, strata


@pytest.mark.parametrize("n", [7, 8, 51])
def test_full_review_of_single_valued_blocks_is_statistics_median(n):
    judge, human, strata = _population(n, n)
    est = median_estimate(judge, strata, human)
    assert est.method == "exact"
    assert est.estimate == statistics.median(v[0][0] for v in human.values())
    assert est.ci == (est.estimate, est.estimate)


def test_hand_reviewed_blocks_count_exactly_and_all_known_is_exact():
    judge, human, strata = _population(1, 40)
    blocks = list(judge)
    est = median_estimate(judge, strata, {b: human[b] for b in blocks[:25]},
                          certain={b: human[b] for b in blocks[25:]})
    assert est.method == "exact" and est.estimate == statistics.median(v[0][0] for v in human.values())


def test_no_review_gives_no_estimate():
    judge, _, strata = _population(2)
    est = median_estimate(judge, strata, {})
    assert est.estimate is None and est.ci is None and est.note.startswith("insufficient reviews")


def test_uniform_tie_blocks_median_of_the_mixture():
    # two blocks, each uniform over its ranks: the mixture's lower and upper halves meet between 2 and 3
    cdf_grid = [1.0, 2.0, 3.0, 4.0]
    import numpy as np

    f = np.array([0.25, 0.5, 0.75, 1.0])
    assert median_of_cdf(f, np.array(cdf_grid)) == 2.5


def test_point_estimate_close_to_the_truth_and_interval_covers_mostly():
    judge, human, strata = _population(3, 300)
    truth = statistics.median(v[0][0] for v in human.values())
    blocks = list(judge)
    errs, covered, refused = [], 0, 0
    rounds = 60
    for r in range(rounds):
        rng = random.Random(100 + r)
        by_stratum: dict[str, list[str]] = {}
        for b in blocks:
            by_stratum.setdefault(strata[b], []).append(b)
        sample = [b for bs in by_stratum.values() for b in rng.sample(bs, max(2, len(bs) // 3))]
        est = median_estimate(judge, strata, {b: human[b] for b in sample}, seed=r, n_boot=300)
        errs.append(est.estimate - truth)
        if est.ci is None:  # no reviewed block moved F̂ at the median: refused, said so
            assert "at the median" in est.note
            refused += 1
            continue
        covered += est.ci[0] <= truth <= est.ci[1]
    se = statistics.stdev(errs) / rounds ** 0.5
    assert abs(statistics.fmean(errs)) <= 4 * se + 1.0
    assert refused <= rounds // 5  # 10 of 60: moves of 0-6 ranks, a third reviewed, often none across the median
    assert covered / (rounds - refused) >= 0.85


def test_an_interval_resting_on_a_thin_stratum_takes_the_t_correction():
    """Issue 39 point 4: the bootstrap alone knows no t correction, so a median whose uncertainty sits in a stratum
    of 5 reviews was covered in 93 of these 150 rounds (0.62); widened to Woodruff's interval at the Satterthwaite
    degrees of freedom, more (still short of 0.95: 5 reviews are thin, which the interval now shows by its width)."""
    rng = random.Random(5)
    judge, human, strata = {}, {}, {}
    for i in range(300):
        j = rng.randint(60, 140) if i < 100 else rng.randint(1, 200)
        judge[f"b{i}"] = point(j)
        human[f"b{i}"] = point(max(1, j + round(rng.gauss(0, 40)))) if i < 100 else point(j)
        strata[f"b{i}"] = "thin" if i < 100 else "calm"
    truth = statistics.median(v[0][0] for v in human.values())
    thin, calm = [b for b in judge if strata[b] == "thin"], [b for b in judge if strata[b] == "calm"]
    rounds, covered, refused = 150, 0, 0
    for r in range(rounds):
        draw = random.Random(100 + r)
        sample = draw.sample(thin, 5) + draw.sample(calm, 25)
        est = median_estimate(judge, strata, {b: human[b] for b in sample}, seed=r, n_boot=300, min_differing=0)
        if est.ci is None:  # no reviewed block moved F̂ at the median
            assert "at the median" in est.note
            refused += 1
            continue
        covered += est.ci[0] <= truth <= est.ci[1]
    assert refused <= rounds // 10
    assert covered / (rounds - refused) >= 0.72
