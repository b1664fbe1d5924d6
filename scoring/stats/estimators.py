"""Audited scores with confidence intervals from a sampled (partial) review — partial-audit.md §4.

Estimand: the score the run would get if every decision were reviewed by a human (finite population, so the
interval shrinks to zero at full review). Every estimator takes the judge-side value of EVERY block, the
stratum of every block, and the human value of the blocks reviewed through the seeded random queue
(`sampled`). Reviews picked by hand go in `certain`: exact, never extrapolated, never part of the sample.

- `total_estimate` / `mean_estimate`: stratified difference estimator of a total or mean (rates, counts),
  Jeffreys interval for 0/1 outcomes where a stratum's sample is tiny or unanimous;
- `rating_mean`: 1–5 ratings (invalid judge ratings form their own stratum);
- `prf_estimate`: P/R/F1 per type and their macro average from block count vectors, delta method over the
  covariance of the estimated (tp, fp, fn) totals, t quantile;
- `linearised_residuals`: per-block residuals of a P/R/F1 estimate, for `sampling.next_unit`;
- `headline`: the JSON the shell shows and exports (estimate, CI, judge-only score, judge bias).

No interval is given below `min_reviews` (30) sampled blocks, or while fewer than `min_differing` (5) sampled
blocks differ from the judge (Wald intervals only; §6): the estimate then carries a `note` starting with
"insufficient reviews". A stratum with no review gives no estimate at all, never a silent 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from scoring.nouns import Noun
from scoring.stats.confidence_sequence import multiplier
from scoring.stats.difference import (
    INSUFFICIENT,
    Totals,
    Variance,
    Vector,
    difference_totals,
    jeffreys_total_interval,
    tuned_lambda,
    unseen_moves,
)
from scoring.stats.distributions import norm_ppf, t_ppf

MIN_REVIEWS = 30
LAMBDA_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
"""λ values `tuned_estimate` tries beside PPI++'s λ* (0 and 1 included: never wider than either end; each costs one
pass over the run's blocks)."""
VARIANCE: Variance = "jeffreys"
"""Within-stratum variance of P/R/F1 and ratings (and of `audit estimate`): the hurdle covariance with a Jeffreys
differing rate (`difference.difference_totals`); its coverage per truth model: bench/results/smoothing-coverage.md."""
MIN_DIFFERING = 5
JEFFREYS_BELOW = 10
"""A 0/1 stratum with fewer sampled blocks than this (or a unanimous one) gets the Jeffreys interval."""
PRF_COMPONENTS = ("tp", "fp", "fn")
PRF_METRICS = ("precision", "recall", "f1")


@dataclass(frozen=True)
class Estimate:
    """One estimated number of the audited score."""

    estimate: float | None
    """Estimated value under full human review; None when it cannot be estimated (see note)."""
    ci: tuple[float, float] | None
    """Interval clipped to the metric's range; None below the minimum sample (see note)."""
    se: float | None
    judge_only: float
    """The same metric with the judge's labels everywhere."""
    n_reviewed: int
    """Blocks whose human value enters: sampled + hand-reviewed."""
    n_sampled: int
    n_total: int
    method: str
    """`exact` (everything reviewed), `difference+t`, `difference+z`, `jeffreys`, `delta+t`, `delta+z` or
    `none`."""
    note: str = ""
    ci_raw: tuple[float, float] | None = None
    """The interval before clipping (the judge-bias interval is derived from it)."""
    df: int | None = None
    estimate_raw: float | None = None
    """The point estimate before it was moved into the metric's range, when it lay outside (else None): the
    design-unbiased value, which the benches and the unbiasedness tests average; `estimate` is what is shown."""

    @property
    def design_value(self) -> float | None:
        """The design-unbiased point (`estimate_raw` where the shown `estimate` was moved into the metric's range):
        what a bias over repeated draws averages."""
        return self.estimate if self.estimate_raw is None else self.estimate_raw

    def to_json(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "ci": list(self.ci) if self.ci else None, "se": self.se,
                "judge_only": self.judge_only, "n_reviewed": self.n_reviewed, "n_sampled": self.n_sampled,
                "n_total": self.n_total, "method": self.method, "note": self.note, "df": self.df}


