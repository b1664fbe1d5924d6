"""A run's retrieval metrics kept up to date query by query, so one review costs what it changes (#38).

`metrics_from_counts` with every query's counts recomputed all figures from all queries, for every tie policy and
subset: 3 s per review at 10,000 queries. A `RankTable` holds, per subset and tie policy, how many queries have
each rank (or tie range) and the exact sum of each per-query figure; a changed query is taken out and put back in.
Every figure is the same number, bit for bit, as `metrics.summarise` of the same ranks:

- means (MR, MRR, Hits@K): `summarise` takes `statistics.fmean`, i.e. `math.fsum` (the correctly rounded sum) / n.
  Here each per-query figure is added as an exact integer (the float times 2**1074, which every finite float is a
  whole multiple of) and the sum is rounded once (`int / int` is correctly rounded): the same float, then / n;
- the median rank: `metrics.median_of_counts` of the same ranks, cached until the subset and policy change.

`table_for(per_doc)` finds the table of the run a list of counts belongs to by the identity of its dicts (the
audit hands the same dict objects for unchanged queries: `audit.rescoring._per_doc`) and updates it with the
queries whose dicts differ; counts dicts are never changed in place (they are built per query and stored).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from scoring.families.retrieval.metrics import (
    EMPTY_NOTE,
    RankRange,
    expected_hit,
    expected_reciprocal,
    median_of_counts,
)
from scoring.families.retrieval.model import HITS_AT, METRIC_NAMES, SUBSETS, TIE_POLICIES

_SCALE = 1074
"""Every finite float is a whole multiple of 2**-1074 (the smallest subnormal)."""
FIGURES = ("mr", "mrr", *(f"hits@{k}" for k in HITS_AT))


def _exact(v: float) -> int:
    """v * 2**1074, exactly."""
    num, den = v.as_integer_ratio()  # den is a power of two
    return num << (_SCALE - den.bit_length() + 1)


@lru_cache(maxsize=65536)
def _contribution(r: RankRange) -> tuple[int, ...]:
    """A query's per-query figures (as `summarise` computes them) for rank range r, each as an exact integer."""
    lo, hi = r
    return (_exact((lo + hi) / 2), _exact(expected_reciprocal(r)), *(_exact(expected_hit(r, k)) for k in HITS_AT))


def _policy_range(lo: int, hi: int, policy: str) -> RankRange:
    return (lo, hi) if policy == "mean" else (lo, lo) if policy == "optimistic" else (hi, hi)


class _Cell:
    """One subset under one tie policy: counts of fixed ranks, spread ranges by position, exact sums."""

    __slots__ = ("fixed", "median", "n", "spread", "sums")

    def __init__(self) -> None:
        self.n = 0
        self.sums = [0] * len(FIGURES)
        self.fixed: Counter[int] = Counter()
        self.spread: dict[int, RankRange] = {}
        self.median: float | None = None

    def add(self, pos: int, r: RankRange, sign: int) -> None:
        self.n += sign
        for i, c in enumerate(_contribution(r)):
            self.sums[i] += sign * c
        if r[0] == r[1]:
            self.fixed[r[0]] += sign
            if not self.fixed[r[0]]:
                del self.fixed[r[0]]
        elif sign > 0:
            self.spread[pos] = r
        else:
            del self.spread[pos]
        self.median = None

    def fill(self, ranges: Mapping[int, RankRange]) -> None:
        """Start from {position: range} (what `add` of each would give, grouped by distinct range)."""
        by_range = Counter(ranges.values())
        self.n = sum(by_range.values())
        for r, k in by_range.items():
            for i, c in enumerate(_contribution(r)):
                self.sums[i] += k * c
            if r[0] == r[1]:
                self.fixed[r[0]] += k
        self.spread = {pos: r for pos, r in ranges.items() if r[0] != r[1]}
        self.median = None

    def summary(self) -> dict:
        if self.n == 0:
            return {**{m: 0 for m in METRIC_NAMES}, "note": EMPTY_NOTE}
        out: dict = {"n": self.n}
        for name, s in zip(FIGURES, self.sums, strict=True):
            out[name] = s / (1 << _SCALE) / self.n
        if self.median is None:
            self.median = median_of_counts(self.fixed, [self.spread[p] for p in sorted(self.spread)])
        out["median_rank"] = self.median
        return out


