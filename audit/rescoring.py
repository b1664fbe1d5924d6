"""Audited metrics, kept up to date by the writes that change them.

Each run keeps its audited state in the store: the effective label of every reviewed decision (`effective`), the
audited counts of every document whose labels changed (`doc_audit`), the audited total and the id of the last
review applied (`audit_state`). Every write of reviews (`audit.reviews.add_review`, `audit.reviews_io`) calls
`apply_reviews` inside its own transaction, which re-counts only the documents of the new reviews. Reading
(`audit_run`, every page render) never writes: a state that is behind its reviews (a database written by an
older version, or opened read-only) is brought up to date in memory only.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from sqlite_utils import Database

from audit.errors import AuditError
from audit.reviews import POLICIES, effective_label
from audit.store import dumps, run_row, transaction
from scoring.families import get_task
from scoring.families.base import TaskFamily, add_nested

_CHUNK = 900  # SQLite's default limit on bound parameters is 999


@dataclass
class Audit:
    """A run's audited state."""

    metrics: dict
    counts: dict
    changed_docs: dict[str, str]
    """Documents whose labels changed: doc id -> audited outcome."""
    review_counts: dict
    doc_counts: dict[str, dict] | None = None
    """Audited counts of the changed documents (doc id -> counts)."""


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


def run_options(row: Mapping) -> dict:
    return dict(row["inputs"].get("options") or {})


def doc_labels(db: Database, run_id: int, doc_id: str,
               effective: Mapping[int, str] | None = None) -> dict[tuple[str, str, str, str], str]:
    """{(kind, type, left, right): effective label} of one document (stored state, or `effective` overrides)."""
    labels = {}
    for dec_id, kind, typ, left, right, judge, eff in db.execute(
            "SELECT d.id, d.kind, d.type, d.left, d.right, d.judge_label, e.label FROM decisions d LEFT JOIN effective "
            "e ON e.decision_id = d.id WHERE d.run_id = ? AND d.doc_id = ?", [run_id, doc_id]):
        if effective is not None:
            eff = effective.get(dec_id)
        labels[(kind, typ, left, right)] = eff or judge
    return labels


def _newest_review(db: Database, run_id: int) -> int:
    return db.execute("SELECT COALESCE(MAX(id), 0) FROM reviews WHERE run_id = ?", [run_id]).fetchone()[0]


def audit_run(db: Database, run: str, *, rebuild: bool = False, policy: str = "unanimous") -> Audit:
    """The run's audited state, read from the store (never written here).

    `rebuild=True` recomputes everything from the reviews in memory (the tests check both agree); so does any
    effective-label `policy` other than the stored one (`audit.reviews.POLICIES`).
    """
    if policy not in POLICIES:
        raise AuditError(f"unknown effective-label policy {policy!r}; use one of {', '.join(POLICIES)}")
    row = run_row(db, run)
    run_id = row["id"]
    task = get_task(row["task"])
    state = db.execute("SELECT last_review, total FROM audit_state WHERE run_id = ?", [run_id]).fetchone()
    if rebuild or policy != "unanimous" or state is None or state[0] != _newest_review(db, run_id):
        return _audit_in_memory(db, row, task, policy)
    total = json.loads(state[1])
    changed, doc_counts = {}, {}
    for r in db.query("SELECT doc_id, outcome, counts FROM doc_audit WHERE run_id = ?", [run_id]):
        changed[r["doc_id"]] = r["outcome"]
        doc_counts[r["doc_id"]] = json.loads(r["counts"])
    metrics = task.metrics(total, _per_doc(db, run_id, doc_counts) if task.needs_doc_counts else None,
                           run_options(row))
    return Audit(metrics, total, changed, review_counts(db, run_id), doc_counts)


def doc_counts_in_order(db: Database, run_id: int, changed: Mapping[str, dict]) -> list[tuple[str, dict]]:
    """(doc id, audited counts) of every document in input order: the changed ones' audited counts, else the
    original counts."""
    return [(doc_id, changed.get(doc_id) or json.loads(counts))
            for doc_id, counts in db.execute("SELECT doc_id, counts FROM documents WHERE run_id = ? ORDER BY idx",
                                             [run_id])]