def _quantile(level: float, df: float, dist: str) -> float:
    return norm_ppf(0.5 + level / 2) if dist == "z" or df <= 0 else t_ppf(0.5 + level / 2, df)


def _withheld(tot: Totals, min_reviews: int, min_differing: int) -> str | None:
    """Why no interval may be shown yet (None: show it)."""
    if tot.complete:
        return None
    if tot.reason:
        return tot.reason
    if tot.n_sampled < min_reviews:
        return f"{INSUFFICIENT}: n < {min_reviews}"
    if tot.n_differing < min_differing:
        return (f"{INSUFFICIENT}: only {Noun('reviewed block').count(tot.n_differing)} "
                f"{'differs' if tot.n_differing == 1 else 'differ'} from the judge "
                f"(needs {min_differing})")
    return None


def unsized_strata(tot: Totals, grad: np.ndarray) -> str | None:
    """With `own_errors` (`stratum_df`): why no interval yet while a sampled stratum none of whose draws differs from
    the judge would carry variance of this metric (its Jeffreys variance, sized by other strata's errors, moves it);
    None when there is none."""
    unsized = [(h, s) for h, s in tot.strata.items() if s.sampled < s.size and s.differing == 0
               and h in tot.parts and float(grad @ tot.parts[h][0] @ grad) > 0]
    if not unsized:
        return None
    return f"{INSUFFICIENT}: " + "; ".join(
        f"none of the {s.sampled} sampled blocks of stratum {h!r} differs from the judge, and other strata's errors "
        "differ in size, so nothing sizes its variance yet" for h, s in unsized)


def stratum_df(sampled: int, differing: int, own_errors: bool = False) -> int:
    """Degrees of freedom of one sampled stratum's variance in the Welch-Satterthwaite sum (`effective_df`):
    m_h − 1, or with `own_errors` x_h − 1 for x_h differing blocks, at least 1.

    `own_errors` (a family's `sampling_own_error_sizes`): the size of a review's effect differs by orders of
    magnitude between documents (retrieval: an accepted candidate moves 1/rank by 1/(r(r − 1))), so a stratum's
    variance rests on its own differing blocks. The hurdle variance (`difference.difference_totals`,
    `variance="jeffreys"`) estimates a stratum's error sizes from its x_h differing blocks, not from its m_h draws,
    so x_h − 1 is what its variance is estimated with (a rare-events count is as uncertain as a chi-square with about
    x_h degrees of freedom, however many blocks agree); and a stratum where none differs (x_h = 0) withholds the
    interval (`unsized_strata`) rather than borrow another stratum's error sizes, unless none of those would move the
    metric (retrieval's Hits@10 in the tail strata). Without this, retrieval's MRR covered
    0.85 / 0.90 at 60 / 120 queries (200 rounds; with the true within-stratum variances the same draws cover 0.97):
    the draws that miss a stratum's few large changes show both a low estimate and a small variance
    (bench/README.md as of a32f770, issue 39 point 4)."""
    return max(min(sampled, differing if own_errors else sampled) - 1, 1)


def effective_df(tot: Totals, grad: np.ndarray, own_errors: bool = False) -> float:
    """`Totals.effective_df` (Welch-Satterthwaite) with each stratum's degrees of freedom from `stratum_df`."""
    if not own_errors:
        return tot.effective_df(grad)
    v = [(float(grad @ c @ grad), stratum_df(m, tot.strata[h].differing, True)) for h, (c, m) in tot.parts.items()]
    num = sum(x for x, _ in v) ** 2
    den = sum(x * x / k for x, k in v)
    return num / den if den > 0 else float(tot.df)


def _clip(ci: tuple[float, float], bounds: tuple[float, float] | None) -> tuple[tuple[float, float], bool]:
    """The interval inside the metric's range. An interval wholly past a bound (a small sample's estimate overshot
    it) is moved inside against that bound with its width kept: clipping it gave an inverted pair, and collapsing it
    onto the bound a zero-width interval, which every surface reads as an exact value."""
    if bounds is None:
        return ci, False
    lo, hi = ci
    width = hi - lo
    if lo > bounds[1]:
        lo, hi = max(bounds[0], bounds[1] - width), bounds[1]
    elif hi < bounds[0]:
        lo, hi = bounds[0], min(bounds[1], bounds[0] + width)
    else:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return (lo, hi), (lo, hi) != ci


