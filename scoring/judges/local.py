"""The comparators: `exact` and `fuzzy[:T]` answer a question by comparing its two texts (`Question.pair`), on
this machine, instantly; a family whose questions have no pair needs an LLM judge or a replay log."""

from __future__ import annotations

from rapidfuzz import fuzz, utils

from scoring.errors import JudgeSpecError
from scoring.judges.answer import NO, YES, Answer
from scoring.judges.question import Question
from scoring.judges.transport import LocalJudge

DEFAULT_FUZZY_THRESHOLD = 85.0


def normalise_words(s: str) -> list[str]:
    """Case-insensitive, whitespace-normalised tokens (the `exact` judge's notion of equality).

    >>> normalise_words("  Back\\tTranslation ")
    ['back', 'translation']
    """
    return s.casefold().split()


def comparable_pair(judge: LocalJudge, query: Question) -> tuple[str, str]:
    """The two texts `judge` compares.

    Raises:
        JudgeSpecError: the question has none (only an LLM can answer it).
    """
    pair = query.pair
    if pair is None:
        raise JudgeSpecError(f"the {judge.spec} judge compares two texts; this family's questions need an LLM "
                             "judge (openai:MODEL) or a replay log")
    return pair


class ExactJudge(LocalJudge):
    """`exact`: yes iff `a.casefold().split() == b.casefold().split()`."""

    spec = "exact"

    def answer(self, query: Question) -> Answer:
        a, b = comparable_pair(self, query)
        same = normalise_words(a) == normalise_words(b)
        return Answer(YES if same else NO, score=1.0 if same else 0.0)


class FuzzyJudge(LocalJudge):
    """`fuzzy[:T]`: RapidFuzz `fuzz.ratio` on `utils.default_process`-ed spans (lower-cased, punctuation
    stripped), yes iff the similarity (0-100) is at least T (default 85)."""

    def __init__(self, threshold: float = DEFAULT_FUZZY_THRESHOLD) -> None:
        if not 0 <= threshold <= 100:
            raise JudgeSpecError(f"fuzzy threshold must be between 0 and 100, got {threshold}")
        self.threshold = threshold
        self.spec = f"fuzzy:{threshold:g}"

    def identity(self) -> dict:
        return {"spec": self.spec, "scorer": "rapidfuzz.fuzz.ratio", "processor": "rapidfuzz.utils.default_process",
                "threshold": self.threshold}

    def answer(self, query: Question) -> Answer:
        a, b = comparable_pair(self, query)
        score = fuzz.ratio(a, b, processor=utils.default_process)
        return Answer(YES if score >= self.threshold else NO, score=score / 100,
                      rationale=f"ratio {score:.1f} vs threshold {self.threshold:g}")


def exact_from_spec(arg: str, *_context: object) -> ExactJudge:
    """The `exact` factory (it takes no argument).

    Raises:
        JudgeSpecError: an argument was given.
    """
    if arg.strip():
        raise JudgeSpecError(f"exact takes no argument, got exact:{arg}")
    return ExactJudge()


def fuzzy_from_spec(arg: str, *_context: object) -> FuzzyJudge:
    """The `fuzzy[:T]` factory: no argument means `DEFAULT_FUZZY_THRESHOLD`.

    Raises:
        JudgeSpecError: T is not a number between 0 and 100.
    """
    try:
        threshold = float(arg) if arg.strip() else DEFAULT_FUZZY_THRESHOLD
    except ValueError:
        raise JudgeSpecError(f"fuzzy threshold must be a number, got {arg!r}") from None
    return FuzzyJudge(threshold)
