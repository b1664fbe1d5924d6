"""Ranking metrics of recombination prediction (chimera.md §5.4), with an explicit tie policy.

Per query the gold has a rank r (1-based) in the filtered candidate ranking. Over the queries of a subset:
MR = mean r, MRR = mean 1/r, Hits@K = fraction with r <= K (K in 1, 3, 5, 10, 50, 100), median rank =
`statistics.median` (the midpoint of the two middle values for an even count). An empty subset gives 0 for every
figure, with a note.

Ties: the paper sorted with a non-stable `torch.argsort`, so a gold tied with other candidates got an arbitrary
place inside its block of equal scores. Here the block (a candidates strictly above the gold, t others tied with it)
is ranked by policy: `optimistic` a + 1, `pessimistic` a + t + 1, `mean` (default) a + 1 + t/2, the mean rank of
the block. Every figure then uses that one rank (so `mean` gives 1/(mean rank), not the expected reciprocal rank
over random tie breaks).

Review: candidates a reviewer accepts as correct answers too (within the top 100, above or tied with the gold) are
removed from the ranking, as the filtered setting removes other known answers: each accepted candidate strictly
above lowers a by one, each accepted tied one lowers t by one.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence

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
Accepted = Mapping[str, Collection[str]]
"""Accepted candidate ids per query id."""


def rank_in_block(above: int, tied: int, policy: TiePolicy = DEFAULT_POLICY) -> float:
    """The gold's rank when `above` candidates score higher and `tied` others score the same."""
    if policy == "optimistic":
        return above + 1
    if policy == "pessimistic":
        return above + tied + 1
    if policy == "mean":
        return above + 1 + tied / 2
    raise ValueError(f"unknown tie policy {policy!r}; expected one of {', '.join(TIE_POLICIES)}")


def reviewable_positions(q: RankedQuery) -> list[int]:
    """Listed indices of the candidates a reviewer may accept: within the top `REVIEW_DEPTH` (100), ranked strictly
    above the gold or inside its tie block (which, under the pessimistic policy, all count above it)."""
    last_block_rank = q.gold_block[1]
    return [i for i in range(min(len(q.candidates), REVIEW_DEPTH))
            if i != q.gold_position and i + 1 <= last_block_rank]


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
    """The gold's rank for one query under a tie policy, with accepted candidates removed."""
    return rank_in_block(*block_counts(q, accepted), policy)


def subsets_of(q: RankedQuery) -> list[str]:
    """The subsets a query counts in: `all`, its relation type, and `cross_domain` when flagged so."""
    return ["all", q.relation] + (["cross_domain"] if q.is_cross_domain else [])


def reported_subsets(queries: Iterable[RankedQuery]) -> list[str]:
    """`all`, `combination`, `inspiration`, plus `cross_domain` when any query says whether it is cross-domain."""
    flagged = any(q.is_cross_domain is not None for q in queries)
    return [s for s in SUBSETS if s != "cross_domain" or flagged]


def summarise(ranks: Sequence[float]) -> dict:
    """`n`, `mr`, `mrr`, `hits@K`, `median_rank` of the gold ranks of one subset (all 0 and a `note` if empty)."""
    n = len(ranks)
    if n == 0:
        return {**{m: 0 for m in METRIC_NAMES}, "note": EMPTY_NOTE}
    out: dict = {"n": n, "mr": statistics.fmean(ranks), "mrr": statistics.fmean(1 / r for r in ranks)}
    for k in HITS_AT:
        out[f"hits@{k}"] = sum(r <= k for r in ranks) / n
    out["median_rank"] = statistics.median(ranks)
    return out


def metrics_from_ranks(ranks: Mapping[str, Sequence[float]], subsets: Sequence[str]) -> dict:
    """{subset: summary} from the gold ranks of each subset."""
    return {s: summarise(ranks.get(s, ())) for s in subsets}


def subset_ranks(queries: Sequence[RankedQuery], policy: TiePolicy = DEFAULT_POLICY,
                 accepted: Accepted | None = None) -> dict[str, list[float]]:
    """Gold ranks per subset, queries in input order."""
    out: dict[str, list[float]] = {s: [] for s in SUBSETS}
    for q in queries:
        r = query_rank(q, policy, (accepted or {}).get(q.id, ()))
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
