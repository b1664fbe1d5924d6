"""The one cluster bootstrap (scoring/stats/bootstrap.py) and the one Wilson interval (scoring/stats/intervals.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from scoring.stats.bootstrap import percentile_interval, ratio_interval, resampled_sums
from scoring.stats.intervals import wilson_interval


def _clusters(n_types: int, n_clusters: int, width: int, seed: int = 0) -> np.ndarray:
    """n_clusters integer vectors of `width` numbers, drawn from n_types distinct ones."""
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, 20, (n_types, width)) + 1
    return kinds[rng.integers(0, n_types, n_clusters)]


# Every way of drawing: one or two numbers are added up over drawn indices; wider vectors are counted per type, from
# a multinomial with few types, from drawn indices with many.
WAYS = [(2, 2), (2, 60), (4, 2), (4, 60)]


@pytest.mark.parametrize(("width", "n_types"), WAYS)
def test_resampled_sums_depend_only_on_the_multiset_of_clusters(width, n_types):
    per_cluster = _clusters(n_types, 60, width)
    shuffled = per_cluster[np.random.default_rng(9).permutation(len(per_cluster))]
    assert np.array_equal(resampled_sums(per_cluster, 300, 4), resampled_sums(shuffled, 300, 4))
    assert np.array_equal(resampled_sums(per_cluster, 300, 4), resampled_sums(per_cluster, 300, 4))
    assert not np.array_equal(resampled_sums(per_cluster, 300, 4), resampled_sums(per_cluster, 300, 5))


@pytest.mark.parametrize(("width", "n_types"), WAYS)
def test_resampled_sums_have_the_moments_of_g_draws_with_replacement(width, n_types):
    per_cluster = _clusters(n_types, 60, width).astype(float)
    g, r = len(per_cluster), 20_000
    sums = resampled_sums(per_cluster, r, 1)
    assert sums.shape == (r, width)
    mean, var = per_cluster.mean(axis=0), per_cluster.var(axis=0)
    assert sums.mean(axis=0) == pytest.approx(g * mean, rel=0.01)
    assert sums.var(axis=0) == pytest.approx(g * var, rel=0.05)


@pytest.mark.parametrize("width", [1, 4])
def test_resampled_sums_draw_whole_clusters(width):
    # clusters of 1, 2 and 3 items: a resample of G = 3 clusters holds 3 (cluster one thrice, p = 1/27) to 9 items
    totals = resampled_sums(np.repeat([[1], [2], [3]], width, axis=1), 4000, 0)
    assert (totals == totals[:, :1]).all()
    assert set(totals[:, 0].tolist()) == set(range(3, 10))
    assert (totals[:, 0] == 3).mean() == pytest.approx(1 / 27, abs=0.01)


def test_percentile_interval_reads_the_tails():
    values = np.random.default_rng(0).normal(size=200_000)
    low, high = percentile_interval(values)
    assert (low, high) == (pytest.approx(norm.ppf(0.025), abs=0.02), pytest.approx(norm.ppf(0.975), abs=0.02))
    assert percentile_interval(values, 0.5)[1] - percentile_interval(values, 0.5)[0] < high - low


def test_ratio_interval_contains_the_ratio_and_refuses_bad_weights():
    num, den = [3.0, 10.0, 4.0, 9.0, 1.0], [1, 2, 1, 3, 1]
    low, high = ratio_interval(num, den)
    assert low <= sum(num) / sum(den) <= high
    assert ratio_interval(num, den, n_resamples=0) is None
    with pytest.raises(ValueError, match="positive weight"):
        ratio_interval([1.0, 2.0], [1, 0])
    with pytest.raises(ValueError, match="num has 2 entries, den 1"):
        ratio_interval([1.0, 2.0], [1])


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_wilson_interval_is_the_formula_at_every_confidence(confidence):
    z = norm.ppf(0.5 + confidence / 2)
    for k, n in ((0, 10), (3, 10), (7, 7), (12, 50), (90, 100)):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        low, high = wilson_interval(k, n, confidence)
        assert low == pytest.approx(max(0.0, centre - half), abs=1e-12)
        assert high == pytest.approx(min(1.0, centre + half), abs=1e-12)
        ref = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
        assert [low, high] == [ref.low, ref.high]
    assert wilson_interval(0, 0, confidence) is None


def test_wilson_interval_refuses_impossible_counts():
    for args in ((3, 2), (-1, 4), (1, -1)):
        with pytest.raises(ValueError, match="0 <= successes <= n"):
            wilson_interval(*args)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, 1.0)
