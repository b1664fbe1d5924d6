"""Audited state that a migration left stale, rebuilt with the current code.

A migration that changes decisions or reviews (m004's twin merge) cannot re-count documents: counting is family
code, which keeps changing after the migration is written. It deletes the run's derived audited state instead
(`audit.store.migrations.mark_audit_stale`): a run without an `audit_state` row is stale. Until it is rebuilt, reads
recompute it in memory (`audit.rescoring.audit_run`) and the next review write rebuilds it; `rebuild_stale_runs`,
called once after opening a writable database, stores it again at once.

Every command opens the database through it, and almost always there is nothing to do: the re-scoring code and
the families are imported only when one of the three SQL tests finds work (they were most of `runs`, #38).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from audit.store.database import dumps, transaction

if TYPE_CHECKING:
    from sqlite_utils import Database


def fill_question_keys(db: Database) -> list[str]:
    """Compute the question keys of the decisions of every run stored before they existed (`runs.qkeys_missing`,
    migration m014), then mark stale every run of the same family (it may now share reviews with them); the names
    keyed."""
    from scoring.families import get_task
    from scoring.families.base import decision_qkeys

    done = []
    for row in list(db.query("SELECT id, name, task FROM runs WHERE qkeys_missing = 1 ORDER BY id")):
        task = get_task(row["task"])
        keys = []
        for doc_id, payload in db.execute("SELECT doc_id, payload FROM documents WHERE run_id = ?", [row["id"]]):
            payload = json.loads(payload)
            gold = task.gold_key(payload)
            rows = db.execute("SELECT id, kind, type, left, right FROM decisions WHERE run_id = ? AND doc_id = ?",
                              [row["id"], doc_id]).fetchall()
            asked = [{"kind": k, "type": t, "left": le, "right": r} for _, k, t, le, r in rows]
            keys += zip(decision_qkeys(task, payload, asked, gold), [r[0] for r in rows], strict=True)
        with transaction(db):
            db.conn.executemany("UPDATE decisions SET qkey = ? WHERE id = ?", keys)
            db.execute("UPDATE runs SET qkeys_missing = 0 WHERE id = ?", [row["id"]])
            for (other,) in list(db.execute("SELECT id FROM runs WHERE task = ?", [row["task"]])):
                db.execute("DELETE FROM audit_state WHERE run_id = ?", [other])
        done.append(row["name"])
    return done


def stale_runs(db: Database) -> list[str]:
    """Names of the runs whose stored audited state is missing (a migration marked it stale) or lacks its review
    counts (stored before m022), in id order."""
    return [name for name, in db.execute(
        "SELECT name FROM runs WHERE id NOT IN (SELECT run_id FROM audit_state WHERE review_counts IS NOT NULL) "
        "ORDER BY id")]


def rebuild_stale_runs(db: Database) -> list[str]:
    """Rebuild the stored audited state of every stale run from its reviews; the names rebuilt.

    A read-only database is left as it is (its reads recompute the audited state in memory).
    """
    if getattr(db, "read_only", False) or not _anything_stale(db):
        return []
    from audit.rescoring import rebuild_audit_state

    reaggregate_original_metrics(db)
    fill_question_keys(db)
    names = stale_runs(db)
    for name in names:
        rebuild_audit_state(db, name)
    return names


def _anything_stale(db: Database) -> bool:
    """Whether `rebuild_stale_runs` has anything to do (the three tests it makes, in SQL alone)."""
    found = db.execute("SELECT EXISTS (SELECT 1 FROM runs WHERE metrics_stale = 1 OR qkeys_missing = 1 OR id NOT IN "
                       "(SELECT run_id FROM audit_state WHERE review_counts IS NOT NULL))").fetchone()[0]
    return found == 1


def reaggregate_original_metrics(db: Database) -> list[str]:
    """Re-aggregate the original (judge-labelled) metrics of every run a migration marked `metrics_stale` (a
    family's aggregation changed) from its stored document counts; the names done."""
    from audit.rescoring import run_options
    from scoring.families import get_task

    done = []
    for row in list(db.query("SELECT id, name, task, inputs FROM runs WHERE metrics_stale = 1 ORDER BY id")):
        task = get_task(row["task"])
        counts = [json.loads(c) for c, in db.execute("SELECT counts FROM documents WHERE run_id = ? ORDER BY idx",
                                                      [row["id"]])]
        metrics = task.aggregate(counts, run_options({"inputs": json.loads(row["inputs"])}))
        with transaction(db):
            db.execute("UPDATE runs SET original_metrics = ?, metrics_stale = 0 WHERE id = ?",
                       [dumps(metrics), row["id"]])
        done.append(row["name"])
    return done