def _subset_bounds(counts: Mapping, subset: str) -> tuple[int, int] | None:
    """(optimistic rank, pessimistic rank) of one query in a subset (the mean policy's range); None if not in it."""
    c = counts.get(subset)
    return None if c is None else (int(c["optimistic"]["rank"]), int(c["pessimistic"]["rank"]))


class RankTable:
    """Per subset and tie policy, the ranks of every query of a run and the figures' exact sums."""

    def __init__(self, per_doc: Sequence[Mapping]) -> None:
        self.docs = list(per_doc)
        self.cells = {(s, p): _Cell() for s in SUBSETS for p in TIE_POLICIES}
        self.flagged = sum(bool(d.get("domain_flagged", 0)) for d in self.docs)
        for s in SUBSETS:
            bounds = {pos: b for pos, d in enumerate(self.docs) if (b := _subset_bounds(d, s)) is not None}
            for p in TIE_POLICIES:
                self.cells[(s, p)].fill({pos: _policy_range(lo, hi, p) for pos, (lo, hi) in bounds.items()})

    def _add(self, pos: int, counts: Mapping, sign: int) -> None:
        self.flagged += sign * int(bool(counts.get("domain_flagged", 0)))
        for s in SUBSETS:
            b = _subset_bounds(counts, s)
            if b is None:
                continue
            lo, hi = b
            for p in TIE_POLICIES:
                self.cells[(s, p)].add(pos, _policy_range(lo, hi, p), sign)

    def changed(self, per_doc: Sequence[Mapping]) -> list[int] | None:
        """Positions whose counts are other objects than the table's; None if the lengths differ."""
        if len(per_doc) != len(self.docs):
            return None
        return [i for i, (a, b) in enumerate(zip(self.docs, per_doc, strict=True)) if a is not b]

    def update(self, per_doc: Sequence[Mapping], positions: Sequence[int]) -> None:
        for pos in positions:
            self._add(pos, self.docs[pos], -1)
            self.docs[pos] = per_doc[pos]
            self._add(pos, per_doc[pos], 1)

    def subsets(self) -> list[str]:
        """`all`, `combination`, `inspiration`, plus `cross_domain` when any query says whether it is one."""
        return [s for s in SUBSETS if s != "cross_domain" or self.flagged > 0]

    def by_policy(self) -> dict[str, dict[str, dict]]:
        """{policy: {subset: summary}} (`metrics.summarise`'s figures)."""
        subsets = self.subsets()
        return {p: {s: self.cells[(s, p)].summary() for s in subsets} for p in TIE_POLICIES}


_TABLES: list[RankTable] = []
_KEEP = 4
_LOCK = threading.Lock()  # dashboard sessions are threads of one process


def policy_summaries(per_doc: Iterable[Mapping]) -> dict[str, dict[str, dict]]:
    """{policy: {subset: summary}} of every query's counts, from the table of the run they belong to (updated
    with the queries that changed since), or a new one."""
    per_doc = per_doc if isinstance(per_doc, list | tuple) else list(per_doc)
    with _LOCK:
        for i, table in enumerate(_TABLES):
            changed = table.changed(per_doc)
            if changed is not None and len(changed) <= max(64, len(per_doc) // 8):
                table.update(per_doc, changed)
                _TABLES.insert(0, _TABLES.pop(i))
                return table.by_policy()
        table = RankTable(per_doc)
        _TABLES.insert(0, table)
        del _TABLES[_KEEP:]
        return table.by_policy()
