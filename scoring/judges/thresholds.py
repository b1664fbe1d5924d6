"""The judge kinds that say yes when a similarity score reaches a threshold, and how their spec names it: what the
`threshold` strategy of `improve-judge` may tune (`scoring.improve.threshold`).

`Answer.score` is in [0, 1]; the threshold is in the spec's unit (`scale` times the score): fuzzy's ratio 0-100,
embed's cosine 0-1.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.judges.embed import DEFAULT_EMBED_THRESHOLD
from scoring.judges.local import DEFAULT_FUZZY_THRESHOLD
from scoring.judges.registry import kind_of


@dataclass(frozen=True)
class ThresholdForm:
    kind: str
    scale: float
    """Threshold units per unit of `Answer.score`."""
    grid: tuple[float, ...]
    """The thresholds tried, in order."""
    default: float

    def spec(self, threshold: float) -> str:
        """The judge spec at this threshold (`fuzzy:72`)."""
        return f"{self.kind}:{threshold:g}"


THRESHOLDED = {
    "fuzzy": ThresholdForm("fuzzy", 100.0, tuple(float(t) for t in range(101)), DEFAULT_FUZZY_THRESHOLD),
    "embed": ThresholdForm("embed", 1.0, tuple(t / 100 for t in range(101)), DEFAULT_EMBED_THRESHOLD),
}


def threshold_of(spec: str) -> tuple[ThresholdForm, float] | None:
    """The spec's threshold form and its threshold, or None when the judge has no threshold (an LLM, a replay log).

    >>> f, t = threshold_of("fuzzy:95"); f.kind, t, f.spec(72.0)
    ('fuzzy', 95.0, 'fuzzy:72')
    >>> threshold_of("fuzzy")[1], threshold_of("openai:gpt-4o-mini")
    (85.0, None)
    """
    kind = kind_of(spec)
    form = THRESHOLDED.get(kind.name) if kind else None
    if form is None:
        return None
    arg = spec.partition(":")[2].strip()
    try:
        return form, float(arg) if arg else form.default
    except ValueError:
        return None
