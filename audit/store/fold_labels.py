"""The labels each fold judge of an LLM-improved judge gave a run's decisions (`fold_labels`, m021; issue #37
§2): written by `score` (`audit.outputs.fold_labels`), read by the cross-fitted estimate
(`audit.review.crossfit_estimate`)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlite_utils import Database

from audit.store.database import transaction


def save_fold_labels(db: Database, run_id: int, rows: Sequence[tuple[int, int, str, str]]) -> None:
    """Replace the run's fold labels with `rows` (fold, decision id, label, answers JSON), all or nothing."""
    with transaction(db):
        db.execute("DELETE FROM fold_labels WHERE run_id = ?", [run_id])
        db.conn.executemany("INSERT INTO fold_labels (run_id, fold, decision_id, label, answers) "
                            "VALUES (?, ?, ?, ?, ?)", [(run_id, *r) for r in rows])


def stored_fold_labels(db: Database, run_id: int) -> dict[int, dict[int, str]]:
    """fold -> {decision id: label} (empty when the fold judges were not asked on this run)."""
    out: dict[int, dict[int, str]] = {}
    for r in db.query("SELECT fold, decision_id, label FROM fold_labels WHERE run_id = ?", [run_id]):
        out.setdefault(r["fold"], {})[r["decision_id"]] = r["label"]
    return out
