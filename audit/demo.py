"""The bundled demo runs that the dashboard opens on: every registered family's `demo_runs` over `data/`."""

from __future__ import annotations

from pathlib import Path

from sqlite_utils import Database

from audit.errors import RunExists
from audit.reviews_io import import_reviews
from audit.runs import score_run
from scoring.families import TASKS
from scoring.families.base import DemoRun

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


def demo_runs() -> list[tuple[str, DemoRun]]:
    """(task, demo run) for every family, in registry order; the first is the one the dashboard opens on."""
    return [(name, d) for name, fam in TASKS.items() for d in fam.demo_runs(DATA)]


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


def ensure_demo(db: Database) -> str:
    """Score each demo run once (offline judges only); return the name of the first."""
    have = {r["name"] for r in db.query("SELECT name FROM runs")}
    for task, d in demo_runs():
        if d.name in have:
            continue
        try:
            score_run(db, task, d.inputs, d.judge, run=d.name)
        except RunExists:
            continue  # another session scored it at the same moment
        if d.reviews:
            import_reviews(db, d.name, d.reviews)
    return first_demo_run()
