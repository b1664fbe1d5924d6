"""Ranking metrics of recombination prediction (chimera.md §5.4), with an explicit tie policy.

Per query the gold has a rank r (1-based) in the filtered candidate ranking. Over the queries of a subset:
MR = mean r, MRR = mean 1/r, Hits@K = fraction with r <= K (K in 1, 3, 5, 10, 50, 100), median rank =
`statistics.median` (the midpoint of the two middle values for an even count). An empty subset gives 0 for every
figure, with a note.

Ties: the paper sorted with a non-stable `torch.argsort`, so a gold tied with other candidates got an arbitrary
place inside its block of equal scores. Here the block (a candidates strictly above the gold, t others tied with it)
is ranked by policy: `optimistic` a + 1, `pessimistic` a + t + 1, and `mean` (default) the *expected figure under a
uniformly random order within every tie block*: the gold's rank is then uniform on a + 1 .. a + t + 1,
independently per query, and every figure is its exact expectation (not the figure of the mean rank): MR the mean
of a + 1 + t/2, MRR the mean of (1/(a+1) + ... + 1/(a+t+1)) / (t+1), Hits@K the mean chance that the rank is <= K,
and the median rank the expected value of `statistics.median` over all tie orders (`expected_median`, computed
exactly from the ranks' distributions). A query's rank is therefore a `RankRange` (lowest, highest), one rank
under the optimistic and pessimistic policies.

Review: candidates a reviewer accepts as correct answers too (within the top 100, above or tied with the gold) are
removed from the ranking, as the filtered setting removes other known answers: each accepted candidate strictly
above lowers a by one, each accepted tied one lowers t by one.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

import numpy as np
from scipy.special import digamma

from scoring.families.retrieval.model import (
    DEFAULT_POLICY,
    HITS_AT,
    METRIC_NAMES,
    REVIEW_DEPTH,
    SUBSETS,
    TIE_POLICIES,
    RankedQuery,
    TiePolicy,
)

EMPTY_NOTE = "no queries in this subset: every figure is 0"
RankRange = tuple[int, int]
"""(lowest, highest) rank of a gold: uniform over the integers between them under a random order within its ties."""
Accepted = Mapping[str, Collection[str]]
"""Accepted candidate ids per query id."""


def rank_range(above: int, tied: int, policy: TiePolicy = DEFAULT_POLICY) -> RankRange:
    """The gold's possible ranks when `above` candidates score higher and `tied` others score the same."""
    if policy == "optimistic":
        return above + 1, above + 1
    if policy == "pessimistic":
        return above + tied + 1, above + tied + 1
    if policy == "mean":
        return above + 1, above + tied + 1
    raise ValueError(f"unknown tie policy {policy!r}; expected one of {', '.join(TIE_POLICIES)}")


def rank_in_block(above: int, tied: int, policy: TiePolicy = DEFAULT_POLICY) -> float:
    """The gold's (expected) rank when `above` candidates score higher and `tied` others score the same."""
    lo, hi = rank_range(above, tied, policy)
    return (lo + hi) / 2 if lo != hi else lo


def expected_reciprocal(r: RankRange) -> float:
    """E[1/rank] for a rank uniform on r: 1/lo exactly for one rank, else (H(hi) - H(lo - 1)) / (hi - lo + 1)."""
    lo, hi = r
    if lo == hi:
        return 1 / lo
    if hi - lo < 256:
        return sum(1 / k for k in range(lo, hi + 1)) / (hi - lo + 1)
    return float(digamma(hi + 1) - digamma(lo)) / (hi - lo + 1)


def expected_hit(r: RankRange, k: int) -> float:
    """P(rank <= k) for a rank uniform on r."""
    lo, hi = r
    return min(max(k - lo + 1, 0), hi - lo + 1) / (hi - lo + 1)