def _clip_value(v: float, bounds: tuple[float, float] | None) -> tuple[float, str | None]:
    """A point estimate inside the metric's range, with a note when it was outside: the difference estimator can
    step past a bound (a consistency rate of 1.015 from 14 documents), and the truth never does."""
    if bounds is None or bounds[0] <= v <= bounds[1]:
        return v, None
    return min(max(v, bounds[0]), bounds[1]), f"estimate {v:.4g} clipped to the metric's range"


def _join(*notes: str | None) -> str:
    return "; ".join(n for n in notes if n)


def delta_method(g: Callable[[np.ndarray], float], total: np.ndarray, cov: np.ndarray,
                 rel_step: float = 1e-6) -> tuple[float, float, np.ndarray]:
    """Value, standard error sqrt(∇gᵀ Σ ∇g) and gradient of g at `total` (central finite differences)."""
    total = np.asarray(total, dtype=float)
    grad = np.zeros_like(total)
    for i in range(total.size):
        h = rel_step * max(1.0, abs(total[i]))
        up, down = total.copy(), total.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (g(up) - g(down)) / (2 * h)
    var = float(grad @ cov @ grad)
    return float(g(total)), float(np.sqrt(max(var, 0.0))), grad


def _from_totals(tot: Totals, g: Callable[[np.ndarray], float], *, level: float, dist: str,
                 bounds: tuple[float, float] | None, min_reviews: int, min_differing: int,
                 linear: bool, grad: np.ndarray | None = None, own_errors: bool = False) -> Estimate:
    """Estimate of g(Σ c^H) with a Wald (linear g) or delta-method interval (`grad`: the gradient to linearise
    with, else g's at the estimate; `own_errors`: `stratum_df`)."""
    judge_only = float(g(tot.judge))
    n_rev = tot.n_sampled + tot.n_certain
    if tot.total is None:
        return Estimate(None, None, None, judge_only, n_rev, tot.n_sampled, tot.n_total, "none", tot.reason or "")
    if tot.complete:
        v = float(g(tot.total))
        return Estimate(v, (v, v), 0.0, judge_only, n_rev, tot.n_sampled, tot.n_total, "exact", "", (v, v), 0)
    withheld = _withheld(tot, min_reviews, min_differing)
    if tot.cov is None or withheld:
        raw_value = float(g(tot.total))
        value, outside = _clip_value(raw_value, bounds)
        return Estimate(value, None, None, judge_only, n_rev, tot.n_sampled, tot.n_total, "none",
                        _join(withheld or tot.reason or "", outside), None, tot.df, raw_value if outside else None)
    if grad is None:
        value, se, grad = delta_method(g, tot.total, tot.cov)
    else:
        value, se = float(g(tot.total)), float(np.sqrt(max(float(grad @ tot.cov @ grad), 0.0)))
    unsized = unsized_strata(tot, grad) if own_errors else None
    if unsized:
        shown, outside = _clip_value(value, bounds)
        return Estimate(shown, None, None, judge_only, n_rev, tot.n_sampled, tot.n_total, "none",
                        _join(unsized, outside), None, tot.df, value if outside else None)
    # the t quantile at the Welch-Satterthwaite degrees of freedom, not Σ (m_h − 1): an interval resting on a few
    # reviews of one stratum is as wide as they allow (issue 39 point 4; the median's Woodruff interval uses the same)
    q = _quantile(level, effective_df(tot, grad, own_errors) if tot.df > 0 else tot.df, dist)
    raw = (value - q * se, value + q * se)
    ci, clipped = _clip(raw, bounds)
    shown, outside = _clip_value(value, bounds)
    # no degrees of freedom (every sampled stratum holds one review, which the Jeffreys variance allows): z, said so
    method = ("difference+" if linear else "delta+") + ("z" if dist == "z" or tot.df <= 0 else "t")
    return Estimate(shown, ci, se, judge_only, n_rev, tot.n_sampled, tot.n_total, method,
                    _join(outside or ("clipped to the metric's range" if clipped else None)), raw, tot.df,
                    value if outside else None)


