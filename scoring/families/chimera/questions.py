"""CHIMERA's judge question and its judge-log line: `SpanQuery` (do these two spans of one abstract discuss the
same entity type?, asked in one order), `span_question` (the paper's prompt, read by `parse_span_answer`, with
our JSON-answer form for `openai-json:`), `bind_judge`, and `read_log_line` (a span-pair replay line).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from scoring.errors import InputError, text_problem
from scoring.families.chimera.model import ENTITY_TYPES, normalise_name
from scoring.families.chimera.prompts import CHIMERA_SPAN, SPAN_JSON, parse_span_answer
from scoring.judges.answer import INVALID, NO, YES, Answer
from scoring.judges.prompts import Parsed, PromptTemplate
from scoring.judges.question import JsonFormMixin, Structured
from scoring.judges.transport import Judge


def _no_parser(raw: str | None, *, truncated: bool = False) -> Parsed:  # noqa: ARG001 (a parser's signature)
    return Parsed(INVALID, "this question has no answer parser")


@dataclass(frozen=True)
class SpanQuery(JsonFormMixin):
    """A question about an ordered pair of spans of one document: do span1 and span2 discuss the same
    `entity_type`? Answered yes or no; comparators compare the two spans, an LLM reads the template."""

    answers: ClassVar[tuple[str, ...]] = (YES, NO)

    doc: str
    """Document id."""
    text: str
    """The full source text the spans come from (shown to an LLM)."""
    entity_type: str
    """The type the question is about, e.g. `comb-element`."""
    span1: str
    """The text shown first."""
    span2: str
    """The text shown second."""
    template: PromptTemplate | None = field(default=None, compare=False)
    """Prompt with fields ENTITY_TYPE, TEXT, SPAN1, SPAN2."""
    parser: Callable[..., Parsed] = field(default=_no_parser, compare=False)
    answer_schema: Mapping | None = field(default=None, compare=False, hash=False)
    """Set on the structured form (see `structured()`); None on the free-text question."""
    json_form: Structured | None = field(default=None, compare=False, hash=False)
    """The JSON-answer form of this question, if it has one."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.doc, self.entity_type, self.span1, self.span2)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.span1, self.span2)


    def prompt(self) -> str | None:
        if self.template is None:
            return None
        return self.template.render(ENTITY_TYPE=self.entity_type, TEXT=self.text, SPAN1=self.span1,
                                    SPAN2=self.span2)

    def parse(self, raw: str | None, *, truncated: bool = False) -> Parsed:
        return self.parser(raw, truncated=truncated)


def span_question(doc: str, text: str, entity_type: str, span1: str, span2: str) -> SpanQuery:
    """CHIMERA's judge question for one ordered span pair: the paper's prompt, read by `parse_span_answer`; its
    `structured()` form is the JSON-answer prompt read by `parse_span_json`."""
    return SpanQuery(doc, text, entity_type, span1, span2, CHIMERA_SPAN, parse_span_answer, json_form=SPAN_JSON)


def bind_judge(judge: Judge) -> Judge:
    """Tell an LLM judge, before it asks anything, which CHIMERA prompt its questions use (the paper's, or the
    JSON-answer form for `openai-json:MODEL`), so the run's judge identity and every cached call name it."""
    return judge.bind(span_question("", "", "", "", ""))


def read_span_log_line(rec: Mapping, path: str, lineno: int,
                       normalise_type: Callable[[str], str] = lambda t: t) -> tuple[tuple[str, ...], Answer]:
    """A span-pair log line `{"paper_id", "entity_type", "span1", "span2", "answer": "yes"|"no"}` as
    (`SpanQuery.key`, answer); another answer word is `invalid` (its raw text kept).

    Raises:
        InputError: a field is missing, not a string, or not valid Unicode text.
    """
    for f in ("paper_id", "entity_type", "span1", "span2", "answer"):
        if not isinstance(rec.get(f), str):
            raise InputError(path, lineno, f"field '{f}' must be a string")
    for f in ("paper_id", "entity_type", "span1", "span2", "answer", "rationale"):
        if isinstance(rec.get(f), str) and (problem := text_problem(rec[f])):
            raise InputError(path, lineno, f"field {f!r} {problem}")
    value = rec["answer"].strip().lower()
    ans = Answer(value if value in SpanQuery.answers else INVALID, raw=rec["answer"],
                 rationale=rec.get("rationale") if isinstance(rec.get("rationale"), str) else None)
    return (rec["paper_id"], normalise_type(rec["entity_type"]), rec["span1"], rec["span2"]), ans


def read_log_line(rec: Mapping, path: str, lineno: int) -> tuple[tuple[str, ...], Answer]:
    """A CHIMERA judge-log line; old entity-type spellings (analogy-src, ...) are read as the scorer's names.

    Raises:
        InputError: as `read_span_log_line`, or an entity type CHIMERA does not have (a differently cased one
            too: its answers would silently answer no question).
    """
    key, ans = read_span_log_line(rec, path, lineno, normalise_name)
    if key[1] not in ENTITY_TYPES:
        near = [t for t in ENTITY_TYPES if t.casefold() == key[1].strip().casefold()]
        raise InputError(path, lineno, f"unknown entity type {rec['entity_type'][:40]!r}; expected one of "
                                       f"{', '.join(ENTITY_TYPES)}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    return key, ans
