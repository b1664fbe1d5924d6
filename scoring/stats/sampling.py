"""Sampling design of a partial audit: strata, blocks, a seeded review order, and what to review next.

A *unit* is one judge decision. A *block* is the set of units a reviewer settles together (a document, or a
document x entity type): blocks are what is sampled, because a non-linear score (F1) can only be recomputed
exactly for a block whose every decision has a human label (docs/partial-audit.md §4.2). Every block belongs to
one *stratum*, chosen only from judge-side information fixed before any review (judge label, split-order flag,
similarity band...). Inside a stratum the review order is a seeded random permutation, so the first k blocks
reviewed through the queue are a simple random sample of that stratum, which is what the estimators in
`scoring.stats.estimators` assume.

`next_unit` picks the stratum with the largest variance reduction per reviewed decision on a *planning* variance read
from judge-side information only (`planning_variance`, shrunk towards proportional: `SHRINK`; Neyman allocation fixed
before review, §4.4), and the lowest-ranked unreviewed block in it: which blocks it serves depends on which were
reviewed, never on what the reviews said. `reviews_to_target` says how many more blocks (and decisions) a target
half-width needs (§4.5); it takes the *residuals* of the blocks reviewed through the queue so far: one number per block,
on the scale of the estimate, such that the estimate's variance is Σ_h M_h²(1 − m_h/M_h)S_h²/m_h with S_h² the variance
of the residuals in stratum h (for a mean over N units pass (H − J)/N per unit; for P/R/F1 pass
`estimators.linearised_residuals`). Hand-picked reviews are passed separately (`certain`): they leave the population to
sample and never count as sampled.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from scoring.stats.distributions import norm_ppf

PLAN_VERSION = 1
SHRINK = 0.5
"""Weight of the pooled planning variance per decision in each stratum's (`next_unit`): the Neyman step's S_h² is
(1 − w)·S_h² + w·(the sampled strata's pooled planning variance per decision × the stratum's mean decisions per
block). Where judge-side information does not separate the strata (equal planning variance per decision) the
allocation is proportional to stratum size, as simple random sampling's is; where it calls a stratum's variance 0
(every decision certain by construction) that stratum still gets about √w of its proportional share instead of its
minimum only (the estimator never gives a sampled stratum zero variance: the Jeffreys rate, docs/anytime.md)."""
INVALID_STRATUM = "invalid"
"""Stratum of every block holding a decision the judge could not answer; it is take-all (review it fully)."""


@dataclass(frozen=True)
class Unit:
    """One decision as the sampler sees it: judge-side information only, never a human label."""

    id: str
    """Decision id (stable within the run)."""
    block: str
    """Key of the block the decision belongs to, e.g. the document id or `doc|entity type`."""
    judge: str
    """The judge's label."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """Other judge-side information the stratum function may read (split-order flag, similarity...)."""


StratumFn = Callable[[Sequence[Unit]], str]
"""A block's units -> the name of its stratum (judge-side information only)."""


@dataclass(frozen=True)
class PlanBlock:
    """One sampling unit of the plan."""

    id: str
    stratum: str
    units: tuple[str, ...]
    """Decision ids the reviewer settles when this block is sampled."""
    rank: int
    """Position in the seeded random review order (0 = first); unique over the plan."""


