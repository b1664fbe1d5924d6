"""The view battery (`ui.families.checks`): every registered family's view keeps the view protocol on its demo runs
(with another reviewer's labels in the database), and each planted view bug, a copy of a real view with one
plausible mistake, fails its check (a guard is tested by what it refuses)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from audit.demo import demo_runs
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import RunView, load_view
from scoring.families import TASKS
from tests.conftest import copy_of
from ui.families import PROTOCOL, FamilyView, family_view, view
from ui.families.checks import check_view

DEMO = {task: d.name for task, d in reversed(demo_runs())}  # each family's first demo run


@pytest.fixture(scope="module")
def db(tmp_path_factory, demo_template):
    conn = open_db(copy_of(demo_template, tmp_path_factory.mktemp("views") / "demo.db"))
    for run in DEMO.values():
        v = load_view(conn, run)
        for d in v.decisions()[:3]:  # another reviewer's label: a blind card must not show it
            labels = v.task.label_schemes[d["kind"]].labels
            add_review(conn, run, d["id"], next(lab for lab in labels if lab != d["judge"]), "other")
    return conn


def run_of(db, task: str) -> RunView:
    return load_view(db, DEMO[task])


def test_the_protocol_documents_every_name() -> None:
    """Each name of the protocol carries a docstring in ui/families/__init__.py (what it is, required or default)."""
    source = (Path(sys.modules[FamilyView.__module__].__file__)).read_text(encoding="utf-8")
    for name in PROTOCOL:
        at = source.index(f"    {name}: ")
        assert source[at:].split("\n", 2)[1].lstrip().startswith('"""'), name


@pytest.mark.parametrize("task", list(TASKS))
def test_every_registered_view_keeps_the_protocol(task: str, db) -> None:
    assert check_view(view(task), run_of(db, task)) == []


def test_the_defaults_fill_what_a_view_leaves_out() -> None:
    fv = family_view(next(t for t in TASKS if not hasattr(view(t), "render_run")))
    assert fv.render_run is None and fv.RUN_PANEL_TITLE == "More about this run"


def plant(tmp_path: Path, name: str, body: str) -> ModuleType:
    """A copy of the CHIMERA view (every public name) with `body` changing one thing, imported from a file."""
    path = tmp_path / f"{name}.py"
    path.write_text("from ui.families.chimera import *  # noqa: F403\n"
                    "from ui.families.chimera import card_lines as _card_lines, gold_items as _gold_items\n"
                    + textwrap.dedent(body), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


PLANTS = {
    "no card lines": ("del card_lines\n", "protocol names"),
    "card lines ignore blind": ("def card_lines(d, blind=False):\n    return _card_lines(d, False)\n", "blind card"),
    "blind card shows other reviewers": ("def card_lines(d, blind=False):\n"
                                         "    return _card_lines(d, blind) + [('reviewers', str(d['human']))]\n",
                                         "blind card"),
    "misspelt optional name": ("Preview = preview\ndel preview\n", "near-miss names"),
    "misspelt help": ("SECTION_HELPS = SECTION_HELP\ndel SECTION_HELP\n", "near-miss names"),
    "help of the wrong type": ("SECTION_HELP = ['entities']\n", "protocol names"),
    "preview of the wrong arity": ("def preview(payload):\n    return None\n", "protocol names"),
    "gold item not among the document's": ("def gold_items(payload):\n    return _gold_items(payload)[:0]\n",
                                           "gold items"),
    "report panel not a section": ("def report_panel(run, data):\n    return {'title': 'x'}\n", "report panel"),
    "report panel not a function of its export": (
        "import itertools\n_n = itertools.count()\n"
        "def report_panel(run, data):\n    from audit.outputs.report import Section\n"
        "    return Section('calls', [str(next(_n))])\n", "report panel"),
}


@pytest.mark.parametrize("bug", list(PLANTS))
def test_a_planted_view_bug_fails_its_check(bug: str, tmp_path: Path, db) -> None:
    body, check = PLANTS[bug]
    found = check_view(plant(tmp_path, f"plant_{abs(hash(bug))}", body), run_of(db, "chimera"))
    assert any(f": {check}: " in p for p in found), (bug, found)


def test_the_unchanged_copy_passes(tmp_path: Path, db) -> None:
    """The plants' base (the CHIMERA view re-exported from a file) passes: each plant fails by its one change."""
    assert check_view(plant(tmp_path, "plant_base", ""), run_of(db, "chimera")) == []
