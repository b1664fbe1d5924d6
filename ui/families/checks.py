"""The view protocol as a battery, the view half of `scoring.families.checks`: a family author runs
`check_view(module, run_view)` on their view module and one scored run of the family; the tests run it on every
registered family's view. A failed check raises `ViewContractError` naming the module, the check and what is wrong.

What it checks (`ui.families.FamilyView` says what each name means):
- the required names are there and every name present has the declared type or call signature;
- no public name of the module is a near miss of a protocol name (`Preview`, `card_line`, `SECTION_HELPS`): the shell
  would silently use the default;
- every decision's card lines are (field, text) pairs of strings, sighted and blind, and the blind lines are the same
  for the decision and for what a blind reviewer may see of it (`ui.blind.blind_decision`): nothing of the judge's
  or other reviewers' answers reaches a blind card;
- the gold item a decision is about is one of its document's gold items;
- the document view draws, sighted and blind (Streamlit in bare mode: nothing shown, everything called), and the
  queue's preview and the card's context lines run on real decisions;
- the report panel gives None or a `Section` (title and HTML body as strings, `Figure`s), the same twice.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import textwrap
from collections.abc import Callable, Mapping
from types import ModuleType

from audit.outputs.export import export_json
from audit.outputs.report import Figure, Section
from audit.views import RunView
from scoring.nouns import Noun
from ui.blind import blind_decision
from ui.families import PROTOCOL, REQUIRED, DocumentContext, FamilyView, ViewError, view_of_module

VALUE_TYPES: dict[str, type | tuple[type, ...]] = {"DOC_ID_TITLE": str, "SECTION_HELP": Mapping, "OUTCOME_HELP": str,
                                                   "DECISIONS_HELP": str, "BLIND_DETAIL": tuple,
                                                   "RUN_PANEL_TITLE": str}
CALL_ARITY = {"render_document": 1, "card_lines": 2, "preview": 2, "card_context": 2, "gold_items": 1,
              "gold_item_of": 1, "render_run": 2, "report_panel": 2}
NEAR_MISS = 0.8
"""difflib ratio (case-folded) above which a public name that is not a protocol name is taken for a misspelling."""


class ViewContractError(AssertionError):
    """A view breaks the view protocol (an AssertionError, so test runners report it as a failed check)."""


def _fail(mod: ModuleType, check: str, message: str) -> ViewContractError:
    return ViewContractError(f"{mod.__name__}: {check}: {message}")


def check_protocol_names(mod: ModuleType) -> FamilyView:
    """The required names are callable; every protocol name present has its type or takes its arguments."""
    try:
        fv = view_of_module(mod)
    except ViewError as e:
        raise _fail(mod, "protocol names", str(e)) from None
    for name, kind in VALUE_TYPES.items():
        if hasattr(mod, name) and not isinstance(getattr(mod, name), kind):
            raise _fail(mod, "protocol names", f"{name} is {type(getattr(mod, name)).__name__}, not {kind}")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in fv.SECTION_HELP.items()):
        raise _fail(mod, "protocol names", "SECTION_HELP must map section names to text")
    if not all(isinstance(k, str) for k in fv.BLIND_DETAIL):
        raise _fail(mod, "protocol names", "BLIND_DETAIL must be detail keys (strings)")
    for name, n in CALL_ARITY.items():
        fn = getattr(mod, name, None)
        if fn is None and name not in REQUIRED:
            continue
        if not callable(fn):
            raise _fail(mod, "protocol names", f"{name} is not callable")
        try:
            inspect.signature(fn).bind(*[None] * n)
        except TypeError as e:
            raise _fail(mod, "protocol names", f"{name} does not take {Noun('argument').count(n)}: {e}") from None
    return fv


def _own_public_names(mod: ModuleType) -> list[str]:
    """The names the module itself defines at its top level (not the ones it imports)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(mod)))
    except (OSError, TypeError):  # a module built in memory: its functions' and values' names
        return [n for n, v in vars(mod).items() if not n.startswith("_")
                and getattr(v, "__module__", mod.__name__) == mod.__name__ and not isinstance(v, ModuleType)]
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


def check_no_near_miss_names(mod: ModuleType) -> None:
    """No public name is a misspelt protocol name (the shell would take the default and say nothing)."""
    folded = {p.casefold(): p for p in PROTOCOL}
    for name in _own_public_names(mod):
        if name in PROTOCOL:
            continue
        close = difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=NEAR_MISS)
        if close:
            raise _fail(mod, "near-miss names", f"{name} is not a protocol name; did you mean {folded[close[0]]}?")


