"""Family-specific views. Each family `F` has a module `ui/families/F.py` (found by name, so adding a family touches
no shell file; a family kept elsewhere names its module in `view_module`) exposing:

- `render_document(ctx: DocumentContext) -> None`: the family-specific part of one document's review page
  (abstract, paper, question or query), drawn with Streamlit above the page's decision cards. While
  `ctx.extra["hide_derived"]` is true (blind review), nothing derived from judge or other reviewers' labels.
  A view may offer its own review controls; they call `ctx.review(decision_id, label, note)`.
- `card_lines(decision: dict, blind: bool = False) -> list[tuple[str, str]]`: (field, text) rows that describe
  one decision on its own (the review card), e.g. [("entity type", "comb-element"), ("predicted", "..."),
  ("gold", "...")]; with `blind`, nothing of the judge's answer.
- optional: `DOC_ID_TITLE`, `SECTION_HELP` {section: text}, `OUTCOME_HELP`, `DECISIONS_HELP`,
  `preview(payload, decision)` (context shown above a card in the review queue). The document noun is the
  family's `doc_noun` declaration, not the view's.

Both receive plain dicts from `audit.views` (decisions: id, doc, kind, type, left, right, judge, effective,
source, human, detail, reviews, moot) and must render user data as text (`ui.text.show_text`), never as Markdown.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

from audit.outputs.agreement_rule import group_title as agreement_group_title
from scoring.families import get_task
from scoring.families.base import Noun


@dataclass
class DocumentContext:
    """What a family's document view gets from the page."""

    run: dict
    """The run row (name, task, judge_spec, summary...)."""
    doc: dict
    """`audit.views.document`: doc id, payload, original counts and outcome."""
    audited_counts: dict
    """This document's counts under the effective labels."""
    decisions: list[dict]
    """The document's decisions with judge and effective labels, reviews, and `moot`."""
    review: Callable[[int, str, str], None]
    """Store a review: (decision id, label, note); the page re-scores and reruns."""
    reviewer: str = ""
    blind: bool = False
    adjudicator: bool = False
    focus: int | None = None
    """Decision id to scroll to / highlight (deep link)."""
    extra: dict = field(default_factory=dict)


def view(task: str) -> ModuleType:
    """The view module of a family: the one its registry entry names (`view_module`, `ui.families.<task>` unless
    the family says otherwise, e.g. a test's toy family)."""
    return importlib.import_module(get_task(task).view_module)


def doc_noun(task: str) -> Noun:
    """What the family calls one document (its declaration: singular, plural, article)."""
    return get_task(task).doc_noun


def doc_id_title(task: str) -> str:
    return getattr(view(task), "DOC_ID_TITLE", f"{doc_noun(task)} id")


def section_help(task: str, section: str) -> str:
    return getattr(view(task), "SECTION_HELP", {}).get(section, "")


def kind_title(task: str, kind: str) -> str:
    """A decision kind named for people (the family's `kind_title`: the report and the pages say the same)."""
    return get_task(task).kind_title(kind)


def group_title(task: str, group: str) -> str:
    """An agreement group named for people (`audit.outputs.agreement_rule.group_title`, as the report and charts
    say)."""
    return agreement_group_title(get_task(task), group)


def gold_items(task: str, payload: dict) -> list[str]:
    """The gold items of one document a reviewer can flag as wrong (the view's `gold_items(payload)`, else none:
    the errata form then takes the item as free text)."""
    fn = getattr(view(task), "gold_items", None)
    return list(fn(payload)) if fn is not None else []


def gold_item_of(task: str, decision: dict) -> str | None:
    """The gold item a decision is about (the view's `gold_item_of(decision)`), for flagging it from its card."""
    fn = getattr(view(task), "gold_item_of", None)
    return fn(decision) if fn is not None else None
