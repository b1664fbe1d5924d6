"""Reads of a run's plan and shares that the review modules share: one place, below them, so neither imports the
other to ask."""

from __future__ import annotations

import json

from sqlite_utils import Database

from audit.store.database import dumps


def planned_documents(db: Database, run_id: int) -> set[str]:
    """The documents the run's assignment distributed (empty: no assignment)."""
    return {r[0] for r in db.execute("SELECT DISTINCT doc_id FROM review_shares WHERE run_id = ?", [run_id])}


def delete_board_plans(db: Database, boards: list[str], *, run: str | None = None) -> None:
    """Delete the sampling plans (and served documents) of these boards, and of every board plan over `run`: a plan
    never outlives its board or one of its runs (a new board of the same name starts without one). Called inside
    the caller's transaction."""
    if run is not None:
        boards = [*boards, *(b for b, in db.execute("SELECT board FROM board_plans WHERE EXISTS (SELECT 1 FROM "
                                                     "json_each(board_plans.runs) WHERE value = ?)", [run]))]
    for name in dict.fromkeys(boards):
        db.execute("DELETE FROM board_draws WHERE board = ?", [name])
        db.execute("DELETE FROM board_plans WHERE board = ?", [name])


def drop_run_from_boards(db: Database, run: str) -> tuple[dict[str, list[str]], list[str]]:
    """Take run `run` off every board that holds it, inside the caller's transaction: a board of runs keeps the others
    while two or more remain (a board compares two or more systems), else it is deleted, as is a board whose systems
    live inside the run (ideation). The plans of every board touched are deleted (`delete_board_plans`): a plan was
    drawn over the board's runs as they were. Returns ({board: the runs it keeps}, [boards deleted]), by name."""
    kept: dict[str, list[str]] = {}
    gone: list[str] = []
    for name, runs_json, systems in db.execute(
            "SELECT name, runs, systems FROM boards WHERE EXISTS (SELECT 1 FROM json_each(boards.runs) "
            "WHERE value = ?) ORDER BY name", [run]).fetchall():
        rest = [r for r in json.loads(runs_json) if r != run]
        if systems is None and len(rest) >= 2:
            db.execute("UPDATE boards SET runs = ? WHERE name = ?", [dumps(rest), name])
            kept[name] = rest
        else:
            db.execute("DELETE FROM boards WHERE name = ?", [name])
            gone.append(name)
    delete_board_plans(db, [*kept, *gone], run=run)
    return kept, gone
