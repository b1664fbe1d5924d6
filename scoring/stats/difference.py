"""Stratified difference estimator of population totals, with finite-population correction (partial-audit.md §4).

Population: every block of the run (a block is the set of decisions a reviewer settles together). Each block
has a judge-only value vector c^J (known for all) and, once reviewed, a human value vector c^H. The estimand is
the total Σ_all c^H, i.e. the run's counts if every decision were reviewed. With strata h, M_h blocks and a
simple random sample of m_h of them:

    T̂ = Σ_all c^J + Σ_h (M_h/m_h) Σ_{b∈s_h} (c^H_b − c^J_b)
    Σ̂ = Σ_h M_h²(1 − m_h/M_h) Cov_h(d)/m_h          (sample covariance, ddof 1)

Hand-reviewed ("certain") blocks are known exactly: they leave their stratum's population and add their human
vector as is; they are never scaled up. A fully reviewed stratum contributes no variance, so a full review
gives T̂ = Σ c^H with Σ̂ = 0.

Cov_h(d) is the plain sample covariance (`variance="plain"`), or, with `variance="jeffreys"` (what `estimate`
uses), a hurdle form of it: a block either agrees with the judge (d = 0) or differs by e, so
Cov_h(d) = m/(m − 1)·[p_h E(eeᵀ) − p_h² E(e)E(e)ᵀ], which is the sample covariance exactly when p_h = x_h/m_h
(x_h differing blocks). The differing rate p_h gets the Jeffreys posterior mean (x_h + ½)/(m_h + 1) when every sampled
block differs, and otherwise never less (max with x_h/m_h), so a stratum whose few sampled blocks all agree, or
all differ by one vector, no longer claims zero variance; E(eeᵀ), E(e) are the
stratum's own differing blocks, or, where none of its sampled blocks differs, those of the strata still being
sampled (the error size such a stratum is assumed to have). Unlike `variance="pooled"` (the former smoothing: w
pseudo-observations of the covariance of all sampled differences, between-stratum spread and other strata's
high-leverage errors included), it never lends one stratum another's error sizes once it has its own
(docs/anytime.md, "What each stratum assumes"; bench/smoothing_coverage.py).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from typing import Literal, NamedTuple

import numpy as np

INSUFFICIENT = "insufficient reviews"
POOLED_PRIOR_WEIGHT = 2.0
"""The former smoothing (`variance="pooled"`): 2 pseudo-observations of the covariance of all sampled differences
in every stratum. It lent every stratum the between-stratum spread and other strata's high-leverage errors:
2-3× too wide with a lenient or biased judge (bench/smoothing_coverage.py); kept for comparison."""

Vector = float | Sequence[float] | np.ndarray
Variance = Literal["plain", "pooled", "jeffreys"]


@dataclass(frozen=True)
class StratumSummary:
    size: int
    """M_h: blocks in the population to estimate (hand-reviewed blocks excluded)."""
    sampled: int
    """m_h: blocks reviewed through the random queue."""
    differing: int
    """Sampled blocks whose human vector differs from the judge's."""
    assumption: str = ""
    """What this stratum's variance rests on (fully reviewed, its own sample, or a prior where the sample is
    thin), in words the estimate can show."""