def _expected_order_statistic(fixed: Mapping[int, int], spread: Sequence[RankRange], j: int) -> float:
    """E[j-th smallest rank] (1-based j) of independent ranks: `fixed` ({rank: how many queries have it}) and the
    `spread` ones, each uniform on its range (in input order).

    E[X_(j)] = sum over x >= 0 of P(X_(j) > x) = sum_x P(fewer than j ranks are <= x). Ranks with one value add a
    fixed count; for the others the count is Poisson-binomial, whose distribution only changes at the x inside their
    ranges, so between those it is summed over whole stretches at once.

    At an x inside no spread range every rank's chance of being <= x is 0 or 1, so the distribution is exactly one
    count (the number of ranges wholly <= x) and the term is exactly 1 or 0. Inside, a range with chance 1 shifts
    the distribution by one place and one with chance 0 leaves it as it is, exactly, so only the ranges containing
    x are multiplied in (in input order, then shifted): the same floating-point operations on the same values as
    multiplying in every range, at a fraction of the cost (10,000 queries, #38).

    The distributions of every x are built together, one range at a time over the x it contains (`_inside_pmfs`):
    built one x at a time, a median of the BM25 demo (217 tied queries, ranges up to 573 ranks wide) took 1.3 s, and
    each review of a retrieval run computes several.
    """
    keys = sorted(fixed)
    cum = list(itertools.accumulate(fixed[k] for k in keys))
    if not spread:
        return float(keys[bisect.bisect_left(cum, j)])
    his = np.sort(np.array([hi for _, hi in spread], dtype=float))
    size = len(spread) + 1
    # x where the summand can change: each fixed rank, and every x of a spread range
    points = sorted({*keys, *(x for lo, hi in spread for x in range(lo, hi + 1))} | {0})
    parts, counts = _inside_pmfs(np.array(points, dtype=float), spread, columns=min(size, j + 1))
    done_at = np.searchsorted(his, points, side="right")  # ranges wholly <= x: chance exactly 1

    def p_below(row: int, n_fixed_below: int) -> float:  # P(fewer than j of the ranks are <= points[row])
        need = j - n_fixed_below
        if need <= 0:
            return 0.0
        done, n_inside = int(done_at[row]), int(counts[row])
        if not n_inside:
            return 1.0 if need > done else 0.0
        part = parts[row, :n_inside + 1]
        pmf = np.zeros(size)
        pmf[done:done + len(part)] = part
        return float(pmf[:need].sum())

    total = 0.0
    for row, (a, b) in enumerate(zip(points, [*points[1:], None], strict=True)):
        i = bisect.bisect_right(keys, a)
        term = p_below(row, cum[i - 1] if i else 0)
        if b is None:
            if term > 1e-15:
                raise AssertionError("order statistic unbounded")  # every rank is finite: cannot happen
            break
        total += term * (b - a)
    return total