def metric_estimate(tot: Totals, g: Callable[[np.ndarray], float], *, bounds: tuple[float, float] | None = (0.0, 1.0),
                    level: float = 0.95, dist: Literal["t", "z"] = "t", min_reviews: int = MIN_REVIEWS,
                    min_differing: int = MIN_DIFFERING, grad: np.ndarray | None = None,
                    own_errors: bool = False) -> Estimate:
    """Any smooth metric g of the estimated totals (`difference.difference_totals`), with a delta-method interval:
    the shell uses it for a family's headline metric, g = that number of the family's metrics of the totals.
    `grad`: g's gradient at the estimated totals when the caller has it (a board's difference of two systems is
    the two systems' gradients side by side: 2 evaluations of g per count instead of 4 per joint count).
    `own_errors`: the family's `sampling_own_error_sizes` (`stratum_df`)."""
    return _from_totals(tot, g, level=level, dist=dist, bounds=bounds, min_reviews=min_reviews,
                        min_differing=min_differing, linear=False, grad=grad, own_errors=own_errors)


def tuned_estimate(judge: Mapping[str, Vector], strata: Mapping[str, str], sampled: Mapping[str, Vector],
                   g: Callable[[np.ndarray], float], *, certain: Mapping[str, Vector] | None = None,
                   bounds: tuple[float, float] | None = (0.0, 1.0), level: float = 0.95,
                   dist: Literal["t", "z"] = "t", min_reviews: int = MIN_REVIEWS,
                   min_differing: int = MIN_DIFFERING, prior_weight: float = 0.0,
                   variance: Variance | None = None, own_errors: bool = False,
                   full: Totals | None = None, movable: Mapping[str, Sequence[bool] | np.ndarray] | None = None,
                   ) -> tuple[Estimate, float | None]:
    """The power-tuned (PPI++) estimate of g(Σ c^H) and its λ: the gradient of g at the difference estimate picks
    the candidate λ* (`difference.tuned_lambda`, which minimises the plain covariance); the interval, though, uses
    `variance` (the Jeffreys hurdle form), so λ is the candidate among λ*, `LAMBDA_GRID` (0 and 1 included) whose
    interval under that variance is narrowest, every candidate linearised at the difference estimate. A weak judge
    gets λ near 0 (the reviewed sample alone), a good one λ near 1 (the difference estimator); the interval is
    never wider than either (issue 39 point 3). λ is None (and the difference estimator is used) while the
    interval is withheld. `own_errors`: as `metric_estimate`. `movable`: as `difference.estimated_totals`, the
    variance of counts the sample never saw move added to every candidate's totals (moves read against the judge
    itself, whatever λ scales it by), so both ends are the intervals their estimators show. `full`: the totals of
    λ = 1 (`estimated_totals` of these same arguments) when the caller has computed them already (`estimate` has,
    for every headline metric)."""

    def widened(tot: Totals) -> Totals:
        return tot if movable is None else unseen_moves(tot, judge, strata, sampled, movable, certain=certain)
    if full is None:
        full = widened(difference_totals(judge, strata, sampled, certain=certain, prior_weight=prior_weight,
                                         variance=variance))
    # nothing to tune while the interval is withheld: the numerical gradient costs 2 evaluations of g per count
    # (LitXBench: ~700 counts, 30 s for a page that would show no interval anyway)
    if (full.total is None or full.complete or full.cov is None
            or _withheld(full, min_reviews, min_differing)):
        return metric_estimate(full, g, bounds=bounds, level=level, dist=dist, min_reviews=min_reviews,
                               min_differing=min_differing, own_errors=own_errors), None
    _, _, grad = delta_method(g, full.total, full.cov if full.cov is not None else np.zeros((full.total.size,) * 2))
    lam = tuned_lambda(judge, strata, sampled, grad, certain=certain)
    # λ* above minimises the plain covariance; the interval uses `variance` (the Jeffreys hurdle form), so λ is
    # chosen on that: the candidates λ*, a grid and both ends, each interval linearised at the difference estimate
    # (one gradient for all, so the ends compare exactly), the narrowest kept: never wider than either end
    best: tuple[float, float, Estimate] | None = None
    for cand in sorted({*LAMBDA_GRID} | ({lam} if lam is not None else set())):
        tot = full if cand == 1.0 else widened(difference_totals(judge, strata, sampled, certain=certain,
                                                                prior_weight=prior_weight, lam=cand,
                                                                variance=variance))
        est = _from_totals(tot, g, level=level, dist=dist, bounds=bounds, min_reviews=min_reviews,
                           min_differing=min_differing, linear=False, grad=grad, own_errors=own_errors)
        if est.ci is None:
            continue
        width = est.ci[1] - est.ci[0]
        if best is None or width < best[0] - 1e-15 or (abs(width - best[0]) <= 1e-15 and cand == lam):
            best = (width, cand, est)
    if best is None:
        return metric_estimate(full, g, bounds=bounds, level=level, dist=dist, min_reviews=min_reviews,
                               min_differing=min_differing, own_errors=own_errors), None
    return best[2], best[1]