@dataclass(frozen=True)
class Plan:
    """A stored sampling design: blocks with their stratum and seeded rank. JSON-able via `to_json`."""

    seed: int
    blocks: tuple[PlanBlock, ...]
    """In rank order."""
    take_all: frozenset[str] = frozenset()
    """Strata to review completely (invalid answers, a declared "most doubtful" top-K...); the queue serves them
    first."""
    design: str = ""
    """Free text saying how strata were made (shown with the estimate and exported)."""
    changeable: Mapping[str, int] | None = None
    """Block id -> its decisions whose answer a review can change (judge-side, counted when the plan is made: the
    queue's planning variance, `planning_variance`). None in plans stored before it was kept."""

    def stratum_of(self) -> Mapping[str, str]:
        """Block id -> stratum name (the `strata` argument of the estimators); built once per plan, read-only
        (callers ask it once per block: a fresh dict each time made `estimate` quadratic in documents)."""
        return self._stratum_of

    @cached_property
    def _stratum_of(self) -> Mapping[str, str]:
        return MappingProxyType({b.id: b.stratum for b in self.blocks})

    def blocks_by_id(self) -> Mapping[str, PlanBlock]:
        """Block id -> its block; built once per plan, read-only (the sample's state looks every document up in it on
        each estimate: 100,000 blocks)."""
        return self._blocks_by_id

    @cached_property
    def _blocks_by_id(self) -> Mapping[str, PlanBlock]:
        return MappingProxyType({b.id: b for b in self.blocks})

    def block_of(self) -> dict[str, str]:
        """Decision id -> block id."""
        return {u: b.id for b in self.blocks for u in b.units}

    def serving_order(self) -> list[PlanBlock]:
        """The blocks in the order the sample queue serves them: take-all strata first, then the seeded random rank
        (the one serving order: the queue and the assigned review's universe both read it here)."""
        return sorted(self.blocks, key=lambda b: (b.stratum not in self.take_all, b.rank))

    def strata(self) -> dict[str, list[PlanBlock]]:
        """Stratum name -> its blocks in rank order."""
        out: dict[str, list[PlanBlock]] = {}
        for b in self.blocks:
            out.setdefault(b.stratum, []).append(b)
        return out

    def to_json(self) -> dict:
        return {
            "version": PLAN_VERSION,
            "seed": self.seed,
            "design": self.design,
            "take_all": sorted(self.take_all),
            "blocks": [{"id": b.id, "stratum": b.stratum, "rank": b.rank, "units": list(b.units)}
                       for b in self.blocks],
        } | ({} if self.changeable is None else {"changeable": dict(self.changeable)})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Plan:
        if data.get("version") != PLAN_VERSION:
            raise ValueError(f"unsupported sampling plan version {data.get('version')!r}")
        blocks = tuple(sorted((PlanBlock(str(b["id"]), str(b["stratum"]), tuple(map(str, b["units"])), int(b["rank"]))
                               for b in data["blocks"]), key=lambda b: b.rank))
        changeable = data.get("changeable")
        return cls(int(data["seed"]), blocks, frozenset(data.get("take_all", ())), str(data.get("design", "")),
                   None if changeable is None else {str(b): int(q) for b, q in changeable.items()})


def seeded_rank_key(seed: int, block: str) -> bytes:
    """Pseudo-random sort key of a block: depends only on (seed, block id), not on input order or other blocks."""
    return hashlib.blake2b(f"{seed}\x00{block}".encode(), digest_size=16).digest()


def build_plan(units: Iterable[Unit], stratum_of: StratumFn, seed: int, *,
               invalid_labels: Collection[str] = ("invalid",), take_all: Collection[str] = (),
               design: str = "") -> Plan:
    """Group units into blocks, stratify the blocks and give each a seeded random rank.

    A block with any unit whose judge label is in `invalid_labels` goes to the take-all stratum `invalid`
    whatever `stratum_of` says (there is no judge answer to difference against). `take_all` names further
    strata to review completely.
    """
    by_block: dict[str, list[Unit]] = {}
    seen: set[str] = set()
    for u in units:
        if u.id in seen:
            raise ValueError(f"unit {u.id!r} appears twice")
        seen.add(u.id)
        by_block.setdefault(u.block, []).append(u)
    invalid = set(invalid_labels)
    strata = {}
    for b, us in by_block.items():
        strata[b] = INVALID_STRATUM if any(u.judge in invalid for u in us) else str(stratum_of(us))
    order = sorted(by_block, key=lambda b: seeded_rank_key(seed, b))
    blocks = tuple(PlanBlock(b, strata[b], tuple(u.id for u in by_block[b]), r) for r, b in enumerate(order))
    all_take = set(take_all) | ({INVALID_STRATUM} if INVALID_STRATUM in strata.values() else set())
    return Plan(seed, blocks, frozenset(all_take), design)


# ---------------------------------------------------------------- variance bookkeeping


def smoothed_variance(values: Sequence[float], lo: float, hi: float) -> float:
    """Sample variance with one pseudo-observation at each end of the residuals' range.

    For 0/1 outcomes in a stratum of constant judge label this is p̃(1 − p̃)·n/(n − 1) with p̃ = (x + 1)/(n + 2),
    the smoothing behind the §5.1 gains; it never returns 0 for a unanimous sample.
    """
    n = len(values)
    mean = (sum(values) + lo + hi) / (n + 2)
    ss = sum((v - mean) ** 2 for v in values) + (lo - mean) ** 2 + (hi - mean) ** 2
    return ss / (n + 2) * (n / (n - 1) if n >= 2 else 1.0)