@dataclass(frozen=True)
class Totals:
    """Estimated totals of a run under human labels, with their covariance."""

    total: np.ndarray | None
    """(K,) estimated Σ c^H; None when some stratum has no review (see `reason`)."""
    cov: np.ndarray | None
    """(K, K) estimated covariance of `total`; None when some stratum has fewer than 2 reviews."""
    judge: np.ndarray
    """(K,) Σ c^J: the judge-only totals."""
    df: int
    """Σ_h (m_h − 1) over strata not fully reviewed (degrees of freedom of the t quantile)."""
    n_sampled: int
    n_certain: int
    n_total: int
    """Blocks in the run (sampled or not, hand-reviewed included)."""
    strata: dict[str, StratumSummary]
    reason: str | None = None
    """Why `total` or `cov` is missing, starting with "insufficient reviews"."""
    parts: dict[str, tuple[np.ndarray, int]] = field(default_factory=dict)
    """Per sampled stratum not fully reviewed: its (K, K) share of `cov` and its m_h (`effective_df`)."""

    def effective_df(self, grad: np.ndarray) -> float:
        """Welch-Satterthwaite degrees of freedom of the variance of grad · total: (Σ v_h)² / Σ v_h²/(m_h − 1),
        v_h = grad · cov_h · grad (Cochran, Sampling Techniques, §5.4). It is Σ (m_h − 1) when every stratum weighs
        the same and falls to one stratum's m_h − 1 when that stratum carries the variance: a t quantile on it
        widens an interval resting on a few reviews of one stratum (a stratum of one review counts 1)."""
        v = [(float(grad @ c @ grad), max(m - 1, 1)) for c, m in self.parts.values()]
        num = sum(x for x, _ in v) ** 2
        den = sum(x * x / k for x, k in v)
        return num / den if den > 0 else float(self.df)

    @property
    def complete(self) -> bool:
        """Every block has a human vector: the totals are exact."""
        return all(s.sampled >= s.size for s in self.strata.values())

    @property
    def n_differing(self) -> int:
        return sum(s.differing for s in self.strata.values())


def _vec(v: Vector) -> np.ndarray:
    if type(v) is np.ndarray and v.ndim == 1 and v.dtype == np.float64:  # the common case, without the calls
        return v
    return np.atleast_1d(np.asarray(v, dtype=float))


class _Stacked(NamedTuple):
    blocks: list[str]
    rows: list[np.ndarray]
    matrix: np.ndarray
    """One row per block, in `blocks` order: the sums below are matrix sums, not a Python loop over blocks."""
    where: dict[str, int]


def _stack(judge: Mapping[str, Vector]) -> _Stacked:
    blocks, given = list(judge), list(judge.values())
    # blocks mostly share a few vector objects (a run's documents with equal counts: 114 distinct in 100,000
    # abstracts): each distinct one is converted, checked and stacked once, then repeated by index; the walks over
    # every block are C loops (map, zip) (#38)
    ids = list(map(id, given))
    objects = dict(zip(ids, given, strict=True))  # first appearance order
    position = dict(zip(objects, range(len(objects)), strict=True))
    pick = list(map(position.__getitem__, ids))
    distinct = [_vec(v) for v in objects.values()]
    rows = list(map(distinct.__getitem__, pick))
    k = len(rows[0])
    for i, cj in enumerate(distinct):
        if cj.shape != (k,):
            b = blocks[pick.index(i)]
            raise ValueError(f"block {b!r}: vector of length {cj.size}, expected {k}")
    matrix = np.array(distinct)[np.array(pick, dtype=np.intp)]
    matrix.flags.writeable = False  # shared by every estimate from these vectors (`BlockVectors`)
    return _Stacked(blocks, rows, matrix, dict(zip(blocks, range(len(blocks)), strict=True)))


class BlockVectors(dict):
    """Block -> judge vector, read-only, stacked into one matrix once (`difference_totals` reads a run's judge
    vectors in every estimate of every page render: stacking 100,000 of them took 0.3 s a call, #38). Pass one as
    `judge` where the same vectors are estimated from again and again."""

    def stacked(self) -> _Stacked:
        found = self.__dict__.get("_stacked")
        if found is None:
            found = self.__dict__["_stacked"] = _stack(self)
        return found

    def in_order_sum(self) -> np.ndarray:
        """`sum(self.values())`, once (the same additions in the same order: the same number)."""
        found = self.__dict__.get("_sum")
        if found is None:
            found = self.__dict__["_sum"] = sum(self.values())
            found.flags.writeable = False
        return found

    def _read_only(self, *_args, **_kwargs):
        raise TypeError("BlockVectors is read-only: its stacked matrix would no longer match")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _read_only  # type: ignore