def anytime_estimate(fixed: Estimate, *, planned_n: int, level: float = 0.95,
                     bounds: tuple[float, float] | None = (0.0, 1.0)) -> Estimate:
    """The anytime-valid interval (`confidence_sequence`) around a fixed-n estimate: same point, half-width
    m(n) · SE with n the sampled blocks, never narrower than the fixed-n one. Valid however the reviewer decides
    when to stop (asymptotically; docs/anytime.md). `planned_n` must come from the plan, not from the reviews.
    No interval where the fixed-n one is withheld; an exact (full-review) estimate stays exact."""
    if fixed.ci_raw is None or fixed.se is None or fixed.estimate is None or fixed.method == "exact":
        return fixed
    m = float(multiplier(max(fixed.n_sampled, 1), planned_n=planned_n, alpha=1 - level))
    half = max(m * fixed.se, (fixed.ci_raw[1] - fixed.ci_raw[0]) / 2)
    centre = fixed.estimate if fixed.estimate_raw is None else fixed.estimate_raw
    raw = (centre - half, centre + half)
    ci, clipped = _clip(raw, bounds)
    outside = None if fixed.estimate_raw is None else f"estimate {fixed.estimate_raw:.4g} clipped to the metric's range"
    return Estimate(fixed.estimate, ci, fixed.se, fixed.judge_only, fixed.n_reviewed, fixed.n_sampled,
                    fixed.n_total, "anytime+" + fixed.method, _join(outside or ("clipped to the metric's range"
                                                                                if clipped else None)), raw,
                    fixed.df, fixed.estimate_raw)


# ---------------------------------------------------------------- totals, means, rates


def total_estimate(judge: Mapping[str, float], strata: Mapping[str, str], sampled: Mapping[str, float], *,
                   certain: Mapping[str, float] | None = None, binary: bool = False,
                   interval: Literal["auto", "wald", "jeffreys"] = "auto", level: float = 0.95,
                   dist: Literal["t", "z"] = "t", min_reviews: int = MIN_REVIEWS,
                   min_differing: int | None = None, prior_weight: float = 0.0, _scale: float = 1.0,
                   variance: Variance | None = None) -> Estimate:
    """Stratified difference estimate of Σ_all H (e.g. the number of true matches), §4.1.

    `binary` (H, J ∈ {0, 1}) enables the Jeffreys interval: with `interval="auto"` it is used when a stratum
    that is not fully reviewed has fewer than 10 reviews or a unanimous sample (then the `min_differing` rule
    is not needed and defaults to 0). The point estimate is always the difference estimator.
    """
    tot = difference_totals(judge, strata, sampled, certain=certain, prior_weight=prior_weight, variance=variance)
    wanted_min = min_differing if min_differing is not None else (0 if binary else MIN_DIFFERING)
    bounds = (0.0, tot.n_total * _scale) if binary else None
    est = _from_totals(tot, lambda t: float(t[0]) * _scale, level=level, dist=dist, bounds=bounds,
                       min_reviews=min_reviews, min_differing=wanted_min, linear=True)
    if not binary or est.estimate is None or est.method == "exact" or interval == "wald":
        return est
    tiny = any(s.sampled < s.size and (s.sampled < JEFFREYS_BELOW or _unanimous(h, strata, sampled, certain))
               for h, s in tot.strata.items())
    if interval == "auto" and not tiny:
        return est
    if tot.n_sampled < min_reviews:
        return est
    lo, hi = jeffreys_total_interval(strata, sampled, certain=certain, level=level)
    ci = (lo * _scale, hi * _scale)
    return Estimate(est.estimate, ci, est.se, est.judge_only, est.n_reviewed, est.n_sampled, est.n_total,
                    "jeffreys", "", ci, tot.df, est.estimate_raw)


