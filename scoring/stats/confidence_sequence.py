"""Anytime-valid intervals for the sampled audit: an asymptotic confidence sequence (docs/anytime.md).

A fixed-n interval covers the truth with probability 1 − α only at a sample size chosen in advance. A reviewer
who stops as soon as it is narrow enough (the queue's "N more reviews to ±0.03") picks n from the data, and the
interval then under-covers. A confidence sequence (CS) holds at every n at once, P(∀t: θ ∈ C_t) ≥ 1 − α
(asymptotically), so any stopping rule keeps its coverage.

The boundary is the two-sided normal-mixture asymptotic CS of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas,
"Time-uniform central limit theory and asymptotic confidence sequences" (Annals of Statistics, 2024; arXiv
2103.06476), the Gaussian-mixture asymptotic CS for an iid mean:

    C_t = μ̂_t ± σ̂_t · sqrt( 2(tρ² + 1) / (t²ρ²) · log( sqrt(tρ² + 1) / α ) )

With SE_t = σ̂_t/√t (the estimator's standard error) this is μ̂_t ± SE_t · m(t), the multiplier

    m(t) = sqrt( 2(tρ² + 1) / (tρ²) · log( sqrt(tρ² + 1) / α ) )

replacing the normal quantile z_{1−α/2}. ρ > 0 is fixed before the data (here from the plan's size) and
makes the CS tightest near t* = `planned_n`: ρ² = (−2 log α + log(−2 log α + 1)) / t* (the paper's
Remark/Appendix on tuning, from Howard et al. 2021). m(t) ≥ sqrt(2 log(1/α)) > z_{1−α/2} for every t, and
m(t)² grows like log t, so the half-width shrinks like sqrt(log t / t).

The stratified difference estimator with a delta-method linearisation is applied through its standard error:
`anytime_half_width(se, t)` = m(t) · SE_t with t the number of sampled blocks (see docs/anytime.md for the
assumptions, and bench/anytime_coverage.py for the coverage this gives under Neyman steps).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from scoring.stats.distributions import norm_cdf

DEFAULT_ALPHA = 0.05
PLANNED_SHARE = 0.25
"""`planned_n_for`: the CS is tuned to be tightest after this share of the plan's blocks."""
PLANNED_MIN = 30
"""... and never before this many sampled blocks (the estimators' minimum sample)."""


