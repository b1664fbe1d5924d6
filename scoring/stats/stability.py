"""Judge stability: how often a judge's label for one question changes when it is asked again.

A decision is asked K times (repeats of one judge, or several judges / prompt versions); it *flips* when its
labels over those asks are not all equal. The flip rate of a set of decisions is the share that flip, reported
with a Wilson score interval (scipy `binomtest(...).proportion_ci(method="wilson")`), overall and per group
(entity type, the run's judge label, ...). Pure functions: no store, no judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from scipy.stats import binomtest

CONFIDENCE = 0.95


def distribution(labels: Iterable[str]) -> dict[str, int]:
    """{label: how many asks gave it}, most frequent first (ties by label)."""
    c = Counter(labels)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def flipped(labels: Sequence[str]) -> bool:
    """True when the labels are not all equal (needs at least two to flip)."""
    return len(set(labels)) > 1


def wilson_interval(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Wilson score interval for k successes in n trials, or None when n = 0.

    >>> lo, hi = wilson_interval(0, 10)
    >>> (round(lo, 4), round(hi, 4))
    (0.0, 0.2775)
    """
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def rate(flags: Iterable[bool], confidence: float = CONFIDENCE) -> dict:
    """{"n", "flipped", "rate", "ci"} for a set of yes/no flags (rate and ci None when n = 0)."""
    values = list(flags)
    n, k = len(values), sum(bool(v) for v in values)
    ci = wilson_interval(k, n, confidence)
    return {"n": n, "flipped": k, "rate": k / n if n else None, "ci": list(ci) if ci else None}


def rates_by(rows: Sequence[Mapping], flag: str, groups: Sequence[str] = (),
             confidence: float = CONFIDENCE) -> dict:
    """The rate of `row[flag]` over rows where it is not None: `all`, and `by_<group>` {value: rate} per group key.

    Example: `rates_by(decisions, "flipped", ("type", "run_label"))`.
    """
    usable = [r for r in rows if r.get(flag) is not None]
    out: dict = {"all": rate((r[flag] for r in usable), confidence)}
    for g in groups:
        values = sorted({str(r.get(g)) for r in usable})
        out[f"by_{g}"] = {v: rate((r[flag] for r in usable if str(r.get(g)) == v), confidence) for v in values}
    return out
