"""What a judge gives back: one `Answer` per question, the counts of a run (`JudgeStats`), and the one rule of
which answers are kept (`is_kept`).

An answer's `value` is one of its question's declared answers (`Question.answers`: CHIMERA `yes` / `no`, an
ideation rating `1`..`5`, a comparison `first` / `second` / `tie`), or `invalid` (the reply could not be read),
or `missing` (never answered: not in a replay log, a failed or cancelled request).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

YES, NO, INVALID, MISSING = "yes", "no", "invalid", "missing"
CANCELLED = "cancelled"
"""Rationale of a `missing` answer whose query was never sent because the job was cancelled."""
REQUEST_FAILED = "request failed"
"""Rationale prefix of a `missing` answer whose request failed after every retry (`request failed: <reason>`)."""
NOT_SENT = REQUEST_FAILED + ": not sent"
"""Rationale prefix of a `missing` answer never sent because an earlier request failed for good (bad key...)."""


@dataclass(frozen=True)
class Answer:
    """A judge's answer to one question."""

    value: str
    """One of the question's answers, `invalid` (the reply could not be read) or `missing` (never answered)."""
    raw: str | None = None
    """The judge's raw output, when there is one."""
    rationale: str | None = None
    """Why: the judge's justification, a similarity score, or the reason it is missing."""
    score: float | None = None
    """A similarity score for non-LLM judges."""
    cached: bool = False
    """True when the answer came from the cache instead of a new request."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0


def is_kept(answer: Answer) -> bool:
    """Whether an answer is cached (live or imported from a batch): every answer but `missing`, which is asked
    again next time (a failed, cancelled or never sent request is no answer of the judge).

    >>> [is_kept(Answer(v)) for v in ("yes", "3", "tie", "invalid", "missing")]
    [True, True, True, True, False]
    """
    return answer.value != MISSING


def token_count(value: object) -> int:
    """A reply's token count, or 0 when the server sent none or something else (usage is optional information:
    a non-numeric field is ignored, not an error).

    >>> token_count(12), token_count("12"), token_count("many"), token_count(None), token_count(-3), token_count(2.0)
    (12, 0, 0, 0, 0, 2)
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return 0
    return int(value) if value >= 0 else 0


@dataclass
class JudgeStats:
    """What asking the judge cost in one run."""

    distinct_queries: int = 0
    requests: int = 0
    cached: int = 0
    invalid: int = 0
    missing: int = 0
    retries: int = 0
    """Retries in all (a request retried three times counts three)."""
    retried: int = 0
    """Requests that needed at least one retry."""
    invalid_before_reask: int = 0
    """First replies that could not be read and were asked once more (a family that re-asks: ideation); `invalid`
    counts those still unreadable after the re-ask."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    paper_calls: int = 0
    """How many calls the paper's scorer would have made for the same inputs (no cache, both passes)."""
    missing_examples: list[dict] = field(default_factory=list)
    failed: int = 0
    """Queries whose request failed after every retry (answer `missing`; asked again by the next run)."""
    cancelled: int = 0
    """Queries not sent because the job was cancelled (answer `missing`; not counted in `requests`)."""
    cost_usd: float | None = None
    """Estimated cost of the tokens of this run's requests (None when the judge has no price)."""

    def as_dict(self) -> dict:
        return {
            "distinct_queries": self.distinct_queries,
            "requests": self.requests,
            "cached": self.cached,
            "invalid": self.invalid,
            "missing": self.missing,
            "retries": self.retries,
            "retried": self.retried,
            "invalid_before_reask": self.invalid_before_reask,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "paper_calls": self.paper_calls,
            "missing_examples": self.missing_examples[:10],
            "failed": self.failed,
            "cancelled": self.cancelled,
            "cost_usd": self.cost_usd,
        }


_SCALARS = frozenset((str, int, float, bool, type(None)))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def answer_dict(a: object) -> dict:
    """An answer's fields in declaration order, leaving out the empty ones (None, 0, False) but `value`.

    Read field by field: `dataclasses.asdict` deep-copies each value and was the top cost of scoring 10k CHIMERA
    abstracts (and half of scoring 10k retrieval queries).
    A field holding anything but a scalar (none today) goes through `asdict` so it is copied as before.
    """
    names = _FIELD_NAMES.get(type(a))
    if names is None:
        names = _FIELD_NAMES[type(a)] = tuple(f.name for f in fields(a))  # type: ignore[arg-type]
    values = [getattr(a, k) for k in names]
    if not _SCALARS.issuperset(map(type, values)):
        return {k: v for k, v in asdict(a).items() if v not in (None, 0, False) or k == "value"}  # type: ignore[call-overload]
    return {k: v for k, v in zip(names, values, strict=True) if v not in (None, 0, False) or k == "value"}