def difference_totals(judge: Mapping[str, Vector], strata: Mapping[str, str], sampled: Mapping[str, Vector], *,
                      certain: Mapping[str, Vector] | None = None, prior_weight: float = 0.0,
                      lam: float = 1.0, variance: Variance | None = None) -> Totals:
    """Stratified difference estimate of Σ_all c^H.

    With `lam` = λ the judge is trusted in part (power tuning, PPI++: Angelopoulos, Duchi & Zrnic 2023):
    T̂_λ = λ Σ_all c^J + Σ_h (M_h/m_h) Σ_{b∈s_h} (c^H_b − λ c^J_b), unbiased for every fixed λ; λ = 1 is the
    difference estimator, λ = 0 the stratified expansion of the reviewed blocks alone (the judge unused).

    Args:
        judge: judge-only vector c^J of EVERY block of the run.
        strata: stratum of every block (e.g. `Plan.stratum_of()`).
        sampled: human vector c^H of the blocks reviewed through the seeded random queue, and only those.
        certain: human vector of blocks reviewed by hand (or with no decision at all, whose counts are fixed);
            counted exactly, never extrapolated.
        prior_weight: w > 0 adds w pseudo-observations of the pooled covariance of all sampled differences to
            every stratum's covariance, (SS_h + w·Σ_pooled)/(m_h − 1 + w): a unanimous or tiny stratum then no
            longer claims zero variance (conservative; negligible once m_h ≫ w). 0 = the plain estimator.
            Only with `variance="pooled"` (the default when w > 0).
        variance: `plain` (sample covariance), `pooled` (the pseudo-observations above) or `jeffreys` (the
            hurdle form with a Jeffreys differing rate, module docstring). Default: `pooled` if prior_weight > 0,
            else `plain`.
    """
    mode = variance or ("pooled" if prior_weight > 0 else "plain")
    if mode not in ("plain", "pooled", "jeffreys"):
        raise ValueError(f"unknown variance {mode!r}")
    if mode == "pooled" and prior_weight <= 0:
        prior_weight = POOLED_PRIOR_WEIGHT
    certain = certain or {}
    # the checks walk 100,000 blocks at 100,000 abstracts: set operations first, lists only to name what failed (#38)
    for name, part in (("sampled", sampled), ("certain", certain)):
        if not judge.keys() >= part.keys():
            raise ValueError(f"{name} blocks with no judge vector: {[b for b in part if b not in judge][:5]}")
    both = [b for b in sampled if b in certain]
    if both:
        raise ValueError(f"blocks both sampled and hand-picked: {sorted(both)[:5]}")
    if not judge.keys() - strata.keys() <= certain.keys():
        raise ValueError(f"blocks with no stratum: {[b for b in judge if b not in strata and b not in certain][:5]}")
    if not judge:
        raise ValueError("empty population")
    blocks, rows, j_all, where = judge.stacked() if isinstance(judge, BlockVectors) else _stack(judge)
    k = j_all.shape[1]
    judge_total = j_all.sum(axis=0)
    cov = np.zeros((k, k))
    at = np.sort(np.fromiter(map(where.__getitem__, certain), dtype=np.intp, count=len(certain)))  # judge's order
    is_certain = np.zeros(len(blocks), dtype=bool)
    is_certain[at] = True
    total = lam * j_all[~is_certain].sum(axis=0)
    if certain:
        known = j_all[at]  # a certain block's human vector is mostly its judge vector itself: only others copied
        order = at.tolist()
        given = list(map(certain.__getitem__, map(blocks.__getitem__, order)))
        for n in np.flatnonzero(list(map(operator.is_not, given, map(rows.__getitem__, order)))).tolist():
            ch = _vec(given[n])
            if ch.shape != (k,):
                raise ValueError(f"certain block {blocks[order[n]]!r}: vector of length {ch.size}, expected {k}")
            known[n] = ch
        total = total + known.sum(axis=0)
    size: dict[str, int] = dict(Counter(map(strata.__getitem__, compress(blocks, (~is_certain).tolist()))))
    diffs: dict[str, list[np.ndarray]] = {}
    differing: dict[str, int] = {}
    for i in sorted(where[b] for b in sampled):  # the judge's block order, as the sums above
        b = blocks[i]
        h, cj, ch = strata[b], rows[i], _vec(sampled[b])
        diffs.setdefault(h, []).append(ch - lam * cj)
        differing[h] = differing.get(h, 0) + int(np.any(ch != cj))
    summaries, reasons, df = {}, [], 0
    parts: dict[str, tuple[np.ndarray, int]] = {}
    pooled = np.zeros((k, k))
    all_d = [x for ds in diffs.values() for x in ds]
    if mode == "pooled" and len(all_d) >= 2:
        pooled = np.cov(np.array(all_d).reshape(-1, k), rowvar=False, ddof=1).reshape(k, k)
    errors = None
    if mode == "jeffreys":  # error sizes of the strata still sampled (a fully reviewed one is another population)
        open_d = [x for h, ds in diffs.items() if len(ds) < size[h] for x in ds if np.any(x != 0)]
        errors = _ErrorSize(open_d or [x for x in all_d if np.any(x != 0)], k)
    single_ok = mode != "plain"
    for h in sorted(size):
        d = np.array(diffs.get(h, []), dtype=float).reshape(-1, k)
        m, big_m = len(d), size[h]
        if m == 0:
            summaries[h] = StratumSummary(big_m, m, differing.get(h, 0), "no reviewed block: not estimable")
            reasons.append(f"{INSUFFICIENT}: stratum {h!r} has no reviewed block (0 of {big_m})")
            continue
        total += big_m / m * d.sum(axis=0)
        if m >= big_m:
            summaries[h] = StratumSummary(big_m, m, differing.get(h, 0), "fully reviewed: exact, no variance")
            continue
        if m == 1 and not single_ok:
            summaries[h] = StratumSummary(big_m, m, differing.get(h, 0), "1 reviewed block: no variance")
            reasons.append(f"{INSUFFICIENT}: stratum {h!r} has 1 reviewed block of {big_m}; its variance needs 2")
            continue
        df += m - 1
        if errors is not None:
            within, assumption = errors.hurdle_cov(d)
        else:
            centred = d - d.mean(axis=0)
            within = (centred.T @ centred + prior_weight * pooled) / (m - 1 + prior_weight)
            assumption = (f"simple random sample of {m} of {big_m}: sample covariance" if mode == "plain" else
                          f"simple random sample of {m} of {big_m}: sample covariance with {prior_weight:g} "
                          "pseudo-observations of the covariance of all sampled differences")
        summaries[h] = StratumSummary(big_m, m, differing.get(h, 0), assumption)
        parts[h] = (big_m * big_m * (1 - m / big_m) * within / m, m)
        cov += parts[h][0]
    no_total = any(s.sampled == 0 for s in summaries.values())
    no_cov = no_total or (not single_ok and any(s.sampled == 1 < s.size for s in summaries.values()))
    return Totals(None if no_total else total, None if no_cov else cov, judge_total, df, len(sampled),
                  len(certain), len(judge), summaries, "; ".join(reasons) or None, parts)


