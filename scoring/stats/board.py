"""Several systems scored on one gold, audited from one sample: per-system estimates, paired differences with
simultaneous intervals, and rank sets (tables-and-trained-judges.md §1; docs/board.md says why these choices).

The systems' per-document count vectors are concatenated into one joint vector per document, so one call of the
stratified difference estimator (`difference.difference_totals`) gives every system's estimated totals and their
joint covariance. A system's metric is its function of its slice of the joint totals; the difference of two
systems' metrics is one more smooth function of the joint totals, so its delta-method standard error uses the
covariance between the systems' residuals on the same documents: the pairing is in the covariance, never
assumed away.

Simultaneous intervals: Bonferroni over the K(K−1)/2 pairs (each at level 1 − α/pairs). Rank sets from them
(Mogstad, Romano, Shaikh & Wilhelm 2024): system a can hold ranks [1 + #{b surely above a}, K − #{b surely below a}].
A full review makes every interval a point, so every rank set one rank (ties: the range they share).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from scoring.stats.difference import Totals, Variance, Vector, estimated_totals
from scoring.stats.estimators import VARIANCE, Estimate, anytime_estimate, delta_method, metric_estimate

Metric = Callable[[np.ndarray], float]


def joint_vectors(per_system: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]]
                  ) -> tuple[dict[str, np.ndarray], dict[str, slice]]:
    """(document -> joint vector, system -> its slice). Every system must have a vector for every document (a
    document a system predicted nothing for still has its counts: all misses)."""
    systems = list(per_system)
    if not systems:
        raise ValueError("a board needs at least one system")
    docs = list(per_system[systems[0]])
    for s in systems[1:]:
        if set(per_system[s]) != set(docs):
            diff = sorted(set(per_system[s]) ^ set(docs))[:5]
            raise ValueError(f"system {s!r} has other documents than {systems[0]!r}: {diff}")
    try:  # every system's vectors as one matrix, side by side: one row per document
        mats = [np.array([per_system[s][d] for d in docs], dtype=float).reshape(len(docs), -1) for s in systems]
    except ValueError:  # vectors of unequal length: found and named below
        mats = None
    if mats is not None and docs and all(m.shape[1] == np.atleast_1d(np.asarray(per_system[s][docs[0]])).size
                                         for s, m in zip(systems, mats, strict=True)):
        widths_of = [m.shape[1] for m in mats]
        starts = np.cumsum([0, *widths_of])
        matrix = np.hstack(mats)
        return ({d: matrix[i] for i, d in enumerate(docs)},
                {s: slice(int(starts[i]), int(starts[i + 1])) for i, s in enumerate(systems)})
    slices, start = {}, 0
    widths = {}
    for s in systems:
        first = np.atleast_1d(np.asarray(per_system[s][docs[0]], dtype=float)) if docs else np.zeros(0)
        widths[s] = first.size
        slices[s] = slice(start, start + first.size)
        start += first.size
    joint = {}
    for d in docs:
        parts = []
        for s in systems:
            v = np.atleast_1d(np.asarray(per_system[s][d], dtype=float))
            if v.size != widths[s]:
                raise ValueError(f"system {s!r}, document {d!r}: vector of length {v.size}, expected {widths[s]}")
            parts.append(v)
        joint[d] = np.concatenate(parts)
    return joint, slices


def on_slice(g: Metric, part: slice) -> Metric:
    return lambda total: g(np.asarray(total)[part])


def difference_of(ga: Metric, gb: Metric, sa: slice, sb: slice) -> Metric:
    return lambda total: ga(np.asarray(total)[sa]) - gb(np.asarray(total)[sb])


@dataclass(frozen=True)
class PairDifference:
    a: str
    b: str
    estimate: Estimate
    """θ_a − θ_b at the nominal level (one pair alone)."""
    simultaneous: Estimate
    """The same difference at level 1 − α/pairs (all pairs at once): what rank sets read."""


@dataclass(frozen=True)
class Board:
    systems: list[str]
    per_system: dict[str, Estimate]
    """Empty when built with `per_system=False` (as are the two ranks: None)."""
    pairs: list[PairDifference]
    rank_judge: dict[str, int] | None
    rank_audited: dict[str, int] | None
    """Ranks of the point estimates (None where a system has no estimate)."""
    rank_sets: dict[str, tuple[int, int]] | None
    """[best, worst] per system at simultaneous level; None when some difference has no interval."""
    higher_is_better: bool
    level: float


TIE_TOLERANCE = 1e-12
"""Differences this small are ties: one macro F1 summed in another order is 0.20000000000000004 or
0.19999999999999998, and an exact review ranked such equal systems 1 and 2 and called the order settled."""


def competition_ranks(values: Mapping[str, float | None], *, higher_is_better: bool) -> dict[str, int] | None:
    """1 + the number of systems strictly better, by more than `TIE_TOLERANCE` ("1224" ranking: tied systems share
    the better rank); None while a system has no value (ranks among fewer systems would read as places on the whole
    board: 'empty' ranked 2nd of 3 where it is surely 3rd)."""
    if any(v is None for v in values.values()):
        return None
    sign = 1 if higher_is_better else -1
    return {s: 1 + sum(sign * (w - v) > TIE_TOLERANCE for t, w in values.items() if t != s)
            for s, v in values.items()}


def rank_sets(systems: Sequence[str], intervals: Mapping[tuple[str, str], tuple[float, float] | None], *,
              higher_is_better: bool = True) -> dict[str, tuple[int, int]] | None:
    """Rank set of each system from simultaneous intervals of θ_a − θ_b (keyed (a, b) for one order of every
    pair): b is surely better than a when the interval of θ_b − θ_a lies above 0 (below, for lower is better).
    None while a pair has no interval."""
    if any(ci is None for ci in intervals.values()):
        return None
    k = len(systems)

    def diff(b: str, a: str) -> tuple[float, float]:  # interval of θ_b − θ_a
        if (b, a) in intervals:
            return intervals[(b, a)]
        lo, hi = intervals[(a, b)]
        return (-hi, -lo)

    out = {}
    for a in systems:
        above = below = 0
        for b in systems:
            if b == a:
                continue
            lo, hi = diff(b, a)  # type: ignore[misc]
            above_0, below_0 = lo > TIE_TOLERANCE, hi < -TIE_TOLERANCE
            better, worse = (above_0, below_0) if higher_is_better else (below_0, above_0)
            above += better
            below += worse
        out[a] = (1 + above, k - below)
    return out


def rank_sets_listed(sets: Mapping[str, tuple[int, int]] | None) -> dict[str, list[int]] | None:
    """Rank sets as JSON holds them ([best, worst] per system), or None."""
    return None if not sets else {s: list(v) for s, v in sets.items()}


def board_estimate(judge: Mapping[str, Mapping[str, Vector]], strata: Mapping[str, str],
                   sampled: Mapping[str, Mapping[str, Vector]], metrics: Mapping[str, Metric], *,
                   certain: Mapping[str, Mapping[str, Vector]] | None = None, higher_is_better: bool = True,
                   bounds: tuple[float, float] | None = (0.0, 1.0), level: float = 0.95,
                   variance: Variance = VARIANCE, movable: Mapping[str, Mapping[str, Sequence[bool] | np.ndarray]]
                   | None = None, totals: Mapping[str, Totals] | None = None, per_system: bool = True,
                   **kw) -> Board:
    """Every system's estimate of its metric and every pairwise difference, from one sample of documents.

    `judge[s][doc]`: system s's judge-side count vector of every document; `sampled[s][doc]`: its human vector of
    every document drawn by the plan (`certain`: reviewed by hand, counted exactly). A system's own estimate is
    the single-run estimator on its own vectors (so it reads as the run's own would under this plan); each
    difference comes from the joint vectors, its covariance holding the pairing. Fixed-n intervals (`anytime`
    gives the anytime-valid ones). `movable[s][doc]`: which of system s's counts a review of doc can change (judge
    side); with it, counts the sample never saw move get the variance of `difference.unseen_moves`. `totals[s]`:
    system s's `estimated_totals` on these same arguments, when the caller already has them (several metrics of one
    sample); one system's joint totals are its own. `per_system=False`: the differences alone (a caller that
    estimates each system on its own population): `per_system` is empty and the ranks of the point estimates are
    None."""
    systems = list(metrics)
    certain = certain or {}
    own = dict(totals or {})
    if len(systems) == 1 and systems[0] in own:
        joint, slices = own[systems[0]], {systems[0]: slice(0, own[systems[0]].judge.size)}
    else:
        joint, slices = _joint_totals(judge, strata, sampled, systems, certain, movable, variance)
        if len(systems) == 1:
            own = {systems[0]: joint}
    pairs_n = max(1, len(systems) * (len(systems) - 1) // 2)
    sim_level = 1 - (1 - level) / pairs_n
    # each system's gradient once, at its slice of the joint totals (= its own estimated totals: the same sample):
    # its own interval linearises with it, and a pair's is the two side by side (what the numerical gradient of the
    # difference gives, at 2 evaluations per count of the two systems, not 4 per joint count and pair)
    grads: dict[str, np.ndarray | None] = {s: None for s in systems}
    if joint.total is not None and joint.cov is not None and not joint.complete:
        grads = {s: delta_method(metrics[s], joint.total[slices[s]], np.zeros((part.stop - part.start,) * 2))[2]
                 for s, part in slices.items()}
    pairs = []
    for a, b in combinations(systems, 2):
        g = difference_of(metrics[a], metrics[b], slices[a], slices[b])
        grad = None
        if grads[a] is not None and grads[b] is not None:
            grad = np.zeros(joint.judge.size)
            grad[slices[a]], grad[slices[b]] = grads[a], -grads[b]
        pairs.append(PairDifference(a, b, metric_estimate(joint, g, bounds=None, level=level, grad=grad, **kw),
                                    metric_estimate(joint, g, bounds=None, level=sim_level, grad=grad, **kw)))
    intervals = {(p.a, p.b): p.simultaneous.ci for p in pairs}
    sets = rank_sets(systems, intervals, higher_is_better=higher_is_better)
    if not per_system:
        return Board(systems, {}, pairs, None, None, sets, higher_is_better, level)
    per = {}
    for s in systems:
        tot = own[s] if s in own else estimated_totals(judge[s], strata, sampled[s], certain=certain.get(s),
                                                    movable=None if movable is None else movable[s], variance=variance)
        per[s] = metric_estimate(tot, metrics[s], bounds=bounds, level=level, grad=grads[s], **kw)
    judge_only = {s: per[s].judge_only for s in systems}
    audited = {s: e.estimate for s, e in per.items()}
    return Board(systems, per, pairs, competition_ranks(judge_only, higher_is_better=higher_is_better),
                 competition_ranks(audited, higher_is_better=higher_is_better), sets, higher_is_better, level)


def _joint_totals(judge: Mapping[str, Mapping[str, Vector]], strata: Mapping[str, str],
                  sampled: Mapping[str, Mapping[str, Vector]], systems: Sequence[str],
                  certain: Mapping[str, Mapping[str, Vector]], movable: Mapping | None, variance: Variance
                  ) -> tuple[Totals, dict[str, slice]]:
    """The systems' totals side by side (one joint vector per document: the pairing) and each system's slice."""
    joint_judge, slices = joint_vectors({s: judge[s] for s in systems})
    joint_sampled = joint_vectors({s: sampled[s] for s in systems})[0] if sampled.get(systems[0]) else {}
    joint_certain = joint_vectors({s: certain[s] for s in systems})[0] if certain.get(systems[0]) else {}
    joint_movable = None if movable is None else joint_vectors({s: movable[s] for s in systems})[0]
    return estimated_totals(joint_judge, strata, joint_sampled, certain=joint_certain, movable=joint_movable,
                         variance=variance), slices


def anytime(board: Board, *, planned_n: int, bounds: tuple[float, float] | None = (0.0, 1.0)
            ) -> tuple[dict[str, Estimate], list[PairDifference]]:
    """Anytime-valid versions of a board's per-system and pairwise intervals (`estimators.anytime_estimate`)."""
    per = {s: anytime_estimate(e, planned_n=planned_n, level=board.level, bounds=bounds)
           for s, e in board.per_system.items()}
    pairs = [PairDifference(p.a, p.b, anytime_estimate(p.estimate, planned_n=planned_n, level=board.level,
                                                       bounds=None),
                            anytime_estimate(p.simultaneous, planned_n=planned_n, bounds=None,
                                             level=1 - (1 - board.level) / max(1, len(board.pairs))))
             for p in board.pairs]
    return per, pairs


