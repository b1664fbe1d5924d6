"""Prompt templates and their version hashes: the machinery every family's judge questions share.

Each template is a `PromptTemplate`: its text with `{PLACEHOLDER}` fields, and a version (the first 12 hex
digits of the SHA-256 of the text) that is stored with every judge call and every run, so a changed prompt
never reuses an old cached answer and a run says exactly which wording it used. Families define their own
templates and parsers (`scoring/families/<family>/prompts.py`) and register them in `TEMPLATES`.

A reply that cannot be read is `invalid` (with a reason), never silently "no" or a middle score.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass

from scoring.judges.answer import INVALID


def template_hash(text: str) -> str:
    """Version of a prompt template: the first 12 hex digits of the SHA-256 of its UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class PromptTemplate:
    """A named prompt template with `{FIELD}` placeholders, and the answers a reply to it may give."""

    name: str
    """Stable name stored with runs, e.g. `chimera-span-comparison`."""
    text: str
    """The template text, exactly as sent (before the fields are filled in)."""
    answers: tuple[str, ...] = ()
    """The answer vocabulary: every value its parser may read besides `invalid` (e.g. `yes`, `no`)."""

    @property
    def version(self) -> str:
        """`template_hash(text)`: changes whenever the wording changes."""
        return template_hash(self.text)

    @property
    def fields(self) -> tuple[str, ...]:
        """Placeholder names in order of first appearance."""
        names = [f for _, f, _, _ in string.Formatter().parse(self.text) if f]
        return tuple(dict.fromkeys(names))

    def render(self, **values: str) -> str:
        """Fill every placeholder (values are inserted as-is; braces inside them are not interpreted).

        Raises:
            KeyError: a placeholder has no value, or a value names no placeholder.
        """
        expected = set(self.fields)
        if set(values) != expected:
            missing, extra = sorted(expected - set(values)), sorted(set(values) - expected)
            raise KeyError(f"prompt {self.name!r}: missing fields {missing}, unknown fields {extra}")
        return self.text.format(**values)


@dataclass(frozen=True)
class Parsed:
    """What a parser read from a judge's reply."""

    value: str
    """The parsed answer (`yes`/`no`, `1`..`5`, `first`/`second`/`tie`) or `invalid`."""
    reason: str | None = None
    """Why the reply is `invalid`; None when it was read."""
    rationale: str | None = None
    """The judge's justification, when the reply has one."""

    @property
    def ok(self) -> bool:
        return self.value != INVALID


def between(raw: str, open_tag: str, close_tag: str) -> str | None:
    """The text between the first `open_tag` and the next `close_tag`, or None.

    >>> between("<answer> Yes </answer><answer>No</answer>", "<answer>", "</answer>")
    ' Yes '
    """
    start = raw.find(open_tag)
    if start < 0:
        return None
    start += len(open_tag)
    end = raw.find(close_tag, start)
    return raw[start:end] if end >= 0 else None


TEMPLATES: dict[str, PromptTemplate] = {}
"""Every registered template by name (families register theirs on import)."""


def register_template(t: PromptTemplate) -> PromptTemplate:
    TEMPLATES[t.name] = t
    return t