class _ErrorSize:
    """The hurdle covariance of one stratum's differences (module docstring, `variance="jeffreys"`), with the size
    of a judge error pooled over the differing blocks of the strata still being sampled, for a stratum where no
    sampled block differs."""

    def __init__(self, nonzero: Sequence[np.ndarray], k: int) -> None:
        e = np.array(nonzero, dtype=float).reshape(-1, k)
        self.n = len(e)
        self.second = e.T @ e / self.n if self.n else np.zeros((k, k))
        self.first = e.mean(axis=0) if self.n else np.zeros(k)

    def hurdle_cov(self, d: np.ndarray) -> tuple[np.ndarray, str]:
        m, k = d.shape
        e = d[np.any(d != 0, axis=1)]
        x = len(e)
        # Jeffreys at both ends: an all-agree or an all-differ sample (a single review included) never claims zero
        # variance; between them a rate is only ever raised, so once half the sample differs it is the observed one
        jeffreys = (x + 0.5) / (m + 1)
        rate = jeffreys if x == m else max(x / m, jeffreys)
        ddof = m / (m - 1) if m > 1 else 1.0
        if x:
            second, first = e.T @ e / x, e.mean(axis=0)
            how = f"{x} of {m} sampled blocks differ: Jeffreys rate {rate:.3f}, its own error sizes"
        elif self.n:
            second, first = self.second, self.first
            how = (f"none of its {m} sampled blocks differs: assumes an error rate near the Jeffreys {rate:.3f} "
                   f"= ½/({m}+1), errors the size of the {self.n} seen in the sampled strata")
        else:
            return np.zeros((k, k)), f"none of its {m} sampled blocks differs, nor any other sampled block: 0"
        return ddof * (rate * second - rate * rate * np.outer(first, first)), how