def _per_doc(db: Database, run_id: int, changed: Mapping[str, dict]) -> list[dict]:
    return [c for _, c in doc_counts_in_order(db, run_id, changed)]


def _effective_all(db: Database, run_id: int, policy: str = "unanimous") -> dict[int, tuple[str, object]]:
    """decision id -> (doc id, Effective) for every reviewed decision of the run."""
    by_dec = reviews_by_decision(db, run_id)
    out = {}
    ids = list(by_dec)
    for chunk in _chunks(ids):
        for d in db.query(f"SELECT id, doc_id, judge_label FROM decisions WHERE id IN ({_marks(chunk)})", chunk):
            out[d["id"]] = (d["doc_id"], effective_label(d["judge_label"], by_dec[d["id"]], policy))
    return out


def _audit_in_memory(db: Database, row: dict, task: TaskFamily, policy: str = "unanimous") -> Audit:
    run_id = row["id"]
    eff = _effective_all(db, run_id, policy)
    labels_by_id = {i: e.label for i, (_, e) in eff.items()}  # type: ignore[attr-defined]
    total = json.loads(json.dumps(row["original_counts"]))
    changed, doc_counts = {}, {}
    for doc_id in sorted({doc for doc, _ in eff.values()}):
        payload, original = db.execute("SELECT payload, counts FROM documents WHERE run_id = ? AND doc_id = ?",
                                       [run_id, doc_id]).fetchone()
        payload, original = json.loads(payload), json.loads(original)
        counts = task.counts(payload, doc_labels(db, run_id, doc_id, labels_by_id))
        add_nested(add_nested(total, original, -1), counts)
        if counts != original:
            changed[doc_id] = task.outcome(payload, counts)
            doc_counts[doc_id] = counts
    n_humans = {i: e for i, (_, e) in eff.items()}
    metrics = task.metrics(total, _per_doc(db, run_id, doc_counts) if task.needs_doc_counts else None,
                           run_options(row))
    return Audit(metrics, total, changed, _review_counts_from(db, run_id, n_humans), doc_counts)


