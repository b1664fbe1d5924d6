"""Judge against humans item by item (ideation.md §6): for each rated item (an idea, on one criterion), the judge's
rating beside the mean of the human ratings, and over the items of a criterion Spearman's ρ, Kendall's τ-b and the
pairwise accuracy (the share of item pairs whose human means differ that the judge orders the same way; a judge tie
is no agreement). For every decision kind whose labels are an ordinal scale of numbers (ideation's ratings), from
the reviews agreement uses (`agreement_rows`: blind ones when the run has any)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import combinations
from statistics import fmean

from audit.views import RunView

MIN_ITEMS = 3
"""Items below which no correlation is given (two points always correlate ±1)."""


def _number(label: str | None) -> float | None:
    try:
        value = float(label)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None  # `invalid`, a word label
    return value if math.isfinite(value) else None


def item_stats(judge: Sequence[float], human: Sequence[float]) -> dict:
    """ρ, τ-b and pairwise accuracy of the judge's ratings against the humans' mean ratings (same order); None with
    `why` where a statistic is undefined."""
    from scipy.stats import kendalltau, spearmanr  # SciPy: imported where the statistic is made

    n = len(judge)
    out: dict = {"n_items": n, "spearman": None, "kendall_tau_b": None, "pairwise_accuracy": None, "why": None}
    if n < MIN_ITEMS:
        return out | {"why": f"fewer than {MIN_ITEMS} items rated by both the judge and a human"}
    pairs = [(i, j) for i, j in combinations(range(n), 2) if human[i] != human[j]]
    if pairs:
        same = sum((judge[i] - judge[j]) * (human[i] - human[j]) > 0 for i, j in pairs)
        out |= {"pairwise_accuracy": same / len(pairs), "n_pairs": len(pairs)}
    if len(set(judge)) < 2 or len(set(human)) < 2:
        side = "the judge" if len(set(judge)) < 2 else "the humans"
        return out | {"why": f"{side} gave every item the same rating: no rank correlation"}
    return out | {"spearman": float(spearmanr(judge, human).statistic),
                  "kendall_tau_b": float(kendalltau(judge, human, variant="b").statistic)}


def per_item_agreement(view: RunView, rows: Mapping) -> dict[str, dict]:
    """`{"kind/type": item_stats(...)}` for every ordinal numeric kind with human ratings in `rows`
    (`agreement_rows`); {} for a family without one."""
    ordinal = {k for k, s in view.task.label_schemes.items() if s.scale == "ordinal"}
    by_group: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for dec, humans in rows["ratings"].items():
        kind, typ = rows["rating_groups"][dec]
        if kind not in ordinal:
            continue
        judge = _number(view.reviewed.rows[int(dec)]["judge_label"])
        values = [_number(label) for label in humans.values()]
        if judge is None or not values or any(v is None for v in values):
            continue
        by_group[f"{kind}/{typ}"].append((judge, fmean(values)))  # type: ignore[arg-type]
    return {g: item_stats([j for j, _ in items], [h for _, h in items]) for g, items in sorted(by_group.items())}
