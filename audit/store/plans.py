"""Reads of a run's plan and shares that the review modules share: one place, below them, so neither imports the
other to ask."""

from __future__ import annotations

from sqlite_utils import Database


def planned_documents(db: Database, run_id: int) -> set[str]:
    """The documents the run's assignment distributed (empty: no assignment)."""
    return {r[0] for r in db.execute("SELECT DISTINCT doc_id FROM review_shares WHERE run_id = ?", [run_id])}
