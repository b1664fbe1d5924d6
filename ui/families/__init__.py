"""Family-specific views. Each family `F` has a module `ui/families/F.py` (found by name, so adding a family touches
no shell file; a family kept elsewhere names its module in `view_module`). What a view module may define is the view
protocol, `FamilyView` below: every name, whether it is required, and the default the shell uses when a module
leaves an optional name out. The shell reads a view only through `family_view(task)` (never `getattr` on the
module), and `ui/families/checks.py` is the battery a view must pass (run on every registered family by the tests).

Views receive plain dicts from `audit.views` (decisions: id, doc, kind, type, left, right, judge, effective,
source, human, detail, reviews, moot) and must render user data as text (`ui.text.show_text`), never as Markdown.
The document noun is the family's `doc_noun` declaration, not the view's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import ModuleType
from typing import TYPE_CHECKING, Any

from audit.outputs.agreement_rule import group_title as agreement_group_title
from scoring.families import get_task
from scoring.nouns import Noun

if TYPE_CHECKING:
    from audit.outputs.report import Section
    from audit.views import RunView


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

    @property
    def hide_derived(self) -> bool:
        """Whether the view hides everything derived from the judge's or other reviewers' labels: the blind rule for
        a whole document (`ui.blind.document_is_blind`), decided by the page and handed in as
        `extra["hide_derived"]`. Every view reads this, never `blind` (an adjudicator reviewing "blind" sees all)."""
        return bool(self.extra.get("hide_derived", False))


RUN_PANEL_TITLE = "More about this run"


@dataclass(frozen=True)
class FamilyView:
    """The view protocol: what a family's view module defines (required names first; every other name is optional
    and takes the default written here when the module leaves it out). `family_view` fills one from a module.

    Blind review: `blind` in `card_lines` and `ctx.hide_derived` in `render_document` come from one rule
    (`ui/blind.py`); a view shows nothing derived from the judge's or other reviewers' labels while it is set."""

    module: ModuleType
    """The module the names were read from."""
    render_document: Callable[[DocumentContext], None]
    """Required. The family-specific part of one document's review page (abstract, paper, question or query),
    drawn with Streamlit above the page's decision cards; with `ctx.hide_derived` nothing derived from the
    judge's or other reviewers' labels. Its own review controls call `ctx.review(decision_id, label, note)`."""
    card_lines: Callable[..., list[tuple[str, str]]]
    """Required. `card_lines(decision, blind=False) -> [(field, text)]`: the rows that describe one decision on its
    own (the review card), e.g. [("entity type", "comb-element"), ("predicted", "..."), ("gold", "...")]; with
    `blind`, nothing of the judge's answer."""
    DOC_ID_TITLE: str | None = None
    """The document id's column title; default: "<document noun> id"."""
    SECTION_HELP: Mapping[str, str] = field(default_factory=dict)
    """{metric section: help text} for the score cards; default: no help."""
    OUTCOME_HELP: str | None = None
    """Help for the Overview's outcome filter; default: none."""
    DECISIONS_HELP: str | None = None
    """Help for the Document page's decision list; default: none."""
    BLIND_DETAIL: tuple[str, ...] = ()
    """The decision detail keys that only describe the question, which a blind card may read; default: none."""
    preview: Callable[[dict, dict], None] | None = None
    """`preview(payload, decision)`: context drawn above a card in the review queue; default: none."""
    card_context: Callable[[dict, dict], list[tuple]] | None = None
    """`card_context(payload, decision) -> [(label, text[, marks])]`: the same context as text lines for the
    browser review card (given the blind decision when the reviewer is blind); default: no lines."""
    gold_items: Callable[[dict], list[str]] | None = None
    """`gold_items(payload)`: a document's gold items a reviewer can flag as wrong; default: none (the errata form
    takes the item as free text)."""
    gold_item_of: Callable[[dict], str | None] | None = None
    """`gold_item_of(decision)`: the gold item a decision is about; default: none."""
    RUN_PANEL_TITLE: str = RUN_PANEL_TITLE
    """The title of the Overview's expander around `render_run`."""
    render_run: Callable[[Any, Any], None] | None = None
    """`render_run(db, run_view)`: a run-level panel on the Overview (variants, ceilings, ties); default: none."""
    report_panel: Callable[[RunView, Mapping], Section | None] | None = None
    """`report_panel(run_view, export) -> audit.outputs.report.Section | None`: the family's section of the audit
    report, titled by what it shows (the report numbers it and prefixes the family's title), built from the run's
    JSON export with the report's own helpers; None when the export lacks what it shows (a run scored before the
    variant existed). Default: no family section."""