def _inside_pmfs(xs: np.ndarray, spread: Sequence[RankRange], columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Per x of the sorted `xs`: the distribution of how many of the ranges containing x (lo <= x < hi; chance of
    being <= x strictly between 0 and 1) are <= x, multiplied in range by range in input order, and how many there
    are. Only the first `columns` places are kept (a place depends only on the places below it): the caller sums no
    further. Each place gets the very operations the one-x-at-a-time product gave it (a place beyond the ranges
    multiplied in so far holds 0, and 0 * q + 0 * p is 0), so the result is bit-identical to that product."""
    parts = np.zeros((len(xs), columns))
    parts[:, 0] = 1.0
    counts = np.zeros(len(xs), dtype=int)
    for lo, hi in spread:
        a, b = np.searchsorted(xs, lo, side="left"), np.searchsorted(xs, hi, side="left")  # lo <= x < hi
        if a >= b:
            continue
        p = np.clip((xs[a:b] - float(lo) + 1) / float(hi - lo + 1), 0.0, 1.0)[:, None]
        top = min(columns, int(counts[a:b].max()) + 2)  # places that can be non-zero after this range
        block = parts[a:b, :top]
        block[:, 1:] = block[:, 1:] * (1 - p) + block[:, :-1] * p
        block[:, :1] *= 1 - p
        counts[a:b] += 1
    return parts, counts


def _kth(keys: Sequence[int], cum: Sequence[int], k: int) -> int:
    """The k-th smallest (0-based) of the ranks counted by sorted `keys` and their cumulative counts `cum`."""
    return keys[bisect.bisect_right(cum, k)]


def median_of_counts(fixed: Mapping[int, int], spread: Sequence[RankRange] = ()) -> float:
    """`expected_median` of `fixed` ranks ({rank: count}) and `spread` ranges (in input order): `statistics.median`
    of the ranks when none is spread (the middle one, or the midpoint of the two middle ones)."""
    n = sum(fixed.values()) + len(spread)
    if not spread:
        keys = sorted(fixed)
        cum = list(itertools.accumulate(fixed[k] for k in keys))
        if n % 2:
            return _kth(keys, cum, n // 2)
        return (_kth(keys, cum, n // 2 - 1) + _kth(keys, cum, n // 2)) / 2
    if n % 2:
        return _expected_order_statistic(fixed, spread, (n + 1) // 2)
    return (_expected_order_statistic(fixed, spread, n // 2)
            + _expected_order_statistic(fixed, spread, n // 2 + 1)) / 2


def expected_median(ranges: Sequence[RankRange]) -> float:
    """E[statistics.median(ranks)] over every order within the ties (the midpoint of the two middle values for an
    even count), exactly."""
    return median_of_counts(Counter(lo for lo, hi in ranges if lo == hi), [r for r in ranges if r[0] != r[1]])


def reviewable_positions(q: RankedQuery) -> list[int]:
    """Listed indices of the candidates a reviewer may accept: within the top `REVIEW_DEPTH` (100), ranked strictly
    above the gold or inside its tie block (which, under the pessimistic policy, all count above it)."""
    last_block_rank, gold = q.gold_block[1], q.gold_position  # a search of the candidates: once, not per candidate
    return [i for i in range(min(len(q.candidates), REVIEW_DEPTH)) if i != gold and i + 1 <= last_block_rank]


def block_counts(q: RankedQuery, accepted: Collection[str] = ()) -> tuple[int, int]:
    """(candidates strictly above the gold, other candidates tied with it) once `accepted` ones are removed.

    Accepted ids that are not reviewable (below the gold, beyond the top 100, unknown) change nothing.
    """
    above, tied = q.strictly_above, q.tied
    if accepted:
        for i in reviewable_positions(q):
            if q.candidates[i] in accepted:
                if i + 1 < q.gold_block[0]:
                    above -= 1
                else:
                    tied -= 1
    return above, tied


def query_rank(q: RankedQuery, policy: TiePolicy = DEFAULT_POLICY, accepted: Collection[str] = ()) -> float:
    """The gold's (expected) rank for one query under a tie policy, with accepted candidates removed."""
    return rank_in_block(*block_counts(q, accepted), policy)


def query_range(q: RankedQuery, policy: TiePolicy = DEFAULT_POLICY, accepted: Collection[str] = ()) -> RankRange:
    """The gold's possible ranks for one query under a tie policy, with accepted candidates removed."""
    return rank_range(*block_counts(q, accepted), policy)


def subsets_of(q: RankedQuery) -> list[str]:
    """The subsets a query counts in: `all`, its relation type, and `cross_domain` when flagged so."""
    return ["all", q.relation] + (["cross_domain"] if q.is_cross_domain else [])


def reported_subsets(queries: Iterable[RankedQuery]) -> list[str]:
    """`all`, `combination`, `inspiration`, plus `cross_domain` when any query says whether it is cross-domain."""
    flagged = any(q.is_cross_domain is not None for q in queries)
    return [s for s in SUBSETS if s != "cross_domain" or flagged]


def _as_range(r: int | float | RankRange) -> RankRange:
    return (r, r) if isinstance(r, int | float) else (int(r[0]), int(r[1]))  # type: ignore[return-value]


def summarise(ranks: Sequence[int | RankRange]) -> dict:
    """`n`, `mr`, `mrr`, `hits@K`, `median_rank` of one subset's gold ranks, each a rank or a `RankRange` (uniform
    over its ranks): every figure is its expectation (all 0 and a `note` if empty).

    Each mean is `statistics.fmean` of the per-query figures (`math.fsum` / n), the per-query figures computed on
    arrays with the same operations as `expected_reciprocal` and `expected_hit` (exact for whole ranks; a spread
    range's reciprocal goes through `expected_reciprocal` itself), so the figures are those of a query-by-query
    loop, bit for bit.
    """
    ranges = [_as_range(r) for r in ranks]
    return summarise_ranges(ranges, whole=all(isinstance(lo, int) and isinstance(hi, int) for lo, hi in ranges))


def summarise_ranges(ranges: Sequence[RankRange], *, whole: bool = True) -> dict:
    """`summarise` of rank ranges already as (lowest, highest) pairs, of whole numbers unless `whole` is False."""
    n = len(ranges)
    if n == 0:
        return {**{m: 0 for m in METRIC_NAMES}, "note": EMPTY_NOTE}
    lo, hi = np.array(ranges, dtype=np.int64 if whole else float).T
    width = hi - lo + 1
    rr = 1 / lo
    for i in np.flatnonzero(lo != hi).tolist():
        rr[i] = expected_reciprocal(ranges[i])
    out: dict = {"n": n, "mr": math.fsum(((lo + hi) / 2).tolist()) / n, "mrr": math.fsum(rr.tolist()) / n}
    for k in HITS_AT:
        out[f"hits@{k}"] = math.fsum((np.minimum(np.maximum(k - lo + 1, 0), width) / width).tolist()) / n
    out["median_rank"] = expected_median(ranges)
    return out


def metrics_from_ranks(ranks: Mapping[str, Sequence[int | RankRange]], subsets: Sequence[str]) -> dict:
    """{subset: summary} from the gold ranks (or rank ranges) of each subset."""
    return {s: summarise(ranks.get(s, ())) for s in subsets}


def subset_ranks(queries: Sequence[RankedQuery], policy: TiePolicy = DEFAULT_POLICY,
                 accepted: Accepted | None = None) -> dict[str, list[RankRange]]:
    """Gold rank ranges per subset, queries in input order."""
    out: dict[str, list[RankRange]] = {s: [] for s in SUBSETS}
    for q in queries:
        r = query_range(q, policy, (accepted or {}).get(q.id, ()))
        for s in subsets_of(q):
            out[s].append(r)
    return out


def ranking_metrics(queries: Sequence[RankedQuery], policy: TiePolicy = DEFAULT_POLICY,
                    accepted: Accepted | None = None) -> dict:
    """`{subset: {"n", "mr", "mrr", "hits@1", ..., "hits@100", "median_rank"}}` under one tie policy, with the
    accepted candidates of each query removed (none by default: the benchmark's assumption)."""
    return metrics_from_ranks(subset_ranks(queries, policy, accepted), reported_subsets(queries))


def tie_sensitivity(by_policy: Mapping[str, Mapping[str, Mapping]], with_ties: Mapping[str, int]) -> dict:
    """How far each figure moves between the optimistic and the pessimistic policy.

    `by_policy`: {policy: {subset: summary}}; `with_ties`: {subset: queries whose gold shares its score with another
    candidate}. Returns {subset: {"queries_with_ties", "spread": {figure: |pessimistic - optimistic|}}} (None where a
    figure is missing, e.g. a median computed without each query's rank).
    """
    out = {}
    for s, opt in by_policy["optimistic"].items():
        pes = by_policy["pessimistic"][s]
        spread = {m: abs(pes[m] - opt[m]) if pes[m] is not None and opt[m] is not None else None
                  for m in METRIC_NAMES if m != "n"}
        out[s] = {"queries_with_ties": with_ties.get(s, 0), "spread": spread}
    return out


def full_report(queries: Sequence[RankedQuery], accepted: Accepted | None = None,
                policy: TiePolicy = DEFAULT_POLICY) -> dict:
    """The family's metrics JSON: `{subset: summary}` under `policy`, plus `tie_policy` (its name),
    `tie_policies` ({policy: {subset: summary}} for all three) and `tie_sensitivity`."""
    by_policy = {p: ranking_metrics(queries, p, accepted) for p in TIE_POLICIES}
    with_ties = {s: 0 for s in by_policy[policy]}
    for q in queries:
        if block_counts(q, (accepted or {}).get(q.id, ()))[1] > 0:
            for s in subsets_of(q):
                if s in with_ties:
                    with_ties[s] += 1
    return assemble_report(by_policy, with_ties, policy)


def assemble_report(by_policy: Mapping[str, dict], with_ties: Mapping[str, int], policy: TiePolicy) -> dict:
    """Lay out the metrics JSON from the per-policy summaries (shared by `full_report` and the family)."""
    return {**by_policy[policy], "tie_policy": policy, "tie_policies": dict(by_policy),
            "tie_sensitivity": tie_sensitivity(by_policy, with_ties)}
