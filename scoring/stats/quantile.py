"""The median of a per-block value under full human review, from a stratified sample of reviewed blocks.

A median is no function of totals, so the difference estimator is applied to the distribution function instead
(prediction-powered inference for quantiles, Angelopoulos et al. 2023, here stratified and over a finite
population). Each block b of the cell's population has a value with distribution F^J_b under the judge's labels
and F^H_b once reviewed (a distribution, not a number, so a rank that is uniform inside a tie block fits too).
With strata h, M_h blocks not reviewed by hand and a simple random sample s_h of m_h of them:

    N·F̂(x) = Σ_certain F^H_b(x) + Σ_rest F^J_b(x) + Σ_h (M_h/m_h) Σ_{b∈s_h} (F^H_b(x) − F^J_b(x))

unbiased for N·F(x) at every x. The estimate is the median of F̂ (made monotone): the midpoint of its lower and
upper ½-quantiles, which is `statistics.median` for a full review of single-valued blocks. Blocks outside the
cell's population (another subset) are zero vectors: they stay in their stratum, as in domain estimation.

The family's median rule (`rule`): where a block's value is random (a rank inside a tie block), the family may
report another median than F's, e.g. retrieval's expected median over tie orders, E[median], which is not the
median of the averaged distribution function (the demo BM25 run: 215.414 against 215.0). The estimate is then the
family's median of the population as reviewed so far (reviewed blocks with their human distributions, the rest
with the judge's), moved by what the sample says the rest would move F̂'s median:

    θ̂ = rule(reviewed so far) + median(F̂) − median(F of the population as reviewed so far)

so a complete review gives the family's value exactly, blocks that agree with the judge move nothing, and with
single-valued blocks (no ties) the two medians are equal and θ̂ = median(F̂). With spread values, median(·) is
F's median on straight lines between its points (`crossing`), smooth in the blocks as the family's expected median
is, so the gap between the two barely moves with what is reviewed (the BM25 demo: 0.903 under the judge, the truth
and partial reviews alike, to ±0.001; F's grid median gave gaps from 0.16 to 0.74, and an estimate that missed
the truth by 0.24 at 120 of 252 queries). The intervals are taken on the same median and move by the same shift.

Interval: a stratified bootstrap of the sample (each stratum's reviewed blocks resampled with replacement, its
correction rescaled by √((1 − m_h/M_h)·m_h/(m_h − 1)), the Rao–Wu rescaling, so a fully reviewed stratum adds
no variance), percentile interval of the bootstrap medians, widened where needed to Woodruff's interval with the
t quantile at each point's Welch-Satterthwaite degrees of freedom (the totals' rule, `Totals.effective_df`: the
bootstrap knows no t correction and is too narrow when a thin stratum carries the median). The same withholding
rules as the totals estimators (`estimators.MIN_REVIEWS`, `MIN_DIFFERING`) apply.

Anytime interval (`median_estimates`): the test inversion of the asymptotic confidence sequence
(`confidence_sequence.multiplier`) on F̂, as Woodruff's interval inverts the normal one: the median θ has
F(θ) ≥ ½, so the interval runs from the first x with F̂(x) + m(n)·SE(F̂(x)) ≥ ½ to the first x with
F̂(x) − m(n)·SE(F̂(x)) > ½, n the sampled blocks. SE(F̂(x)) is that of the stratified difference estimate of the
indicator 1{value ≤ x} (the cdf vectors through `difference.difference_totals`, the estimators' Jeffreys
variance), and, as for the totals, the interval is never narrower than the fixed-n one (docs/anytime.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from scoring.nouns import Noun
from scoring.stats.confidence_sequence import multiplier, planned_n_for
from scoring.stats.difference import INSUFFICIENT, Totals, difference_totals
from scoring.stats.estimators import MIN_DIFFERING, MIN_REVIEWS, VARIANCE, Estimate, stratum_df, unsized_strata

Distribution = tuple[Sequence[float], Sequence[float]]
"""(values, probabilities) of one block's value; None: the block is not in the cell's population."""
MedianRule = Callable[[Sequence[Distribution]], float]
"""The family's median of blocks whose values are independent draws from these distributions
(`TaskFamily.median_of_documents`)."""
METHOD = "ppi-quantile+stratified-bootstrap"
ANYTIME_METHOD = "ppi-quantile+anytime-inversion"
N_BOOT = 1000


class MedianEstimates(NamedTuple):
    fixed: Estimate
    """Bootstrap interval: valid for a sample size fixed in advance."""
    anytime: Estimate
    """Confidence-sequence inversion: valid however the reviewer decides when to stop."""


def _cdfs(dists: Mapping[str, Distribution | None], grid: np.ndarray) -> dict[str, np.ndarray]:
    out = {}
    for b, d in dists.items():
        cdf = np.zeros(grid.size)
        if d is not None:
            values, probs = np.asarray(d[0], dtype=float), np.asarray(d[1], dtype=float)
            np.add.at(cdf, np.searchsorted(grid, values), probs)
            cdf = np.cumsum(cdf)
        out[b] = cdf
    return out


def median_of_cdf(cdf: np.ndarray, grid: np.ndarray, eps: float = 1e-9) -> float:
    """Midpoint of the lower (first F ≥ ½) and upper (first F > ½) ½-quantiles of a distribution function on
    `grid`."""
    f = np.clip(np.maximum.accumulate(cdf), 0.0, 1.0)
    lo = int(np.searchsorted(f, 0.5 - eps, side="left"))
    hi = int(np.searchsorted(f, 0.5 + eps, side="right"))
    last = grid.size - 1
    return float((grid[min(lo, last)] + grid[min(hi, last)]) / 2)


def crossing(cdf: np.ndarray, grid: np.ndarray, level: float = 0.5) -> float:
    """Where a distribution function on `grid`, drawn as straight lines between its points (made monotone),
    first reaches `level`: a median that moves smoothly with the blocks' distributions (`median_estimates`)."""
    f = np.maximum.accumulate(cdf)
    i = int(np.searchsorted(f, level, side="left"))
    if i == 0 or i >= grid.size:
        return float(grid[min(i, grid.size - 1)])
    return float(grid[i - 1] + (level - f[i - 1]) / (f[i] - f[i - 1]) * (grid[i] - grid[i - 1]))


