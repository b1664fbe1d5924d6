"""Reads of a run's plan and shares that the review modules share: one place, below them, so neither imports the
other to ask."""

from __future__ import annotations

from sqlite_utils import Database


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