def _unanimous(h: str, strata: Mapping[str, str], sampled: Mapping[str, float],
               certain: Mapping[str, float] | None) -> bool:
    vals = {float(v) for b, v in sampled.items() if strata.get(b) == h and not (certain and b in certain)}
    return len(vals) <= 1


def mean_estimate(judge: Mapping[str, float], strata: Mapping[str, str], sampled: Mapping[str, float], *,
                  certain: Mapping[str, float] | None = None, binary: bool = False,
                  interval: Literal["auto", "wald", "jeffreys"] = "auto", level: float = 0.95,
                  dist: Literal["t", "z"] = "t", min_reviews: int = MIN_REVIEWS,
                  min_differing: int | None = None, prior_weight: float = 0.0) -> Estimate:
    """Mean over all N units of H (a rate when `binary`): `total_estimate` / N. Same arguments."""
    return total_estimate(judge, strata, sampled, certain=certain, binary=binary, interval=interval, level=level,
                          dist=dist, min_reviews=min_reviews, min_differing=min_differing, prior_weight=prior_weight,
                          _scale=1 / len(judge))


def rating_mean(judge: Mapping[str, float | None], sampled: Mapping[str, float], *,
                strata: Mapping[str, str] | None = None, certain: Mapping[str, float] | None = None,
                scale: tuple[float, float] = (1, 5), poststratify: bool | Literal["auto"] = "auto",
                level: float = 0.95, min_reviews: int = MIN_REVIEWS,
                min_differing: int = MIN_DIFFERING, prior_weight: float = 0.0,
                variance: Variance | None = None) -> Estimate:
    """Mean human rating over all N questions (§4.3): judge mean + scaled-up mean(H − J), with FPC.

    `judge` is None for an invalid judge rating: those questions form the stratum `invalid` (review them all)
    with the mean valid judge rating as their stand-in J, which keeps the estimator unbiased. The judge-only
    value is the mean over valid judge ratings. Without `strata` the sample is one simple random sample; with
    `poststratify="auto"` it is post-stratified by judge rating once every rating level has ≥ 10 reviews.
    `prior_weight` and `variance` as in `prf_estimate`.
    """
    valid = [float(v) for v in judge.values() if v is not None]
    if not valid:
        raise ValueError("no valid judge rating")
    stand_in = sum(valid) / len(valid)
    filled = {u: (float(v) if v is not None else stand_in) for u, v in judge.items()}
    if strata is None:
        strata = {u: "all" for u in judge}
        if poststratify:
            levels = {u: f"judge={v:g}" for u, v in filled.items() if judge[u] is not None}
            counts: dict[str, int] = {}
            for u in sampled:
                if u in levels:
                    counts[levels[u]] = counts.get(levels[u], 0) + 1
            if poststratify is True or all(counts.get(lv, 0) >= 10 for lv in set(levels.values())):
                strata = dict(levels)
    strata = {u: ("invalid" if judge[u] is None else strata[u]) for u in judge}
    est = total_estimate(filled, strata, sampled, certain=certain, level=level, min_reviews=min_reviews,
                         min_differing=min_differing, prior_weight=prior_weight, _scale=1 / len(judge),
                         variance=_variance(variance, prior_weight))
    ci, ci_raw = est.ci, est.ci_raw
    note = est.note
    if ci is not None:
        ci, clipped = _clip(ci, scale)
        note = _join(note, "clipped to the rating scale" if clipped else None)
    return Estimate(est.estimate, ci, est.se, stand_in, est.n_reviewed, est.n_sampled, est.n_total, est.method,
                    note, ci_raw, est.df, est.estimate_raw)