def rho_squared(planned_n: float, alpha: float = DEFAULT_ALPHA) -> float:
    """ρ² that minimises the boundary at t = `planned_n`: (−2 log α + log(−2 log α + 1)) / t*."""
    if planned_n <= 0:
        raise ValueError(f"planned_n must be above 0, got {planned_n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    a = -2 * math.log(alpha)
    return (a + math.log(a + 1)) / planned_n


def multiplier(t: float | np.ndarray, *, planned_n: float, alpha: float = DEFAULT_ALPHA) -> float | np.ndarray:
    """m(t): the CS half-width in standard errors after t observations (vectorised over t; t > 0)."""
    t_arr = np.asarray(t, dtype=float)
    if np.any(t_arr <= 0):
        raise ValueError("t must be above 0")
    x = t_arr * rho_squared(planned_n, alpha)
    m = np.sqrt(2 * (x + 1) / x * np.log(np.sqrt(x + 1) / alpha))
    return float(m) if m.ndim == 0 else m


def iid_half_width(sd: float | np.ndarray, t: float | np.ndarray, *, planned_n: float,
                   alpha: float = DEFAULT_ALPHA) -> float | np.ndarray:
    """The paper's form: σ̂_t · sqrt(2(tρ² + 1)/(t²ρ²) · log(sqrt(tρ² + 1)/α)), i.e. m(t) · σ̂_t/√t."""
    return np.asarray(sd, dtype=float) * multiplier(t, planned_n=planned_n, alpha=alpha) / np.sqrt(t)


def planned_n_for(n_blocks: int) -> int:
    """Where the CS is tuned to be tightest, fixed by the plan alone (never by reviews, or validity is lost):
    a quarter of the plan's blocks, at least 30 (and at most all of them)."""
    if n_blocks <= 0:
        return PLANNED_MIN
    return min(n_blocks, max(PLANNED_MIN, round(PLANNED_SHARE * n_blocks)))


def equivalent_level(m: float) -> float:
    """The normal-interval level whose quantile is m (so fixed-n planning code can target an anytime width)."""
    return 2 * norm_cdf(m) - 1


def reviews_to_anytime_target(plan: Any, residuals: Mapping[str, float], half_width: float, *,
                              certain: Collection[str] = (), alpha: float = DEFAULT_ALPHA,
                              planned_n: int | None = None, max_rounds: int = 20,
                              state: Any = None) -> dict[str, Any]:
    """`sampling.reviews_to_target` for the anytime interval: reviews until m(n) · SE ≤ `half_width`, n the sampled
    blocks at the stop. m depends on that n, so the allocation is iterated to a fixed point (it moves little:
    m changes slowly with n). Adds `interval: "anytime"`, `multiplier` and `planned_n` to the result."""
    from scoring.stats.sampling import queue_state, reviews_to_target

    state = state or queue_state(plan, residuals, certain)  # the same at every round: built once
    n_plan = planned_n or planned_n_for(len(plan.blocks))
    now = len(residuals)
    total = max(now, 1)
    seen: set[int] = set()
    out: dict[str, Any] = {}
    for _ in range(max_rounds):
        m = multiplier(max(total, 1), planned_n=n_plan, alpha=alpha)
        out = reviews_to_target(plan, residuals, half_width, certain=certain, level=equivalent_level(m), state=state)
        nxt = now + int(out["more"])
        if nxt == total or nxt in seen:
            total = max(total, nxt)
            break
        seen.add(total)
        total = nxt
    m = multiplier(max(total, 1), planned_n=n_plan, alpha=alpha)
    return {**out, "interval": "anytime", "multiplier": m, "planned_n": n_plan}


def stopping_advice(plan: Any, residuals: Mapping[str, float], half_width: float, *, now_half_width: float | None,
                    now_se: float | None, min_sampled: int, certain: Collection[str] = (),
                    pending: Collection[str] = (), alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    """How many more sampled blocks the queue needs before the anytime interval the estimate shows is at most
    ±`half_width`: what the interval needs first (`min_sampled` sampled blocks, and an interval at all), then the
    half-width it aims at.

    `now_half_width` is the estimate's anytime half-width now (None while it is withheld) and `now_se` its standard
    error: 0 more only when that interval exists and is narrow enough, never on a projection alone. Otherwise the
    projection (`reviews_to_anytime_target`, whose planning variance smooths the residuals) is calibrated to the
    estimator: the target is rescaled by the ratio of the estimate's variance to the planning variance at the
    current sample, so the advice counts the variance the interval uses (the Jeffreys hurdle form), not its own.
    `pending`: blocks reviewed but not yet in the estimate (waiting for an adjudicator): not counted as open.
    Adds `waiting_for`: `minimum` (fewer than `min_sampled` sampled blocks), `interval` (withheld for another
    reason) or `width`."""
    from scoring.stats.sampling import queue_state

    now = len(residuals)
    known = set(certain)
    state = queue_state(plan, residuals, known)
    drawn = set(pending)  # reviewed, waiting for an adjudicator: not open, though not in the estimate yet
    open_sizes = [len(b.units) for b in plan.blocks if b.id not in residuals and b.id not in known
                  and b.id not in drawn]
    open_blocks = len(open_sizes)
    if now_half_width is not None and now_half_width <= half_width + 1e-12:
        out = reviews_to_anytime_target(plan, residuals, half_width, certain=certain, alpha=alpha, state=state)
        return {**out, "more": 0, "more_units": 0, "waiting_for": None}
    aim = half_width
    first = reviews_to_anytime_target(plan, residuals, half_width, certain=certain, alpha=alpha, state=state)
    planning = first.get("variance_now")
    if now_se is not None and planning:
        # the estimator's variance over the planning one, at the same sample: scale the target by it
        aim = half_width * math.sqrt(planning) / max(now_se, 1e-300)
    out = first if aim == half_width else reviews_to_anytime_target(plan, residuals, aim, certain=certain,
                                                                    alpha=alpha, state=state)
    more = int(out["more"])
    waiting = "width"
    if now < min_sampled:
        waiting = "minimum"
        more = max(more, min_sampled - now)
    elif now_half_width is None:
        waiting = "interval"
    more = min(max(more, 1), open_blocks)  # not there yet: at least one more review, at most what is left
    per_block = out["more_units"] / out["more"] if out["more"] else _mean_block(plan, residuals, certain)
    # whole decisions, never more than the open documents hold (it read 3264.2 of a run holding 3,264)
    units = sum(open_sizes) if more >= open_blocks else min(round(more * per_block), sum(open_sizes))
    return {**out, "more": more, "more_units": units, "waiting_for": waiting}


def _mean_block(plan: Any, residuals: Mapping[str, float], certain: Collection[str]) -> float:
    """Mean decisions per open block (the advice's decisions when the projection adds none)."""
    skip = set(residuals) | set(certain)
    sizes = [max(len(b.units), 1) for b in plan.blocks if b.id not in skip]
    return sum(sizes) / len(sizes) if sizes else 0.0
