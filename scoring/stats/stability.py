"""Judge stability: how often a judge's label for one question changes when it is asked again.

A decision is asked K times (repeats of one judge, or several judges / prompt versions); it *flips* when its
labels over those asks are not all equal. The flip rate of a set of decisions is the share that flip, reported
with a Wilson score interval (`scoring.stats.intervals.wilson_interval`), overall and per group
(entity type, the run's judge label, ...). Pure functions: no store, no judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from scoring.stats.intervals import CONFIDENCE, wilson_interval


def distribution(labels: Iterable[str]) -> dict[str, int]:
    """{label: how many asks gave it}, most frequent first (ties by label)."""
    c = Counter(labels)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def flipped(labels: Sequence[str]) -> bool:
    """True when the labels are not all equal (needs at least two to flip)."""
    return len(set(labels)) > 1


def rate(flags: Iterable[bool], confidence: float = CONFIDENCE) -> dict:
    """{"n", "flipped", "rate", "ci"} for a set of yes/no flags (rate and ci None when n = 0)."""
    values = list(flags)
    n, k = len(values), sum(bool(v) for v in values)
    return {"n": n, "flipped": k, "rate": k / n if n else None, "ci": wilson_interval(k, n, confidence)}


def rates_by(rows: Sequence[Mapping], flag: str, groups: Sequence[str] = (),
             confidence: float = CONFIDENCE) -> dict:
    """The rate of `row[flag]` over rows where it is not None: `all`, and `by_<group>` {value: rate} per group key.

    >>> rows = [{"type": "task", "flipped": True}, {"type": "task", "flipped": False},
    ...         {"type": "method", "flipped": False}, {"type": "method", "flipped": None}]
    >>> by = rates_by(rows, "flipped", ("type",))
    >>> by["all"]["n"], by["all"]["flipped"], by["by_type"]["task"]["rate"], by["by_type"]["method"]["n"]
    (3, 1, 0.5, 1)
    """
    usable = [r for r in rows if r.get(flag) is not None]
    out: dict = {"all": rate((r[flag] for r in usable), confidence)}
    for g in groups:
        values = sorted({str(r.get(g)) for r in usable})
        out[f"by_{g}"] = {v: rate((r[flag] for r in usable if str(r.get(g)) == v), confidence) for v in values}
    return out