REQUIRED = ("render_document", "card_lines")
PROTOCOL = tuple(f.name for f in fields(FamilyView) if f.name != "module")
"""Every name of the view protocol."""


class ViewError(TypeError):
    """A view module that does not provide the protocol (a required name missing)."""


def view_of_module(mod: ModuleType) -> FamilyView:
    """The protocol as `mod` provides it: its names, the defaults for the optional ones it leaves out."""
    missing = [n for n in REQUIRED if not callable(getattr(mod, n, None))]
    if missing:
        raise ViewError(f"{mod.__name__} ({getattr(mod, '__file__', '?')}) lacks {', '.join(missing)} of the view "
                        "protocol (ui/families/__init__.py: FamilyView)")
    return FamilyView(module=mod, **{n: getattr(mod, n) for n in PROTOCOL if hasattr(mod, n)})


def view(task: str) -> ModuleType:
    """The view module of a family: the one its registry entry names (`view_module`, `ui.families.<task>` unless
    the family says otherwise, e.g. a test's toy family)."""
    return importlib.import_module(get_task(task).view_module)


def family_view(task: str) -> FamilyView:
    """The family's view through the protocol: every name present, optional ones at their defaults."""
    return view_of_module(view(task))


def report_panel(task: str) -> Callable[[RunView, Mapping], Section | None] | None:
    """The family's report section builder (`FamilyView.report_panel`), for `audit.outputs.report.build_report`."""
    return family_view(task).report_panel


def doc_noun(task: str) -> Noun:
    """What the family calls one document (its declaration: singular, plural, article)."""
    return get_task(task).doc_noun


def doc_id_title(task: str) -> str:
    return family_view(task).DOC_ID_TITLE or f"{doc_noun(task)} id"


def section_help(task: str, section: str) -> str:
    return family_view(task).SECTION_HELP.get(section, "")


def kind_title(task: str, kind: str) -> str:
    """A decision kind named for people (the family's `kind_title`: the report and the pages say the same)."""
    return get_task(task).kind_title(kind)


def group_title(task: str, group: str) -> str:
    """An agreement group named for people (`audit.outputs.agreement_rule.group_title`, as the report and charts
    say)."""
    return agreement_group_title(get_task(task), group)


def error_columns_help(task: str) -> dict[str, str]:
    """The Agreement page's lenient / strict columns explained in the family's own label titles (“match”, “in the
    paper”); {} for a family without a positive label (ideation's ratings).

    >>> error_columns_help("chimera")["lenient"]
    'Decisions where the judge said “match” and the human did not.'
    """
    positive = " or ".join(sorted({f"“{s.title(s.positive)}”" for s in get_task(task).label_schemes.values()
                                   if s.positive}))
    if not positive:
        return {}
    return {"lenient": f"Decisions where the judge said {positive} and the human did not.",
            "strict": f"Decisions where the human said {positive} and the judge did not."}

# Pixel widths: each table stays inside a 1280 px window beside the sidebar (about 820 px of page).
WIDTHS = {"group": 190, "reviewers": 230, "n": 50, "documents": 80, "statistic": 145, "value [95%]": 165,
          "raw agreement": 150,
          "PABAK": 80, "AC1": 80, "lenient": 110, "strict": 110}
MAIN = ["group", "n", "documents", "statistic", "value [95%]", "raw agreement"]
MORE = ["group", "PABAK", "AC1", "lenient", "strict"]


def gold_items(task: str, payload: dict) -> list[str]:
    """The gold items of one document a reviewer can flag as wrong (the view's `gold_items(payload)`, else none:
    the errata form then takes the item as free text)."""
    fn = family_view(task).gold_items
    return list(fn(payload)) if fn is not None else []


def gold_item_of(task: str, decision: dict) -> str | None:
    """The gold item a decision is about (the view's `gold_item_of(decision)`), for flagging it from its card."""
    fn = family_view(task).gold_item_of
    return fn(decision) if fn is not None else None
