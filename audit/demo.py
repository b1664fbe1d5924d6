"""The bundled demo runs that the dashboard opens on: every registered family's `demo_runs` over `data/`.

They are scored once into a new database (the dashboard's first start, with progress on the page), or on request
(the Runs page's button, `python -m audit demo`); a page view never writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from sqlite_utils import Database

from audit.board.store import create_board, delete_board, list_boards
from audit.errors import AuditError, RunExists
from audit.review.reviews_io import import_reviews
from audit.runs import score_run
from audit.store.database import now, run_row, transaction
from audit.store.improvements import save_improvement
from scoring.families import TASKS
from scoring.families.base import DemoRun

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


def demo_runs() -> list[tuple[str, DemoRun]]:
    """(task, demo run) for every family, in registry order; the first is the one the dashboard opens on."""
    return [(name, d) for name, fam in TASKS.items() for d in fam.demo_runs(DATA)]


def demo_note(name: str, *, blind: bool) -> str:
    """The demo run's note as a reviewer may read it: judge-derived parts (the family declares them) hidden in
    blind review; "" for a run that is not a demo run."""
    return next((d.note_for(blind=blind) for _, d in demo_runs() if d.name == name), "")


def first_demo_run() -> str:
    return demo_runs()[0][1].name


def bundled_files() -> dict[str, Path]:
    """Files and folders under data/ the new-run form offers, labelled by family and path."""
    out = {}
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir()):
        for f in sorted(folder.iterdir()):
            if f.name.endswith((".md", ".txt")) or f.name.startswith("."):
                continue
            out[f"{folder.name}/{f.name}" + ("/" if f.is_dir() else "")] = f
    return out


SEEDED = "demo_seeded"
SEEDING = "demo_seeding_started"
"""Set when a first start begins to score the demo: a first start interrupted half-way (the user left the page while
it ran) is resumed at the next visit, not taken for an earlier release's database."""
"""`settings` key recording that the demo runs were scored into this database once (so a demo run deleted on
purpose stays deleted)."""

DemoProgress = Callable[[int, int, str], None]
"""(demo runs done, demo runs in all, name of the one being prepared)."""


def is_seeded(db: Database) -> bool:
    return bool(db.execute("SELECT 1 FROM settings WHERE key = ?", [SEEDED]).fetchone())


def needs_seeding(db: Database) -> bool:
    """True for a writable database that has never held the demo runs: the dashboard's first start scores them.

    A read (no write): a read-only database, one seeded before, or one that already has a demo run (a database of
    an earlier release, which scored the demo on every page view) is left as it is.
    """
    if getattr(db, "read_only", False) or is_seeded(db):
        return False
    if db.execute("SELECT 1 FROM settings WHERE key = ?", [SEEDING]).fetchone():
        return True  # a first start that did not finish: score the runs and boards it lacks
    have = {r["name"] for r in db.query("SELECT name FROM runs")}
    if have & {d.name for _, d in demo_runs()}:
        _mark_seeded(db)
        return False
    return True


def load_demo(db: Database, progress: DemoProgress | None = None) -> list[str]:
    """Score every demo run the database lacks (offline judges only), import its reviews, and record that the
    database was seeded; return the names scored. The Runs page's "Load the demo runs" and `python -m audit demo`.

    Raises:
        AuditError: the database is read-only.
    """
    if getattr(db, "read_only", False):
        raise AuditError("the database is read-only: the demo runs cannot be scored into it")
    runs = demo_runs()
    _mark(db, SEEDING)
    have = {r["name"] for r in db.query("SELECT name FROM runs")}
    scored = []
    for i, (task, d) in enumerate(runs):
        if progress:
            progress(i, len(runs), d.name)
        if d.name in have:
            continue
        try:
            score_run(db, task, d.inputs, d.judge, run=d.name)
        except RunExists:
            continue  # another session scored it at the same moment
        if d.reviews:
            import_reviews(db, d.name, d.reviews)
        if d.improvement:
            row = run_row(db, d.name)
            save_improvement(db, row["id"], json.loads(Path(d.improvement).read_text(encoding="utf-8")))
        scored.append(d.name)
    seed_boards(db)
    if progress:
        progress(len(runs), len(runs), "")
    _mark_seeded(db)
    return scored


def demo_boards() -> dict[str, list[str]]:
    """Each demo board (`DemoRun.board`) with its runs, in registry order."""
    out: dict[str, list[str]] = {}
    for _, d in demo_runs():
        if d.board:
            out.setdefault(d.board, []).append(d.name)
    return out


def seed_boards(db: Database) -> list[str]:
    """Create every demo board the database lacks whose runs are all in it (a board of a deleted demo run is left
    out, or keeps the others: `delete_run`), and give a demo board that lost a run the run again once it is loaded
    again; return the names created or completed."""
    have_runs = {r["name"] for r in db.query("SELECT name FROM runs")}
    have = {b["name"]: b["runs"] for b in list_boards(db)}
    made = []
    for name, runs in demo_boards().items():
        if not set(runs) <= have_runs:
            continue
        if name in have:
            if have[name] == runs or not set(have[name]) < set(runs):
                continue  # complete, or a board of the user's under a demo board's name
            delete_board(db, name)  # a demo run deleted and loaded again: back on its board (a new plan needed)
        try:
            create_board(db, name, runs)
        except AuditError:
            if any(b["name"] == name for b in list_boards(db)):
                continue  # another session created it at the same moment
            raise
        made.append(name)
    return made


def _mark_seeded(db: Database) -> None:
    _mark(db, SEEDED)


def _mark(db: Database, key: str) -> None:
    with transaction(db):
        db.execute("INSERT OR REPLACE INTO settings (key, value, updated) VALUES (?, '1', ?)", [key, now()])
