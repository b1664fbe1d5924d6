"""Audited metrics: original per-document counts, corrected only where a review changed a label."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from sqlite_utils import Database

from audit.reviews import Effective, effective_label
from audit.store import run_row
from scoring.tasks import add_nested, get_task


@dataclass
class Audit:
    """A run's audited state."""

    metrics: dict
    counts: dict
    effective: dict[int, Effective]
    """Effective label of every reviewed decision (unreviewed ones keep the judge's label)."""
    changed_docs: dict[str, str]
    """Documents whose outcome was recomputed: doc id -> audited outcome."""
    review_counts: dict


def reviews_by_decision(db: Database, run_id: int) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = defaultdict(list)
    for r in db.query("SELECT id, decision_id, reviewer, label, role, blind, note, created FROM reviews "
                      "WHERE run_id = ? ORDER BY created, id", [run_id]):
        out[r["decision_id"]].append(r)
    return out


def audit_run(db: Database, run: str) -> Audit:
    """Recompute the audited metrics: only documents with an overruled decision are re-counted."""
    row = run_row(db, run)
    task = get_task(row["task"])
    by_dec = reviews_by_decision(db, row["id"])
    judge_of: dict[int, tuple[str, str]] = {}
    ids = list(by_dec)
    for i in range(0, len(ids), 900):
        chunk = ids[i:i + 900]
        for r in db.query(f"SELECT id, doc_id, judge_label FROM decisions WHERE id IN ({','.join('?' * len(chunk))})",
                          chunk):
            judge_of[r["id"]] = (r["doc_id"], r["judge_label"])
    effective = {i: effective_label(judge_of[i][1], revs) for i, revs in by_dec.items() if i in judge_of}
    overruled = {i: e for i, e in effective.items() if e.label != judge_of[i][1]}
    docs = sorted({judge_of[i][0] for i in overruled})
    total = json.loads(json.dumps(row["original_counts"]))
    changed: dict[str, str] = {}
    for doc_id in docs:
        drow = next(iter(db.query("SELECT payload, counts FROM documents WHERE run_id = ? AND doc_id = ?",
                                  [row["id"], doc_id])))
        payload = json.loads(drow["payload"])
        labels = {}
        for d in db.query("SELECT id, kind, type, left, right, judge_label FROM decisions "
                          "WHERE run_id = ? AND doc_id = ?", [row["id"], doc_id]):
            e = overruled.get(d["id"])
            labels[(d["kind"], d["type"], d["left"], d["right"])] = e.label if e else d["judge_label"]
        new = task.counts(payload, labels)
        add_nested(total, json.loads(drow["counts"]), -1)
        add_nested(total, new)
        changed[doc_id] = task.outcome(payload, new)
    review_counts = {
        "reviewed": sum(1 for e in effective.values() if e.human_labels or e.source == "adjudicated"),
        "overruled": len(overruled),
        "confirmed": sum(1 for i, e in effective.items() if e.source in ("human", "adjudicated")
                         and e.label == judge_of[i][1]),
        "conflicted": sum(1 for e in effective.values() if e.source == "conflicted"),
        "adjudicated": sum(1 for e in effective.values() if e.source == "adjudicated"),
        "reviews": sum(len(v) for v in by_dec.values()),
        "reviewers": sorted({r["reviewer"] for v in by_dec.values() for r in v}),
    }
    return Audit(task.metrics(total), total, effective, changed, review_counts)