def tuned_lambda(judge: Mapping[str, Vector], strata: Mapping[str, str], sampled: Mapping[str, Vector],
                 grad: np.ndarray, *, certain: Mapping[str, Vector] | None = None) -> float | None:
    """λ in [0, 1] minimising the estimated variance of ∇g · T̂_λ (PPI++'s power tuning, stratified and with the
    finite-population correction): with u = ∇g·c^H, v = ∇g·c^J on each stratum's sample and weights
    w_h = M_h²(1 − m_h/M_h)/m_h, λ* = Σ_h w_h Cov_h(u, v) / Σ_h w_h Var_h(v), clipped to [0, 1].
    None when no stratum has two reviewed blocks (or v never varies): nothing to tune on."""
    certain = certain or {}
    grad = np.asarray(grad, dtype=float)
    size: dict[str, int] = {}
    uv: dict[str, list[tuple[float, float]]] = {}
    for b in judge:
        if b in certain:
            continue
        h = strata[b]
        size[h] = size.get(h, 0) + 1
        if b in sampled:
            uv.setdefault(h, []).append((float(grad @ _vec(sampled[b])), float(grad @ _vec(judge[b]))))
    num = den = 0.0
    for h, pairs in uv.items():
        m, big_m = len(pairs), size[h]
        if m < 2 or m >= big_m:
            continue
        w = big_m * big_m * (1 - m / big_m) / m
        a = np.array(pairs)
        c = np.cov(a[:, 0], a[:, 1], ddof=1)
        num += w * c[0, 1]
        den += w * c[1, 1]
    if den <= 0:
        return None
    return float(min(1.0, max(0.0, num / den)))


def jeffreys_total_interval(strata: Mapping[str, str], sampled: Mapping[str, float], *,
                            certain: Mapping[str, float] | None = None, level: float = 0.95) -> tuple[float, float]:
    """Finite-population Jeffreys interval for the number of positives Σ_all H (H ∈ {0, 1}), §4.1.

    Per stratum, p_h ~ Beta(x_h + ½, m_h − x_h + ½) and the unreviewed positives are Binomial(M_h − m_h, p_h),
    i.e. beta-binomial; the strata are independent, so the exact distribution of the total is the convolution
    of their pmfs (no simulation). The judge label is not used: it assumes strata built on the judge label, so
    it is constant inside each stratum. Use it when a stratum's sample is tiny or unanimous, where the Wald
    variance is 0 or unreliable.
    """
    certain = certain or {}
    known = sum(float(v) for v in sampled.values()) + sum(float(v) for v in certain.values())
    size: dict[str, int] = {}
    pos: dict[str, float] = {}
    count: dict[str, int] = {}
    for b, h in strata.items():
        if b in certain:
            continue
        size[h] = size.get(h, 0) + 1
        if b in sampled:
            v = float(sampled[b])
            if v not in (0.0, 1.0):
                raise ValueError(f"block {b!r}: Jeffreys interval needs 0/1 human values, got {v}")
            pos[h] = pos.get(h, 0.0) + v
            count[h] = count.get(h, 0) + 1
    from scipy import stats as st  # 0.7 s to import: only for this interval (not `queue --next`, #38)

    pmf = np.ones(1)
    for h, big_m in size.items():
        m, x = count.get(h, 0), pos.get(h, 0.0)
        rest = big_m - m
        if rest == 0:
            continue
        if m == 0:
            raise ValueError(f"{INSUFFICIENT}: stratum {h!r} has no reviewed block")
        pmf = np.convolve(pmf, st.betabinom.pmf(np.arange(rest + 1), rest, x + 0.5, m - x + 0.5))
    cdf = np.cumsum(pmf)
    alpha = 1 - level
    lo = int(np.searchsorted(cdf, alpha / 2 - 1e-12))
    hi = int(np.searchsorted(cdf, 1 - alpha / 2 - 1e-12))
    return known + lo, known + min(hi, len(pmf) - 1)


UNSEEN_MOVE_SIZE = 1.0
"""The size of a move of one count that no sampled block of a stratum shows: counts are whole numbers, so a review
that moves a count moves it by at least 1."""


