"""The anytime-valid interval (asymptotic confidence sequence, docs/anytime.md): time-uniform coverage on seeded
streams where a fixed-n interval fails under optional stopping, its sqrt(log t / t) width, the ρ tuning, and the
wrapper around the estimators (same point, never narrower than the fixed-n interval)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scoring.stats.confidence_sequence import (
    equivalent_level,
    iid_half_width,
    multiplier,
    planned_n_for,
    reviews_to_anytime_target,
    rho_squared,
)
from scoring.stats.difference import difference_totals
from scoring.stats.estimators import anytime_estimate, metric_estimate
from scoring.stats.sampling import Unit, build_plan, reviews_to_target

ALPHA = 0.05
Z = float(stats.norm.ppf(1 - ALPHA / 2))


START = 50
"""The CS is asymptotic: on skewed or sparse streams it under-covers over the first few dozen observations
(exponential: 7% from t = 30, 5-6% from t = 50); the audit shows no interval below 30 sampled blocks or 5
differing ones, and bench/anytime_coverage.py measures coverage in that use."""


def _ever_missed(stream: np.ndarray, mean: float, half_width) -> np.ndarray:
    """(sims,) whether the running-mean interval missed `mean` at any t ≥ START of the (sims, T) streams, counting
    only times with ≥ 5 nonzero observations (the estimators' `min_differing`)."""
    t = np.arange(1, stream.shape[1] + 1)
    s1, s2 = np.cumsum(stream, axis=1), np.cumsum(stream * stream, axis=1)
    mu = s1 / t
    sd = np.sqrt(np.maximum(s2 - t * mu * mu, 0) / np.maximum(t - 1, 1))
    shown = np.cumsum(stream != 0, axis=1) >= 5
    miss = (np.abs(mu - mean) > half_width(sd, t)) & shown
    return miss[:, START - 1:].any(axis=1)


@pytest.mark.parametrize(("name", "draw", "mean"), [
    ("bernoulli 0.2", lambda rng, shape: (rng.random(shape) < 0.2).astype(float), 0.2),
    ("exponential", lambda rng, shape: rng.exponential(1.0, shape), 1.0),
    ("sparse errors", lambda rng, shape: (rng.random(shape) < 0.04).astype(float) - (rng.random(shape) < 0.01), 0.03),
])
def test_the_sequence_covers_uniformly_over_time_where_the_fixed_interval_fails(name, draw, mean):
    rng = np.random.default_rng(24)
    sims, horizon = 2000, 1000
    stream = draw(rng, (sims, horizon))
    anytime = _ever_missed(stream, mean, lambda sd, t: iid_half_width(sd, t, planned_n=200, alpha=ALPHA)).mean()
    fixed = _ever_missed(stream, mean, lambda sd, t: Z * sd / np.sqrt(t)).mean()
    # 2,000 streams: the binomial sd of a 0.05 rate is 0.005; allow the asymptotic CS 2 points of slack
    assert anytime <= ALPHA + 0.02, f"{name}: the CS missed somewhere on {anytime:.3f} of streams"
    assert fixed >= 0.25, f"{name}: the fixed-n interval should fail under peeking, missed only {fixed:.3f}"


def test_the_width_shrinks_like_sqrt_log_t_over_t():
    t = np.array([1e4, 1e6, 1e8, 1e10])
    m2 = multiplier(t, planned_n=100) ** 2
    # m(t)² = 2(1 + 1/x) log(sqrt(1 + x)/α) with x = tρ²: log t + log ρ² + 2 log(1/α) + O(log x / x)
    offset = math.log(rho_squared(100)) + 2 * math.log(1 / ALPHA)
    assert np.all(np.abs(m2 - np.log(t) - offset) < 2e-3 * np.log(t))
    widths = iid_half_width(1.0, t, planned_n=100)
    ratio = widths / np.sqrt(np.log(t) / t)
    assert np.all(np.diff(widths) < 0) and ratio.max() / ratio.min() < 1.3


def test_rho_is_tightest_at_the_planned_n():
    for t_star in (30, 100, 1000):
        at = multiplier(t_star, planned_n=t_star)
        assert at < multiplier(t_star, planned_n=t_star / 4) and at < multiplier(t_star, planned_n=4 * t_star)


def test_the_sequence_is_wider_than_the_fixed_interval_at_every_n():
    t = np.arange(1, 100_000)
    for planned in (30, 200, 5000):
        assert np.all(multiplier(t, planned_n=planned) > math.sqrt(2 * math.log(1 / ALPHA)))
    assert math.sqrt(2 * math.log(1 / ALPHA)) > Z
    assert equivalent_level(float(multiplier(100, planned_n=100))) > 0.99


def test_planned_n_comes_from_the_plan_size_only():
    assert planned_n_for(10) == 10 and planned_n_for(76) == 30 and planned_n_for(1000) == 250


def _stratified(seed: int = 0, n: int = 400):
    rng = np.random.default_rng(seed)
    judge, strata, human = {}, {}, {}
    for i in range(n):
        b, h = f"b{i}", ("A" if i % 4 == 0 else "B")
        j = float(rng.random() < (0.8 if h == "A" else 0.2))
        flip = rng.random() < (0.25 if h == "A" else 0.1)
        judge[b], strata[b], human[b] = j, h, (1 - j if flip else j)
    return judge, strata, human


def test_the_anytime_estimate_keeps_the_point_and_contains_the_fixed_interval():
    judge, strata, human = _stratified()
    order = [str(b) for b in np.random.default_rng(5).permutation(sorted(judge))]
    for n in (60, 120, 240, 399):
        sampled = {b: human[b] for b in order[:n]}
        tot = difference_totals(judge, strata, sampled, prior_weight=2.0)
        fixed = metric_estimate(tot, lambda v: float(v[0]) / len(judge))
        any_ = anytime_estimate(fixed, planned_n=100)
        assert any_.estimate == fixed.estimate
        assert any_.ci_raw[0] + any_.ci_raw[1] == pytest.approx(2 * fixed.estimate)
        assert any_.ci[0] <= fixed.ci[0] and any_.ci[1] >= fixed.ci[1]
        assert any_.ci_raw[1] - any_.ci_raw[0] > fixed.ci_raw[1] - fixed.ci_raw[0]
        assert any_.method.startswith("anytime+")
    full = metric_estimate(difference_totals(judge, strata, human), lambda v: float(v[0]) / len(judge))
    assert anytime_estimate(full, planned_n=100) == full  # a full review stays exact
    none = metric_estimate(difference_totals(judge, strata, {order[0]: human[order[0]]}), lambda v: float(v[0]))
    assert anytime_estimate(none, planned_n=100).ci is None


def test_the_anytime_stopping_advice_asks_for_more_reviews_than_the_fixed_one():
    judge, strata, human = _stratified(1)
    plan = build_plan([Unit(b, b, str(judge[b])) for b in judge], lambda us: strata[us[0].block], seed=3)
    sampled = {b.id: (human[b.id] - judge[b.id]) / len(judge) for b in plan.blocks[:40]}
    fixed = reviews_to_target(plan, sampled, 0.02)
    anytime = reviews_to_anytime_target(plan, sampled, 0.02)
    assert anytime["interval"] == "anytime" and anytime["more"] > fixed["more"]
    # the advice is consistent: at the recommended total the anytime multiplier hits the target variance
    n_final = len(sampled) + anytime["more"]
    assert anytime["multiplier"] == pytest.approx(float(multiplier(n_final, planned_n=anytime["planned_n"])))