def median_estimate(judge: Mapping[str, Distribution | None], strata: Mapping[str, str],
                    sampled: Mapping[str, Distribution | None], *,
                    certain: Mapping[str, Distribution | None] | None = None, level: float = 0.95,
                    n_boot: int = N_BOOT, seed: int = 0, min_reviews: int = MIN_REVIEWS,
                    min_differing: int = MIN_DIFFERING, exact: float | None = None,
                    judge_only: float | None = None, rule: MedianRule | None = None,
                    own_errors: bool = False) -> Estimate:
    """Median of the blocks' values under full human review with its fixed-n (bootstrap) interval; arguments as
    `median_estimates`."""
    return median_estimates(judge, strata, sampled, certain=certain, level=level, n_boot=n_boot, seed=seed,
                            min_reviews=min_reviews, min_differing=min_differing, exact=exact,
                            judge_only=judge_only, rule=rule, own_errors=own_errors).fixed


def median_estimates(judge: Mapping[str, Distribution | None], strata: Mapping[str, str],
                     sampled: Mapping[str, Distribution | None], *,
                     certain: Mapping[str, Distribution | None] | None = None, level: float = 0.95,
                     n_boot: int = N_BOOT, seed: int = 0, min_reviews: int = MIN_REVIEWS,
                     min_differing: int = MIN_DIFFERING, exact: float | None = None,
                     judge_only: float | None = None, planned_n: int | None = None,
                     rule: MedianRule | None = None, own_errors: bool = False) -> MedianEstimates:
    """Median of the blocks' values under full human review, with its fixed-n and anytime intervals (see the
    module docstring). Both carry the same point; the anytime one equals the fixed-n one where that is exact or
    withheld.

    Args:
        judge: the value's distribution under judge labels for EVERY block (None: not in the population).
        strata: stratum of every block not in `certain`.
        sampled: distribution under human labels of the blocks reviewed through the random queue.
        certain: the same for hand-reviewed blocks (and blocks no review affects): exact, never scaled up.
        exact: the family's own value when every block is known, as its scorer computed it (bit for bit), used as
            the estimate of a complete review; default: `rule` of the reviewed blocks.
        judge_only: the family's value under judge labels (default: `rule` of the judge's distributions).
        rule: the family's median (`MedianRule`, see the module docstring); default: the median of the averaged
            distribution function (`statistics.median` for single-valued blocks).
        planned_n: where the confidence sequence is tuned to be tightest (`confidence_sequence.planned_n_for` of
            the plan's blocks, never from the reviews); default: that of the population's size.
        own_errors: the family's `sampling_own_error_sizes`, as for the totals (`estimators.stratum_df`): each
            stratum's degrees of freedom come from its differing blocks, and a sampled stratum none of whose draws
            differs withholds the interval where its variance reaches the median.
    """
    certain = certain or {}
    both = set(sampled) & set(certain)
    if both:
        raise ValueError(f"blocks both sampled and hand-picked: {sorted(both)[:5]}")
    unknown = [b for b in [*sampled, *certain] if b not in judge]
    if unknown:
        raise ValueError(f"blocks with no judge distribution: {unknown[:5]}")
    population = [b for b, d in judge.items() if d is not None]
    if not population:
        raise ValueError("empty population")
    values = {float(v) for part in (judge, sampled, certain) for d in part.values() if d is not None for v in d[0]}
    grid = np.array(sorted(values))
    n = len(population)
    cj, ch = _cdfs(judge, grid), _cdfs({**sampled, **certain}, grid)
    base = np.zeros(grid.size)
    size: dict[str, int] = {}
    diffs: dict[str, list[np.ndarray]] = {}
    differing = 0
    for b in judge:
        if b in certain:
            base += ch[b]
            continue
        base += cj[b]
        h = strata[b]
        size[h] = size.get(h, 0) + 1
        if b in sampled:
            d = ch[b] - cj[b]
            diffs.setdefault(h, []).append(d)
            differing += int(np.any(np.abs(d) > 1e-12))
    # with spread values (ties) the family's median is an expectation, smooth in the blocks' distributions: F's
    # median is taken on straight lines between its points (`crossing`) so that its gap to the family's stays
    # put as blocks are reviewed (the BM25 demo: 0.903 ± 0.001, against 0.16-0.74 for the grid median)
    smooth = rule is not None and any(len(d[0]) > 1 for part in (judge, sampled, certain) for d in part.values()
                                      if d is not None)
    mid = crossing if smooth else median_of_cdf
    shift, family_so_far = 0.0, None
    if rule is not None:  # the family's median of the population as reviewed so far, and its gap to F's median
        known = {**sampled, **certain}
        so_far = [known[b] if b in known else judge[b] for b in population]
        family_so_far = rule([d for d in so_far if d is not None])
        shift = family_so_far - mid(sum(ch[b] if b in known else cj[b] for b in population) / n, grid)
    if judge_only is not None:
        j_only = judge_only
    else:
        j_only = rule([judge[b] for b in population]) if rule else median_of_cdf(sum(cj.values()) / n, grid)
    n_sampled, n_certain = len(sampled), len(certain)
    reviewed = n_sampled + n_certain

    def one(estimate: float | None, ci: tuple[float, float] | None, method: str, note: str = "") -> Estimate:
        return Estimate(estimate, ci, None, j_only, reviewed, n_sampled, len(judge), method, note, ci)

    def result(estimate: float | None, ci: tuple[float, float] | None, method: str,
               note: str = "") -> MedianEstimates:
        same = one(estimate, ci, method, note)
        return MedianEstimates(same, same)

    empty = [h for h in size if not diffs.get(h)]
    if empty:
        return result(None, None, "none", f"{INSUFFICIENT}: stratum {empty[0]!r} has no reviewed block "
                                          f"(0 of {size[empty[0]]})")
    corrections = {h: np.array(ds) for h, ds in diffs.items()}
    point_cdf = base + sum(size[h] / len(ds) * ds.sum(axis=0) for h, ds in corrections.items())
    complete = all(len(corrections[h]) >= size[h] for h in size)
    if complete:
        value = exact if exact is not None else family_so_far if family_so_far is not None else median_of_cdf(
            point_cdf / n, grid)
        return result(value, (value, value), "exact")
    estimate = mid(point_cdf / n, grid) + shift
    lonely = [h for h, ds in corrections.items() if len(ds) == 1 < size[h]]
    if lonely:
        return result(estimate, None, METHOD, f"{INSUFFICIENT}: stratum {lonely[0]!r} has 1 reviewed block of "
                                              f"{size[lonely[0]]}; its variance needs 2")
    if n_sampled < min_reviews:
        return result(estimate, None, METHOD, f"{INSUFFICIENT}: n < {min_reviews}")
    if differing < min_differing:
        return result(estimate, None, METHOD, f"{INSUFFICIENT}: only {Noun('reviewed block').count(differing)} "
                                              f"{'differs' if differing == 1 else 'differ'} from the judge "
                                              f"(needs {min_differing})")
    rng = np.random.default_rng(seed)
    boot = np.tile(base, (n_boot, 1))
    for h, ds in corrections.items():
        m, big_m = len(ds), size[h]
        mean = ds.mean(axis=0)
        if m >= big_m:
            boot += big_m * mean
            continue
        moving = np.flatnonzero(np.any(np.abs(ds) > 1e-12, axis=1))
        counts = np.zeros((n_boot, m))
        draws = rng.integers(0, m, size=(n_boot, m))
        np.add.at(counts, (np.repeat(np.arange(n_boot), m), draws.ravel()), 1.0)
        star = counts[:, moving] @ ds[moving] / m if moving.size else np.zeros((n_boot, grid.size))
        scale = np.sqrt((1 - m / big_m) * m / (m - 1))
        boot += big_m * (mean + scale * (star - mean))
    medians = np.array([mid(row / n, grid) for row in boot]) + shift
    alpha = 1 - level
    lo, hi = np.quantile(medians, [alpha / 2, 1 - alpha / 2])
    tot = difference_totals(cj, strata, {b: ch[b] for b in sampled}, certain={b: ch[b] for b in certain},
                            variance=VARIANCE)
    if tot.total is None or tot.cov is None:  # not reached: every stratum has 2+ reviewed blocks here
        fixed = (float(min(lo, estimate)), float(max(hi, estimate)))
        return MedianEstimates(one(estimate, fixed, METHOD), one(estimate, None, "none", tot.reason or ""))
    f = tot.total / n
    if own_errors:  # the median's point of F̂: the stratum variances that reach it (`estimators.unsized_strata`)
        at = np.zeros(grid.size)
        at[min(int(np.searchsorted(np.maximum.accumulate(f), 0.5)), grid.size - 1)] = 1.0
        unsized = unsized_strata(tot, at)
        if unsized:
            return result(estimate, None, METHOD, unsized)
    se = np.sqrt(np.clip(np.diag(tot.cov), 0.0, None)) / n
    eps = 1e-9

    def inverted(half: np.ndarray) -> tuple[float, float]:
        """Woodruff's inversion: the x where F̂(x) ± half crosses ½."""
        if smooth:
            return crossing(f + half, grid) + shift, crossing(f - half, grid) + shift
        low = np.flatnonzero(f + half >= 0.5 - eps)
        high = np.flatnonzero(f - half > 0.5 + eps)
        return (float(grid[low[0] if low.size else -1]) + shift, float(grid[high[0] if high.size else -1]) + shift)

    # the bootstrap percentile interval, widened to Woodruff's with the t quantile at each x's Satterthwaite
    # degrees of freedom (the totals' rule, `Totals.effective_df`): the bootstrap alone knows no t correction
    # and under-covered where one thin stratum carries the median (bench/README.md as of a32f770, issue 39 point 4)
    w_lo, w_hi = inverted(_t_quantile(tot, level, own_errors) * se)
    fixed = (float(min(lo, w_lo, estimate)), float(max(hi, w_hi, estimate)))
    if fixed[1] - fixed[0] <= 1e-12 * max(1.0, abs(estimate)):
        # blocks are still unreviewed, yet no reviewed block moved the distribution function at the median, so every
        # bootstrap median and Woodruff's inversion land on the estimate itself: a zero-width interval that says
        # nothing of what the unreviewed blocks could do (retrieval's median rank at 120 of 252 queries: 11 of its
        # 17 misses in 200 rounds, bench/README.md as of a32f770, issue 39 point 4)
        return result(estimate, None, METHOD, f"{INSUFFICIENT}: no reviewed block moved the distribution at the "
                                              "median, so the sample cannot size its interval yet")
    a_lo, a_hi = inverted(multiplier(n_sampled, planned_n=planned_n or planned_n_for(n), alpha=alpha) * se)
    anytime = (min(a_lo, fixed[0]), max(a_hi, fixed[1]))
    return MedianEstimates(one(estimate, fixed, METHOD), one(estimate, anytime, ANYTIME_METHOD))


def _t_quantile(tot: Totals, level: float, own_errors: bool = False) -> np.ndarray:
    """Per point of the distribution function: the t quantile at its Welch-Satterthwaite degrees of freedom
    (`Totals.effective_df` with the gradient the indicator of that point, each stratum's from
    `estimators.stratum_df`), the normal one without any."""
    from scipy import stats as st  # 0.7 s to import: only where a median is estimated (not `queue --next`, #38)

    z = float(st.norm.ppf(0.5 + level / 2))
    if not tot.parts:
        return np.full(tot.judge.size, z)
    v = np.array([np.clip(np.diag(c), 0.0, None) for c, _ in tot.parts.values()])
    k = np.array([stratum_df(m, tot.strata[h].differing, own_errors) for h, (_, m) in tot.parts.items()],
                 dtype=float)[:, None]
    num, den = v.sum(axis=0) ** 2, (v * v / k).sum(axis=0)
    nu = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)
    return np.where(np.isfinite(nu), st.t.ppf(0.5 + level / 2, np.where(np.isfinite(nu), nu, 1.0)), z)