def settled(board: Board) -> list[str]:
    """In words, which adjacent pairs of the audited ranking hold (A > B) and which are not settled."""
    if board.rank_audited is None:
        return ["no estimate for every system: nothing can be said about the ranking"]
    order = sorted(board.systems, key=lambda s: board.rank_audited[s])  # type: ignore[index]
    by_pair = {(p.a, p.b): p for p in board.pairs} | {(p.b, p.a): p for p in board.pairs}
    out = []
    for hi, lo in zip(order, order[1:], strict=False):
        p = by_pair[(hi, lo)]
        ci = p.simultaneous.ci
        sign = 1 if p.a == hi else -1
        if ci is None:
            out.append(f"{hi} vs {lo}: no interval yet ({p.simultaneous.note or 'not enough reviews'})")
            continue
        lo_d, hi_d = sorted((sign * ci[0], sign * ci[1]))
        if abs(lo_d) <= TIE_TOLERANCE and abs(hi_d) <= TIE_TOLERANCE:
            out.append(f"{hi} and {lo} tie")
            continue
        better = lo_d > TIE_TOLERANCE if board.higher_is_better else hi_d < -TIE_TOLERANCE
        out.append(f"{hi} > {lo} holds" if better else f"{hi} vs {lo} is not settled")
    return out