# ---------------------------------------------------------------- P/R/F1 from block count vectors

BlockCounts = Mapping[str, Mapping[str, float]]
"""One block's counts: type -> {"tp", "fp", "fn"} (other keys are ignored)."""


def prf_from_totals(vec: np.ndarray, types: Sequence[str]) -> dict[str, dict[str, float]]:
    """P/R/F1 per type and their unweighted mean (`avg`), as `scoring.stats.prf.criteria`: an undefined ratio
    is 0, and avg F1 is the mean of per-type F1s. `vec` holds (tp, fp, fn) per type, in `types` order."""
    out: dict[str, dict[str, float]] = {}
    for i, t in enumerate(types):
        tp, fp, fn = vec[3 * i:3 * i + 3]
        p = tp / (tp + fp) if tp + fp > 0 else 0.0
        r = tp / (tp + fn) if tp + fn > 0 else 0.0
        out[t] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r > 0 else 0.0}
    out["avg"] = {k: (sum(out[t][k] for t in types) / len(types) if types else 0.0) for k in PRF_METRICS}
    return out


def _flatten(counts: Mapping[str, BlockCounts], types: Sequence[str]) -> dict[str, np.ndarray]:
    return {b: np.array([float(c.get(t, {}).get(k, 0)) for t in types for k in PRF_COMPONENTS])
            for b, c in counts.items()}


def _types(judge: Mapping[str, BlockCounts]) -> list[str]:
    return list(dict.fromkeys(t for c in judge.values() for t in c))


def prf_totals(judge: Mapping[str, BlockCounts], strata: Mapping[str, str], sampled: Mapping[str, BlockCounts], *,
               certain: Mapping[str, BlockCounts] | None = None, types: Sequence[str] | None = None,
               prior_weight: float = 0.0, variance: Variance | None = None) -> tuple[Totals, list[str]]:
    """Difference-estimated (tp, fp, fn) totals per type (3 numbers per type, `types` order)."""
    ts = list(types) if types is not None else _types(judge)
    tot = difference_totals(_flatten(judge, ts), strata, _flatten(sampled, ts),
                            certain=_flatten(certain, ts) if certain else None, prior_weight=prior_weight,
                            variance=variance)
    return tot, ts


def prf_estimate(judge: Mapping[str, BlockCounts], strata: Mapping[str, str], sampled: Mapping[str, BlockCounts],
                 *, certain: Mapping[str, BlockCounts] | None = None, types: Sequence[str] | None = None,
                 level: float = 0.95, dist: Literal["t", "z"] = "t", min_reviews: int = MIN_REVIEWS,
                 min_differing: int = MIN_DIFFERING,
                 prior_weight: float = 0.0, variance: Variance | None = None) -> dict[str, dict[str, Estimate]]:
    """P/R/F1 under full human review, per type and `avg` (macro mean over types, the scorer's headline), §4.2.

    Args:
        judge: counts of EVERY block under judge labels (the family's `counts` of the block's document part).
        strata: stratum of every block.
        sampled: counts under human labels of the blocks reviewed through the random queue (all their decisions
            reviewed), and only those.
        certain: counts under human labels of hand-reviewed blocks, and of blocks whose counts no decision
            affects (e.g. documents with no decision); counted exactly.
        types: the types to average over (default: every type seen in `judge`); a type with no counts
            contributes 0, as the scorer does.
        prior_weight: pseudo-observations of the pooled covariance added to every stratum
            (`difference.difference_totals`): the block-level stand-in for Jeffreys/plus-two smoothing, so a
            stratum whose few sampled blocks all agree with the judge does not claim zero variance (the former
            default, 2). Used only with `variance="pooled"` (the default when w > 0).
        variance: `jeffreys` (default unless prior_weight > 0: `VARIANCE`), `pooled` or `plain` (the plain
            estimator of §4.2; `difference.difference_totals`); each stratum's `assumption` says what its variance
            rests on.

    Returns {type or "avg": {"precision" | "recall" | "f1": Estimate}}. A type whose estimated
    2·tp + fp + fn is under 20 gets the note "unstable: few counts" (the delta method is fragile there).
    """
    tot, ts = prf_totals(judge, strata, sampled, certain=certain, types=types, prior_weight=prior_weight,
                         variance=_variance(variance, prior_weight))
    out: dict[str, dict[str, Estimate]] = {}
    ref = tot.total if tot.total is not None else tot.judge
    for t in [*ts, "avg"]:
        out[t] = {}
        for metric in PRF_METRICS:
            est = _from_totals(tot, _metric_fn(ts, t, metric), level=level, dist=dist, bounds=(0.0, 1.0),
                               min_reviews=min_reviews, min_differing=min_differing, linear=False)
            if t != "avg" and est.ci is not None and est.method != "exact":
                i = ts.index(t)
                if 2 * ref[3 * i] + ref[3 * i + 1] + ref[3 * i + 2] < 20:
                    est = _with_note(est, "unstable: few counts")
            out[t][metric] = est
    return out