def check_cards(fv: FamilyView, run: RunView) -> None:
    """Card lines are (field, text) string pairs; a blind card says the same for a decision and for its blind view."""
    mod = fv.module
    for d in run.decisions():
        for blind in (False, True):
            lines = fv.card_lines(d, blind)
            if not lines or not all(isinstance(x, tuple) and len(x) == 2 and all(isinstance(s, str) for s in x)
                                    for x in lines):
                raise _fail(mod, "card lines", f"decision {d['id']} (blind={blind}): {lines!r}")
        seen = fv.card_lines(blind_decision(d, fv.BLIND_DETAIL), True)
        if fv.card_lines(d, True) != seen:
            raise _fail(mod, "blind card", f"decision {d['id']}: the blind card shows what the judge or another "
                        f"reviewer answered (lines differ from the blind decision's: {fv.card_lines(d, True)!r} vs "
                        f"{seen!r})")


def check_gold_items(fv: FamilyView, run: RunView) -> None:
    """Gold items are strings; the item a decision is about is one of its document's."""
    if fv.gold_items is None:
        return
    for doc in run.document_ids()[:20]:
        items = fv.gold_items(run.document(doc)["payload"])
        if not all(isinstance(x, str) for x in items):
            raise _fail(fv.module, "gold items", f"{doc}: {items!r}")
        for d in run.decisions(doc) if fv.gold_item_of is not None else ():
            item = fv.gold_item_of(d)
            if item is not None and item not in items:
                raise _fail(fv.module, "gold items", f"decision {d['id']}: {item!r} is not among {doc}'s gold items")


def check_document_view(fv: FamilyView, run: RunView) -> None:
    """The document view, the queue preview and the card context run on a real document, sighted and blind."""
    decs = run.decisions()
    if not decs:
        return
    d = decs[0]
    info = run.document_review(d["doc"])
    for blind in (False, True):
        ctx = DocumentContext(run=run.row, doc=info, audited_counts=info["audited_counts"],
                              decisions=info["decisions"], review=lambda *_: None, blind=blind,
                              extra={"hide_derived": blind})
        try:
            fv.render_document(ctx)
        except Exception as e:  # noqa: BLE001 - any failure of the view is the finding
            raise _fail(fv.module, "document view", f"{type(e).__name__}: {e} (blind={blind})") from e
    if fv.preview is not None:
        fv.preview(info["payload"], d)
    if fv.card_context is not None:
        for seen in (d, blind_decision(d, fv.BLIND_DETAIL)):
            lines = fv.card_context(info["payload"], seen)
            if not all(isinstance(x, tuple) and len(x) >= 2 and all(isinstance(s, str) for s in x[:2])
                       for x in lines):
                raise _fail(fv.module, "card context", f"decision {d['id']}: {lines!r}")


def check_report_panel(fv: FamilyView, run: RunView) -> None:
    """The report panel is None or a titled `Section` of HTML strings and `Figure`s, and the same when built twice."""
    if fv.report_panel is None:
        return
    data = export_json(run.db, run)
    got = [fv.report_panel(run, data) for _ in range(2)]
    s = got[0]
    if s is None:
        return
    if not isinstance(s, Section) or not isinstance(s.title, str) or not s.title:
        raise _fail(fv.module, "report panel", f"not a titled Section: {s!r}")
    if not all(isinstance(b, str) for b in s.body) or not all(isinstance(f, Figure) for f in s.figures):
        raise _fail(fv.module, "report panel", "body must be HTML strings and figures Figure objects")
    if got[1] is None or (s.title, s.body, [f.spec for f in s.figures]) != (got[1].title, got[1].body,
                                                                            [f.spec for f in got[1].figures]):
        raise _fail(fv.module, "report panel", "two builds of the panel from one export differ")


CHECKS: tuple[Callable[[FamilyView, RunView], None], ...] = (check_cards, check_gold_items, check_document_view,
                                                             check_report_panel)


def check_view(mod: ModuleType, run: RunView) -> list[str]:
    """Every check on `mod` with the decisions and documents of `run` (a scored run of the view's family); the
    problems found, one line each (empty: the view keeps the protocol on this run)."""
    problems = []
    try:
        fv = check_protocol_names(mod)
    except ViewContractError as e:
        return [str(e)]
    try:
        check_no_near_miss_names(mod)
    except ViewContractError as e:
        problems.append(str(e))
    for check in CHECKS:
        try:
            check(fv, run)
        except ViewContractError as e:
            problems.append(str(e))
    return problems
