"""Ideation's data model: research questions with one idea per system, judge ratings and pairwise verdicts.

Units (docs: ideation.md section 1): a research question holds a *pool* of ideas, one per compared system.
The judge rates each idea on each criterion (absolute, 1-5) and compares every unordered pair of ideas on each
criterion twice, once in each order (pairwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field

FIRST, SECOND, TIE, INVALID = "first", "second", "tie", "invalid"
VERDICTS = (FIRST, SECOND, TIE, INVALID)
"""What one pairwise call can say, in slot terms (the idea shown first or second won, a tie, unreadable)."""

RATING, COMPARISON = "rating", "comparison"
"""Decision kinds: one absolute rating; one unordered pair asked in both orders."""
SCORE_LABELS = ("1", "2", "3", "4", "5")
WIN_A, WIN_B, WIN_TIE, SPLIT = "a", "b", "tie", "split"
"""Comparison labels in idea terms: left idea (a) won, right idea (b) won, tie; `split` = the two calls disagree."""
MAX_INPUT_BYTES = 512 * 1024 * 1024
CRITERIA = ("novelty", "feasibility", "effectiveness", "excitement", "overall")
"""The criteria an idea is rated or compared on (the judge's three, and the human study's five), written in lower
case: a file's criterion must be one of them exactly, so `Novelty` never becomes a criterion of its own."""


@dataclass(frozen=True)
class Idea:
    """One system's idea for one research question."""

    question_id: str
    system: str
    idea: str
    line: int
    extra: dict = field(default_factory=dict, hash=False, compare=False)
    """Other fields of the input line (kept and shown, never scored)."""


@dataclass(frozen=True)
class Question:
    """One research question and its pool of ideas (documents of the ideation family)."""

    question_id: str
    question: str
    ideas: tuple[Idea, ...]
    """In input order; one per system."""

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(i.system for i in self.ideas)


@dataclass(frozen=True)
class Rating:
    """The judge's absolute rating of one idea on one criterion; `score` None = unreadable (invalid)."""

    question_id: str
    system: str
    criterion: str
    score: int | None
    rationale: str | None = None
    raw: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Verdict:
    """One pairwise call: the judge saw idea `first` then idea `second` (system names) and said `verdict`."""

    question_id: str
    criterion: str
    first: str
    second: str
    verdict: str
    """`first`, `second`, `tie` or `invalid`."""
    rationale: str | None = None
    raw: str | None = None
    line: int | None = None

    @property
    def winner(self) -> str | None:
        """The system that won, `tie`, or None when the call is invalid."""
        return {FIRST: self.first, SECOND: self.second, TIE: TIE}.get(self.verdict)


def pools_of(questions: list[Question]) -> dict[str, tuple[str, ...]]:
    """{question_id: systems in the pool, input order}."""
    return {q.question_id: q.systems for q in questions}
