"""What a transport is asked: the `Question` protocol, a family's JSON-answer form of one (`Structured`), and the
generic prompt-only question (`PromptQuestion`).

A question is one thing asked once in one order. Families build them (CHIMERA: `SpanQuery`,
`scoring/families/chimera/questions.py`; ideation: `PromptQuestion`s; retrieval: `CandidateQuestion`) and each
declares its answer vocabulary (`answers`), so the shell can tell a reply that means something from one that
does not without knowing the family (`answer_problem`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from scoring.judges.answer import INVALID, MISSING, Answer
from scoring.judges.prompts import Parsed, PromptTemplate


class Question(Protocol):
    """One judge question in one order, as a transport sees it."""

    @property
    def key(self) -> tuple[str, ...]:
        """Identity within its family (the replay-log key), e.g. (doc, entity type, span shown first, second)."""
        ...

    @property
    def answers(self) -> tuple[str, ...]:
        """The answer vocabulary: every value a judge may give besides `invalid` / `missing` (e.g. yes, no)."""
        ...

    @property
    def pair(self) -> tuple[str, str] | None:
        """The two texts a comparator transport compares, or None when only an LLM can answer."""
        ...

    def prompt(self) -> str | None:
        """The exact prompt an LLM transport sends (None: no prompt; LLM transports refuse such questions)."""
        ...

    def parse(self, raw: str | None, *, truncated: bool = False) -> Parsed:
        """Read an LLM's reply (yes/no, a rating, a verdict) or `invalid` with the reason."""
        ...

    @property
    def template(self) -> PromptTemplate | None: ...

    @property
    def schema(self) -> Mapping | None:
        """JSON schema of the answer (`response_format`) when this is a structured question, else None."""
        ...

    def structured(self) -> Question | None:
        """This question in its JSON-answer form (own template and hash, `schema` set, a parser of the JSON
        object), for structured transports (`openai-json:MODEL`); None when the family has no such form."""
        ...


def answer_problem(question: Question, answer: Answer) -> str | None:
    """Why `answer` is no answer to `question` (a value outside its vocabulary), or None when it is one.

    `invalid` and `missing` are always possible answers (an unreadable reply, a question not answered).
    """
    if answer.value in (INVALID, MISSING) or answer.value in question.answers:
        return None
    allowed = ", ".join(question.answers) or "(none declared)"
    return f"answer {answer.value!r} is not one this question allows ({allowed})"


@dataclass(frozen=True)
class Structured:
    """A family's JSON-answer form of a question: its template (own version hash, same answer vocabulary), the
    JSON schema the server enforces through `response_format`, and the parser of the JSON reply."""

    template: PromptTemplate
    schema: Mapping = field(hash=False)
    parser: Callable[..., Parsed] = field(hash=False)


class JsonFormMixin:
    """`schema` and `structured()` for a frozen dataclass question with `answer_schema` and `json_form` fields: the
    free-text question turns into its JSON-answer form (own template, parser and schema) by `structured()`."""

    answer_schema: Mapping | None
    json_form: Structured | None

    @property
    def schema(self) -> Mapping | None:
        return self.answer_schema

    def structured(self):  # noqa: ANN201 - the question's own type
        if self.answer_schema is not None:
            return self
        if self.json_form is None:
            return None
        f = self.json_form
        return replace(self, template=f.template, parser=f.parser, answer_schema=f.schema, json_form=None)


@dataclass(frozen=True)
class PromptQuestion(JsonFormMixin):
    """A question only an LLM can answer (e.g. rate this idea 1-5): a key, a template and its fields, a parser.
    Its answer vocabulary is its template's."""

    key: tuple[str, ...]
    template: PromptTemplate
    fields: tuple[tuple[str, str], ...]
    parser: Callable[..., Parsed] = field(compare=False)
    answer_schema: Mapping | None = field(default=None, compare=False, hash=False)
    json_form: Structured | None = field(default=None, compare=False, hash=False)

    @property
    def answers(self) -> tuple[str, ...]:
        return self.template.answers

    @property
    def pair(self) -> None:
        return None


    def prompt(self) -> str:
        return self.template.render(**dict(self.fields))

    def parse(self, raw: str | None, *, truncated: bool = False) -> Parsed:
        return self.parser(raw, truncated=truncated)
