"""What the Runs page lists: the runs with their family and headline numbers, and the bundled demo runs."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from audit.demo import demo_runs
from audit.learning import learning_by_run
from audit.numbers import format_value
from audit.outputs.export import _public_spec as public_spec
from audit.store.database import Database, list_runs
from scoring.families import TASKS
from ui.state import link, short_spec


def headline_value(r: dict) -> str:
    """The family's headline numbers of a run (original, i.e. as the judge scored it), each in its unit."""
    task = TASKS.get(r["task"])
    if task is None:
        return ""
    return " · ".join(f"{cell.label} {format_value(cell.value(r['original_metrics']), cell.unit)}"
                      for cell in task.headline)


def family_title(task: str) -> str:
    return TASKS[task].title if task in TASKS else task


def runs_frame(conn: Database, *, hide_scores: bool | Callable[[str], bool]) -> pd.DataFrame:
    """One row per run, newest first, with an `open` link; scores left out for a blind reviewer (`hide_scores`: for
    every run, or per run name: blind on that run, `ui.state.blind_on`, says "hidden (blind)"). The columns that
    matter come first and stay short (the family's name, the judge log's file name), so at 1280 px the link, the
    run, its judge and its scores are in view; the family's full title is the run overview's. A judge improved on
    reviews that changed since is marked stale, one improve-judge showed no improvement for says so
    (`audit.learning`)."""
    learning = learning_by_run(conn)
    marks = {name: "⚠ stale · " if s["stale"] else "⚠ not improved · " if s.get("not_improved") else ""
             for name, s in learning.items()}

    def scores(r: dict) -> str:
        return "hidden (blind)" if callable(hide_scores) and hide_scores(r["name"]) else headline_value(r)

    df = pd.DataFrame([{"run": r["name"], "family": r["task"],
                        "judge": marks.get(r["name"], "") + public_spec(short_spec(r["judge_spec"])),
                        **({} if hide_scores is True else {"scores (original)": scores(r)}),
                        "documents": r["n_docs"], "decisions": r["n_decisions"],
                        "created": r["created"][:19].replace("T", " ")} for r in list_runs(conn)])
    if not df.empty:
        df.insert(0, "open", [link("overview", run=r) for r in df["run"]])
    return df


def demo_lines() -> list[tuple[str, str, str]]:
    """(demo run name, family title, note) for every bundled demo run, in registry order."""
    return [(d.name, family_title(task), d.note) for task, d in demo_runs()]