def sample_variance(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return math.nan
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / (n - 1)


def stratified_variance(size: Mapping[str, int], sampled: Mapping[str, int], s2: Mapping[str, float]) -> float:
    """Σ_h M_h²(1 − m_h/M_h)S_h²/m_h: the variance of a stratified difference estimate (inf if a stratum
    that is not fully reviewed has no review)."""
    v = 0.0
    for h, big_m in size.items():
        m = sampled.get(h, 0)
        if m >= big_m:
            continue
        if m == 0:
            return math.inf
        v += big_m * big_m * (1 - m / big_m) * s2[h] / m
    return v


def gain(big_m: int, m: int, s2: float, cost: float = 1.0) -> float:
    """Variance reduction of one more review in a stratum, per unit of cost: M²S²[1/m − 1/(m + 1)]/c."""
    if m >= big_m:
        return 0.0
    if m == 0:
        return math.inf
    return big_m * big_m * s2 * (1 / m - 1 / (m + 1)) / cost


def neyman_total(size: Mapping[str, int], s2: Mapping[str, float], target_variance: float) -> float:
    """Closed-form Neyman sample size (blocks, from scratch): (Σ M_h S_h)² / (V* + Σ M_h S_h²)."""
    a = sum(size[h] * math.sqrt(s2[h]) for h in size)
    b = sum(size[h] * s2[h] for h in size)
    return a * a / (target_variance + b) if target_variance + b > 0 else 0.0


def greedy_allocation(size: Mapping[str, int], s2: Mapping[str, float], start: Mapping[str, int],
                      target_variance: float, cost: Mapping[str, float] | None = None) -> dict[str, int]:
    """Add reviews one at a time where the variance drops most per unit cost until it is ≤ target_variance
    (or every stratum is complete). Optimal for this separable convex problem. Returns the final m_h."""
    m = {h: min(start.get(h, 0), size[h]) for h in size}
    c = cost or {}
    name_rank = {h: i for i, h in enumerate(sorted(size))}
    # the open strata by (gain, size, name), largest first: only the stratum just raised changes its gain, so a heap
    # gives each step's choice without re-ranking every stratum (a projection of thousands of reviews)
    heap = [(-gain(size[h], m[h], s2[h], c.get(h, 1.0)), -size[h], -name_rank[h], h) for h in size if m[h] < size[h]]
    heapq.heapify(heap)
    # The variance only falls along the greedy path (each term falls as its m_h grows, in floating point too), so
    # it is checked once per batch of picks (batches doubling up to 256) and the first pick that meets the target
    # found inside the last batch by bisection: the same allocation as checking after every pick.
    batch = 1
    while heap and stratified_variance(size, m, s2) > target_variance:
        taken = []
        while heap and len(taken) < batch:
            best = heapq.heappop(heap)[3]
            m[best] += 1
            taken.append(best)
            if m[best] < size[best]:
                heapq.heappush(heap, (-gain(size[best], m[best], s2[best], c.get(best, 1.0)), -size[best],
                                      -name_rank[best], best))
        if stratified_variance(size, m, s2) <= target_variance:
            before = dict(m)
            for h in taken:
                before[h] -= 1
            lo, hi = 0, len(taken)  # met after `hi` picks of the batch, not after `lo`
            while hi - lo > 1:
                mid = (lo + hi) // 2
                probe = dict(before)
                for h in taken[:mid]:
                    probe[h] += 1
                if stratified_variance(size, probe, s2) <= target_variance:
                    hi = mid
                else:
                    lo = mid
            for h in taken[hi:]:
                m[h] -= 1
            return m
        batch = min(2 * batch, 256)
    return m


# ---------------------------------------------------------------- queue state


@dataclass(frozen=True)
class QueueState:
    size: dict[str, int]
    """M_h: blocks of the stratum that are not hand-reviewed."""
    sampled: dict[str, int]
    cost: dict[str, float]
    """Mean decisions per block."""
    s2: dict[str, float]
    """Smoothed within-stratum residual variance (planning value where the sample is tiny)."""
    open_blocks: dict[str, list[PlanBlock]]
    """Unreviewed, not hand-reviewed blocks in rank order."""


def queue_state(plan: Plan, sampled: Mapping[str, float], certain: Collection[str] = (), prior_sd: float | None = None,
                bounds: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None) -> QueueState:
    """Per stratum, what `reviews_to_target` projects from: sizes without the hand-reviewed blocks, the draws so
    far, mean block cost and the smoothed variance of the residuals `sampled` (one walk over the plan's blocks;
    a caller projecting several targets from the same residuals builds it once and passes it as `state`)."""
    certain = set(certain)
    both = certain & set(sampled)
    if both:
        raise ValueError(f"blocks both sampled and hand-picked: {sorted(both)[:5]}")
    stratum_of = plan.stratum_of()
    unknown = [b for b in list(sampled) + list(certain) if b not in stratum_of]
    if unknown:
        raise ValueError(f"blocks not in the plan: {unknown[:5]}")
    size: dict[str, int] = {}
    cost_sum: dict[str, int] = {}
    open_blocks: dict[str, list[PlanBlock]] = {}
    values: dict[str, list[float]] = {}
    for b in plan.blocks:
        if b.id in certain:
            continue
        size[b.stratum] = size.get(b.stratum, 0) + 1
        cost_sum[b.stratum] = cost_sum.get(b.stratum, 0) + max(len(b.units), 1)
        open_blocks.setdefault(b.stratum, [])
        if b.id in sampled:
            values.setdefault(b.stratum, []).append(float(sampled[b.id]))
        else:
            open_blocks[b.stratum].append(b)
    pooled = [v for vs in values.values() for v in vs]
    if prior_sd is None:
        prior_sd = math.sqrt(sample_variance(pooled)) if len(pooled) >= 2 else 0.0
    s2 = {}
    for h in size:
        vs = values.get(h, [])
        if bounds is not None:
            lo, hi = bounds[h] if isinstance(bounds, Mapping) else bounds
        else:
            centre = sum(vs) / len(vs) if vs else 0.0
            lo, hi = centre - prior_sd, centre + prior_sd
        s2[h] = smoothed_variance(vs, lo, hi)
    return QueueState(size, {h: len(values.get(h, [])) for h in size},
                  {h: cost_sum[h] / size[h] for h in size}, s2, open_blocks)


@dataclass(frozen=True)
class Pick:
    """The block the queue serves next."""

    block: str
    stratum: str
    units: tuple[str, ...]
    rank: int
    why: str
    """`take-all`, `minimum` (fewer than `min_per_stratum` reviews so far), `neyman` or `proportional`."""
    gain: float | None = None


def next_unit(plan: Plan, sampled: Collection[str], *, certain: Collection[str] = (),
              planning: Mapping[str, float] | None = None, min_per_stratum: int = 3,
              cost_aware: bool = True, shrink: float = SHRINK) -> Pick | None:
    """The next block to review through the random queue, or None when every block is reviewed.

    The allocation is a design fixed before review: it reads which blocks were reviewed (through the queue or by
    hand), never what the reviews said, so the same reviews in any outcome are served the same blocks in the same
    order. (The former residual-driven Neyman step made each stratum's sample size depend on the errors found in it,
    which biased non-linear estimates: ideation's pairwise novelty −0.017 ± 0.008 over 400 replays, bench/README.md
    as of a32f770.)

    Args:
        sampled: blocks reviewed *through this queue* (a mapping's keys; its values are not read).
        certain: blocks reviewed by hand; they are skipped and leave their stratum's population.
        planning: block -> planning variance of its review's effect on the target, from judge-side information only
            (`planning_variance`); a stratum's S_h² is the mean over its blocks. None: every block alike.
        min_per_stratum: reviews every stratum gets (in stratum-size order) before Neyman choices.
        cost_aware: divide the gain by the stratum's mean decisions per block.
        shrink: weight of the pooled planning variance per decision in each stratum's S_h² (`SHRINK`; with
            `planning` only).

    Order: take-all strata first, then strata under `min_per_stratum`, then the largest Neyman gain
    M_h²S_h²[1/m_h − 1/(m_h + 1)]/c_h, S_h² shrunk towards the pooled planning variance per decision (`SHRINK`:
    proportional allocation where the planning variance does not separate the strata, and if every S_h² is 0);
    inside the stratum, the lowest-ranked open block.
    """
    drawn, certain = set(sampled), set(certain)
    both = certain & drawn
    if both:
        raise ValueError(f"blocks both sampled and hand-picked: {sorted(both)[:5]}")
    stratum_of = plan.stratum_of()
    unknown = [b for b in [*drawn, *certain] if b not in stratum_of]
    if unknown:
        raise ValueError(f"blocks not in the plan: {unknown[:5]}")
    size: dict[str, int] = {}
    m: dict[str, int] = {}
    s2: dict[str, float] = {}
    cost: dict[str, float] = {}
    head: dict[str, PlanBlock] = {}
    for b in plan.blocks:  # in rank order
        if b.id in certain:
            continue
        h = b.stratum
        size[h] = size.get(h, 0) + 1
        m[h] = m.get(h, 0) + (b.id in drawn)
        s2[h] = s2.get(h, 0.0) + (1.0 if planning is None else float(planning.get(b.id, 0.0)))
        cost[h] = cost.get(h, 0.0) + max(len(b.units), 1)
        if b.id not in drawn and h not in head:
            head[h] = b
    if not head:
        return None

    def pick(h: str, why: str, g: float | None = None) -> Pick:
        b = head[h]
        return Pick(b.id, h, b.units, b.rank, why, g)

    take_all = sorted((h for h in head if h in plan.take_all), key=lambda h: head[h].rank)
    if take_all:
        return pick(take_all[0], "take-all")
    under = [h for h in head if m[h] < min_per_stratum]
    if under:
        return pick(min(under, key=lambda h: (m[h], -size[h], h)), "minimum")
    if planning is not None and shrink > 0:  # towards proportional: the sampled strata's variance per decision
        drawn_strata = [h for h in size if h not in plan.take_all]
        pooled = sum(s2[h] for h in drawn_strata) / sum(cost[h] for h in drawn_strata)
        s2 = {h: (1 - shrink) * s2[h] + shrink * pooled * cost[h] for h in s2}
    gains = {h: gain(size[h], m[h], s2[h] / size[h], cost[h] / size[h] if cost_aware else 1.0) for h in head}
    if max(gains.values()) <= 0:  # no planning variance anywhere: proportional allocation
        return pick(min(head, key=lambda h: ((m[h] + 1) / size[h], h)), "proportional")
    best = max(head, key=lambda h: (gains[h], size[h], h))
    return pick(best, "neyman", gains[best])


def planning_variance(changeable: Mapping[str, int]) -> dict[str, float]:
    """Block -> planning variance of its review's effect on a metric of summed counts, from judge-side information
    only: q_b / Q², with q_b the block's decisions whose answer is not certain by construction
    (`TaskFamily.trivial`) and Q their total. A review flips some of a block's changeable decisions, each moving a
    count by about one and the metric by about 1/Q, so the variance of a block's effect grows with q_b (the board's
    `audit.board.joint.planning_variance` for one system). Fixed before review: the allocation it drives is a design."""
    total = sum(changeable.values())
    return {b: q / (total * total) if total else 0.0 for b, q in changeable.items()}


def _units_of_more(plan: Plan, more: Mapping[str, int], reviewed: Collection[str]) -> int:
    """Decisions in `more[h]` further blocks of each stratum h, from the sizes of its blocks not yet reviewed: all of
    them when all are needed, else that many times their mean size, rounded (the whole stratum's mean size gave
    3264.2 more decisions of a run holding 3,264)."""
    left: dict[str, list[int]] = {}
    for b in plan.blocks:
        if b.id not in reviewed:
            left.setdefault(b.stratum, []).append(len(b.units))
    total = 0.0
    for h, k in more.items():
        sizes = left.get(h, [])
        if k > 0 and sizes:
            total += sum(sizes) if k >= len(sizes) else k * sum(sizes) / len(sizes)
    return round(total)


def reviews_to_target(plan: Plan, sampled: Mapping[str, float], half_width: float, *,
                      certain: Collection[str] = (), prior_sd: float | None = None,
                      bounds: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
                      level: float = 0.95, min_per_stratum: int = 3, cost_aware: bool = True,
                      state: QueueState | None = None) -> dict[str, Any]:
    """How many more blocks (and decisions) the queue needs for a CI half-width ≤ `half_width` (§4.5).

    Within-stratum variances are the current smoothed estimates (as in `next_unit`); the allocation starts
    from the reviews made (raised to `min_per_stratum`, and to the whole stratum for take-all strata) and
    greedily adds reviews where the variance drops most per decision. Returns a JSON-able dict:
    `more` (blocks), `more_units` (decisions, from the sizes of each stratum's open blocks), `allocation` and
    `current` (m_h per stratum), `neyman_total` (closed-form blocks from scratch, without costs),
    `variance_now` (None while a stratum has no review) and `target_variance`.
    """
    s = state or queue_state(plan, sampled, certain, prior_sd, bounds)
    z = norm_ppf(0.5 + level / 2)
    target = (half_width / z) ** 2
    start = {}
    for h in s.size:
        floor = s.size[h] if h in plan.take_all else min(min_per_stratum, s.size[h])
        start[h] = max(s.sampled[h], floor)
    final = greedy_allocation(s.size, s.s2, start, target, s.cost if cost_aware else None)
    more = {h: final[h] - s.sampled[h] for h in s.size}
    now = stratified_variance(s.size, s.sampled, s.s2)
    return {
        "more": sum(more.values()),
        "more_units": _units_of_more(plan, more, set(sampled) | set(certain)),
        "allocation": final,
        "current": dict(s.sampled),
        "neyman_total": round(neyman_total(s.size, s.s2, target), 1),
        "variance_now": now if math.isfinite(now) else None,
        "target_variance": target,
    }