def _variance(variance: Variance | None, prior_weight: float) -> Variance | None:
    """The variance choice of an estimator whose default is `VARIANCE`: an explicit `prior_weight` keeps asking for
    the former pooled smoothing."""
    return variance or (None if prior_weight > 0 else VARIANCE)


def _metric_fn(types: Sequence[str], t: str, metric: str) -> Callable[[np.ndarray], float]:
    return lambda v: prf_from_totals(v, types)[t][metric]


def _with_note(est: Estimate, note: str) -> Estimate:
    return Estimate(est.estimate, est.ci, est.se, est.judge_only, est.n_reviewed, est.n_sampled, est.n_total,
                    est.method, _join(est.note, note), est.ci_raw, est.df, est.estimate_raw)


def linearised_residuals(judge: Mapping[str, BlockCounts], strata: Mapping[str, str],
                         sampled: Mapping[str, BlockCounts], *, certain: Mapping[str, BlockCounts] | None = None,
                         types: Sequence[str] | None = None, type_name: str = "avg",
                         metric: str = "f1") -> dict[str, float]:
    """z_b = ∇g · (c^H_b − c^J_b) per sampled block (§4.2 step 6), the residuals `sampling.next_unit` and
    `sampling.reviews_to_target` take for a P/R/F1 target. ∇g is taken at the current estimate, or at the
    judge-only totals while some stratum has no review."""
    tot, ts = prf_totals(judge, strata, sampled, certain=certain, types=types)
    at = tot.total if tot.total is not None else tot.judge
    _, _, grad = delta_method(_metric_fn(ts, type_name, metric), at, np.zeros((at.size, at.size)))
    fj, fh = _flatten({b: judge[b] for b in sampled}, ts), _flatten(sampled, ts)
    return {b: float(grad @ (fh[b] - fj[b])) for b in sampled}


# ---------------------------------------------------------------- what the shell shows


def headline(est: Estimate, reviewed_so_far: float | None = None) -> dict[str, Any]:
    """The audited headline as plain JSON.

    Keys: `estimate` and `ci` (under full review; None with a `note` when too few reviews), `n_reviewed`,
    `n_total` (blocks), `judge_only` (the score with the judge's labels), `reviewed_so_far` (the plug-in score:
    human labels where reviewed, judge elsewhere — biased towards the judge, shown for reference), `bias`
    (judge_only − estimate: how much the judge over-states the score) and `bias_ci` (its interval; the
    judge-only score is a known constant, so it is the estimate's interval mirrored: the shown estimate and the
    shown interval, so the bias lies in its interval also where an estimate past the metric's range was moved in).
    """
    bias = None if est.estimate is None else est.judge_only - est.estimate
    bias_ci = None
    if est.ci is not None:
        bias_ci = [est.judge_only - est.ci[1], est.judge_only - est.ci[0]]
    return {
        "estimate": est.estimate,
        "ci": list(est.ci) if est.ci is not None else None,
        "n_reviewed": est.n_reviewed,
        "n_total": est.n_total,
        "judge_only": est.judge_only,
        "reviewed_so_far": reviewed_so_far,
        "bias": bias,
        "bias_ci": bias_ci,
        "note": est.note,
    }