def unseen_moves(tot: Totals, judge: Mapping[str, Vector], strata: Mapping[str, str],
                 sampled: Mapping[str, Vector], movable: Mapping[str, Sequence[bool] | np.ndarray], *,
                 certain: Mapping[str, Vector] | None = None) -> Totals:
    """`tot` with the variance of the moves the sample has not seen: per stratum and per count that some of its
    blocks can move (`movable[b][k]`: a review of block b can change count k, known from the judge side, e.g. by
    recounting b with every answer flipped) but no sampled block of the stratum moved, a Jeffreys rate of unit moves,
    p_hk = (share of the stratum's blocks where k can move) · ½/(sampled blocks where it can move + 1), adds
    M_h²(1 − m_h/M_h)/m_h · m_h/(m_h − 1) · p_hk to the variance of count k (no covariance: conservative for a
    difference whose systems share the move). `movable` may name only some of a stratum's blocks (every sampled
    one among them): the share is then that of the blocks it names, a random subset when they are the first of the
    plan's seeded order (`audit.review.movable.documents_to_recount`).

    Why (docs/board.md, "Counts the sample never saw move"): a count that errs in a few documents (CHIMERA's fp/fn,
    which move only when a flip changes whether an entity is matched at all) is absent from most samples of 45 of
    120 documents; the difference estimator then gives it its judge total with zero variance, and the interval
    misses on the side the judge errs. A count a sampled block moved keeps the hurdle variance it has; a full
    review, or a fully reviewed stratum, adds nothing."""
    if tot.cov is None or tot.total is None or tot.complete:
        return tot
    certain = certain or {}
    k = tot.judge.size
    pop: dict[str, list[str]] = {}
    for b in judge:
        if b not in certain:
            pop.setdefault(strata[b], []).append(b)
    parts = dict(tot.parts)
    summaries = dict(tot.strata)
    cov = tot.cov.copy()
    for h, (part, m) in tot.parts.items():
        blocks = pop.get(h)
        if blocks is None:
            continue  # a share that is no stratum (a cross-fitted estimate's spread over its fold judges)
        big_m = len(blocks)
        named = [b for b in blocks if b in movable]
        if not named:
            continue
        mv = np.array([np.asarray(movable[b], dtype=bool) for b in named]).reshape(-1, k)
        drawn = [i for i, b in enumerate(named) if b in sampled]
        moved = np.zeros(k, dtype=bool)
        for i in drawn:
            moved |= np.atleast_1d(np.asarray(sampled[named[i]], dtype=float)) != np.atleast_1d(
                np.asarray(judge[named[i]], dtype=float))
        can = mv.sum(axis=0)
        rate = can / len(named) * 0.5 / (mv[drawn].sum(axis=0) + 1)
        ddof = m / (m - 1) if m > 1 else 1.0
        add = np.where(~moved & (can > 0), ddof * rate * UNSEEN_MOVE_SIZE ** 2, 0.0)
        if not add.any():
            continue
        extra = big_m * big_m * (1 - m / big_m) / m * np.diag(add)
        parts[h] = (part + extra, m)
        cov += extra
        n_unseen = int(np.count_nonzero(add))
        if h in summaries:
            said = summaries[h]
            summaries[h] = replace(said, assumption=(
                f"{said.assumption}; plus unit moves at a Jeffreys rate on {n_unseen} "
                f"count{'' if n_unseen == 1 else 's'} some of its blocks can move but none of its sampled blocks "
                "moved"))
    return replace(tot, cov=cov, parts=parts, strata=summaries)


def estimated_totals(judge: Mapping[str, Vector], strata: Mapping[str, str], sampled: Mapping[str, Vector], *,
                     certain: Mapping[str, Vector] | None = None,
                     movable: Mapping[str, Sequence[bool] | np.ndarray] | None = None,
                     variance: Variance = "jeffreys") -> Totals:
    """The estimated totals every metric's estimate starts from: `difference_totals`, with `unseen_moves` when
    `movable` is known (the single-run estimate, each system of a board, and a board's joint vectors)."""
    tot = difference_totals(judge, strata, sampled, certain=certain, variance=variance)
    return tot if movable is None else unseen_moves(tot, judge, strata, sampled, movable, certain=certain)