def apply_reviews(db: Database, run_id: int) -> None:
    """Inside the caller's write transaction: apply the run's reviews added since the state was last brought up to
    date, re-counting only their documents (and storing decisions a family adds under the new labels)."""
    row = db.execute("SELECT name FROM runs WHERE id = ?", [run_id]).fetchone()
    run = run_row(db, row[0])
    task = get_task(run["task"])
    state = db.execute("SELECT last_review, total FROM audit_state WHERE run_id = ?", [run_id]).fetchone()
    if state is None:
        db.execute("DELETE FROM effective WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM doc_audit WHERE run_id = ?", [run_id])
        last, total = 0, run["original_counts"]
    else:
        last, total = state[0], json.loads(state[1])
    new = [r[0] for r in db.execute("SELECT DISTINCT decision_id FROM reviews WHERE run_id = ? AND id > ?",
                                    [run_id, last])]
    newest = _newest_review(db, run_id)
    by_dec = reviews_by_decision(db, run_id, new)
    docs: set[str] = set()
    for ids in _chunks(new):
        for d in db.query(f"SELECT id, doc_id, judge_label FROM decisions WHERE id IN ({_marks(ids)})", ids):
            e = effective_label(d["judge_label"], by_dec.get(d["id"], []))
            db.execute("INSERT OR REPLACE INTO effective (decision_id, run_id, doc_id, judge_label, label, source, "
                       "n_humans) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [d["id"], run_id, d["doc_id"], d["judge_label"], e.label, e.source, len(e.human_labels)])
            docs.add(d["doc_id"])
    for doc_id in sorted(docs):
        key = [run_id, doc_id]
        payload, original = db.execute("SELECT payload, counts FROM documents WHERE run_id = ? AND doc_id = ?",
                                       key).fetchone()
        before = db.execute("SELECT counts FROM doc_audit WHERE run_id = ? AND doc_id = ?", key).fetchone()
        payload = json.loads(payload)
        labels = doc_labels(db, run_id, doc_id)
        added = task.redecide(payload, labels)
        if added:
            db.conn.executemany(
                "INSERT OR IGNORE INTO decisions (run_id, doc_id, kind, type, left, right, judge_label, detail) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, d.doc, d.kind, d.type, d.left, d.right, d.judge, dumps(d.detail)) for d in added])
            labels = doc_labels(db, run_id, doc_id)
        counts = task.counts(payload, labels)
        add_nested(total, json.loads(before[0]) if before else json.loads(original), -1)
        add_nested(total, counts)
        if counts == json.loads(original):
            db.execute("DELETE FROM doc_audit WHERE run_id = ? AND doc_id = ?", key)
        else:
            db.execute("INSERT OR REPLACE INTO doc_audit (run_id, doc_id, counts, outcome) VALUES (?, ?, ?, ?)",
                       [run_id, doc_id, dumps(counts), task.outcome(payload, counts)])
    db.execute("UPDATE runs SET n_decisions = (SELECT COUNT(*) FROM decisions WHERE run_id = ?) WHERE id = ?",
               [run_id, run_id])
    db.execute("INSERT OR REPLACE INTO audit_state (run_id, last_review, total) VALUES (?, ?, ?)",
               [run_id, newest, dumps(total)])


def rebuild_audit_state(db: Database, run: str) -> None:
    """Recompute the stored audited state from all reviews (one write transaction)."""
    run_id = run_row(db, run)["id"]
    with transaction(db):
        db.execute("DELETE FROM audit_state WHERE run_id = ?", [run_id])
        apply_reviews(db, run_id)


def review_counts(db: Database, run_id: int) -> dict:
    """Reviewed / overruled / confirmed / conflicted / adjudicated decisions, review rows and reviewers."""
    r = db.execute(
        "SELECT COALESCE(SUM(n_humans > 0 OR source = 'adjudicated'), 0), COALESCE(SUM(label != judge_label), 0), "
        "COALESCE(SUM(source IN ('human', 'adjudicated') AND label = judge_label), 0), "
        "COALESCE(SUM(source = 'conflicted'), 0), COALESCE(SUM(source = 'adjudicated'), 0) "
        "FROM effective WHERE run_id = ?", [run_id]).fetchone()
    return _with_rows(db, run_id, {"reviewed": r[0], "overruled": r[1], "confirmed": r[2], "conflicted": r[3],
                                   "adjudicated": r[4]})


def _review_counts_from(db: Database, run_id: int, eff: Mapping[int, object]) -> dict:
    vals = list(eff.values())
    judge = {i: j for i, j in db.execute("SELECT id, judge_label FROM decisions WHERE run_id = ?", [run_id])}
    c = {"reviewed": sum(bool(e.human_labels) or e.source == "adjudicated" for e in vals),  # type: ignore[attr-defined]
         "overruled": sum(e.label != judge[i] for i, e in eff.items()),  # type: ignore[attr-defined]
         "confirmed": sum(e.source in ("human", "adjudicated", "majority")  # type: ignore[attr-defined]
                          and e.label == judge[i]  # type: ignore[attr-defined]
                          for i, e in eff.items()),
         "conflicted": sum(e.source == "conflicted" for e in vals),  # type: ignore[attr-defined]
         "adjudicated": sum(e.source == "adjudicated" for e in vals)}  # type: ignore[attr-defined]
    return _with_rows(db, run_id, c)


def _with_rows(db: Database, run_id: int, c: dict) -> dict:
    n_rows, = db.execute("SELECT COUNT(*) FROM reviews WHERE run_id = ?", [run_id]).fetchone()
    reviewers = [x[0] for x in db.execute("SELECT DISTINCT reviewer FROM reviews WHERE run_id = ? ORDER BY reviewer",
                                          [run_id])]
    return c | {"reviews": n_rows, "reviewers": reviewers}
