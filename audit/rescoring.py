"""Audited metrics, kept up to date incrementally.

Each run keeps its audited state in the store: the effective label of every reviewed decision (`effective`), the
audited counts of every document whose labels changed (`doc_audit`), the audited total and the id of the last
review applied (`audit_state`). `audit_run` applies only the reviews added since, re-counting only their
documents, so one review costs one document's re-count whatever the size of the run. `rebuild=True` recomputes
everything from the reviews (the tests check both agree).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from sqlite_utils import Database

from audit.reviews import effective_label
from audit.store import dumps, run_row, transaction
from scoring.families import get_task
from scoring.families.base import add_nested

_CHUNK = 900  # SQLite's default limit on bound parameters is 999


@dataclass
class Audit:
    """A run's audited state."""

    metrics: dict
    counts: dict
    changed_docs: dict[str, str]
    """Documents whose labels changed: doc id -> audited outcome."""
    review_counts: dict


def reviews_by_decision(db: Database, run_id: int, decision_ids: list[int] | None = None) -> dict[int, list[dict]]:
    """Review rows grouped by decision, oldest first (by creation time: imported reviews keep theirs)."""
    out: dict[int, list[dict]] = defaultdict(list)
    cols = "id, decision_id, reviewer, label, role, blind, note, created"
    if decision_ids is None:
        rows = db.query(f"SELECT {cols} FROM reviews WHERE run_id = ? ORDER BY created, id", [run_id])
        for r in rows:
            out[r["decision_id"]].append(r)
        return out
    for ids in _chunks(decision_ids):
        for r in db.query(f"SELECT {cols} FROM reviews WHERE decision_id IN ({_marks(ids)}) ORDER BY created, id",
                          ids):
            out[r["decision_id"]].append(r)
    return out


def _chunks(ids: list) -> list[list]:
    return [ids[i:i + _CHUNK] for i in range(0, len(ids), _CHUNK)]


def _marks(ids: list) -> str:
    return ",".join("?" * len(ids))


def audit_run(db: Database, run: str, *, rebuild: bool = False) -> Audit:
    """Bring the run's audited state up to date with its reviews and return it."""
    row = run_row(db, run)
    run_id = row["id"]
    state = db.execute("SELECT last_review, total FROM audit_state WHERE run_id = ?", [run_id]).fetchone()
    newest = db.execute("SELECT COALESCE(MAX(id), 0) FROM reviews WHERE run_id = ?", [run_id]).fetchone()[0]
    if rebuild or state is None or state[0] != newest:
        with transaction(db):
            _apply(db, row, rebuild=rebuild)
        state = db.execute("SELECT last_review, total FROM audit_state WHERE run_id = ?", [run_id]).fetchone()
    total = json.loads(state[1])
    task = get_task(row["task"])
    changed = {r["doc_id"]: r["outcome"] for r in db.query("SELECT doc_id, outcome FROM doc_audit WHERE run_id = ?",
                                                          [run_id])}
    return Audit(task.metrics(total), total, changed, review_counts(db, run_id))


def _apply(db: Database, row: dict, *, rebuild: bool) -> None:
    """Inside a write transaction: apply the reviews added since the last call (all of them with `rebuild`)."""
    run_id = row["id"]
    state = db.execute("SELECT last_review, total FROM audit_state WHERE run_id = ?", [run_id]).fetchone()
    if rebuild or state is None:
        db.execute("DELETE FROM effective WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM doc_audit WHERE run_id = ?", [run_id])
        last, total = 0, row["original_counts"]
    else:
        last, total = state[0], json.loads(state[1])
    new = [r[0] for r in db.execute("SELECT DISTINCT decision_id FROM reviews WHERE run_id = ? AND id > ?",
                                    [run_id, last])]
    newest = db.execute("SELECT COALESCE(MAX(id), 0) FROM reviews WHERE run_id = ?", [run_id]).fetchone()[0]
    by_dec = reviews_by_decision(db, run_id, new)
    docs: set[str] = set()
    for ids in _chunks(new):
        for d in db.query(f"SELECT id, doc_id, judge_label FROM decisions WHERE id IN ({_marks(ids)})", ids):
            e = effective_label(d["judge_label"], by_dec.get(d["id"], []))
            db.execute("INSERT OR REPLACE INTO effective (decision_id, run_id, doc_id, judge_label, label, source, "
                       "n_humans) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [d["id"], run_id, d["doc_id"], d["judge_label"], e.label, e.source, len(e.human_labels)])
            docs.add(d["doc_id"])
    task = get_task(row["task"])
    for doc_id in sorted(docs):
        key = [run_id, doc_id]
        payload, original = db.execute("SELECT payload, counts FROM documents WHERE run_id = ? AND doc_id = ?",
                                       key).fetchone()
        before = db.execute("SELECT counts FROM doc_audit WHERE run_id = ? AND doc_id = ?", key).fetchone()
        labels = {}
        for kind, typ, left, right, judge, eff in db.execute(
                "SELECT d.kind, d.type, d.left, d.right, d.judge_label, e.label FROM decisions d LEFT JOIN effective e "
                "ON e.decision_id = d.id WHERE d.run_id = ? AND d.doc_id = ?", [run_id, doc_id]):
            labels[(kind, typ, left, right)] = eff or judge
        payload = json.loads(payload)
        counts = task.counts(payload, labels)
        add_nested(total, json.loads(before[0]) if before else json.loads(original), -1)
        add_nested(total, counts)
        if counts == json.loads(original):
            db.execute("DELETE FROM doc_audit WHERE run_id = ? AND doc_id = ?", [run_id, doc_id])
        else:
            db.execute("INSERT OR REPLACE INTO doc_audit (run_id, doc_id, counts, outcome) VALUES (?, ?, ?, ?)",
                       [run_id, doc_id, dumps(counts), task.outcome(payload, counts)])
    db.execute("INSERT OR REPLACE INTO audit_state (run_id, last_review, total) VALUES (?, ?, ?)",
               [run_id, newest, dumps(total)])


def review_counts(db: Database, run_id: int) -> dict:
    """Reviewed / overruled / confirmed / conflicted / adjudicated decisions, review rows and reviewers."""
    r = db.execute(
        "SELECT COALESCE(SUM(n_humans > 0 OR source = 'adjudicated'), 0), COALESCE(SUM(label != judge_label), 0), "
        "COALESCE(SUM(source IN ('human', 'adjudicated') AND label = judge_label), 0), "
        "COALESCE(SUM(source = 'conflicted'), 0), COALESCE(SUM(source = 'adjudicated'), 0) "
        "FROM effective WHERE run_id = ?", [run_id]).fetchone()
    n_rows, = db.execute("SELECT COUNT(*) FROM reviews WHERE run_id = ?", [run_id]).fetchone()
    reviewers = [x[0] for x in db.execute("SELECT DISTINCT reviewer FROM reviews WHERE run_id = ? ORDER BY reviewer",
                                          [run_id])]
    return {"reviewed": r[0], "overruled": r[1], "confirmed": r[2], "conflicted": r[3], "adjudicated": r[4],
            "reviews": n_rows, "reviewers": reviewers}
