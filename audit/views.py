"""Read models for the pages and the CLI: documents and decisions with their effective labels."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from sqlite_utils import Database

from audit.errors import AuditError
from audit.rescoring import Audit, audit_run, doc_counts_in_order, reviews_by_decision
from audit.reviews import effective_label
from audit.store import run_row
from scoring.families import get_task
from scoring.families.base import TaskFamily


def documents(db: Database, run: str, audit: Audit | None = None) -> list[dict]:
    """One row per document: id, position, original and audited outcome, decision and review counts."""
    row = run_row(db, run)
    audit = audit or audit_run(db, run)
    n_dec: dict[str, int] = {}
    n_rev: dict[str, int] = {}
    for r in db.query("SELECT doc_id, COUNT(*) AS reviewed FROM effective WHERE run_id = ? "
                      "AND (n_humans > 0 OR source = 'adjudicated') GROUP BY doc_id", [row["id"]]):
        n_rev[r["doc_id"]] = r["reviewed"]
    for r in db.query("SELECT doc_id, COUNT(*) AS n FROM decisions WHERE run_id = ? GROUP BY doc_id", [row["id"]]):
        n_dec[r["doc_id"]] = r["n"]
    out = []
    for r in db.query("SELECT doc_id, idx, outcome FROM documents WHERE run_id = ? ORDER BY idx", [row["id"]]):
        out.append({"doc": r["doc_id"], "idx": r["idx"], "outcome": r["outcome"],
                    "audited_outcome": audit.changed_docs.get(r["doc_id"], r["outcome"]),
                    "decisions": n_dec.get(r["doc_id"], 0), "reviewed": n_rev.get(r["doc_id"], 0)})
    return out


def document_ids(db: Database, run: str) -> list[str]:
    """The run's document ids in input order."""
    row = run_row(db, run)
    return [r[0] for r in db.execute("SELECT doc_id FROM documents WHERE run_id = ? ORDER BY idx", [row["id"]])]


def document(db: Database, run: str, doc_id: str) -> dict:
    """A document's stored payload (gold and prediction) and its original counts and outcome."""
    row = run_row(db, run)
    rows = list(db.query("SELECT * FROM documents WHERE run_id = ? AND doc_id = ?", [row["id"], doc_id]))
    if not rows:
        raise AuditError(f"document {doc_id!r} is not in run {run!r}")
    r = rows[0]
    return {"doc": doc_id, "idx": r["idx"], "payload": json.loads(r["payload"]), "counts": json.loads(r["counts"]),
            "outcome": r["outcome"]}


def decisions(db: Database, run: str, doc: str | None = None) -> Iterator[dict]:
    """Decisions in id order, each with its judge label, its reviews and its effective label."""
    row = run_row(db, run)
    revs = reviews_by_decision(db, row["id"])
    q = "SELECT * FROM decisions WHERE run_id = ?"
    args: list = [row["id"]]
    if doc is not None:
        q += " AND doc_id = ?"
        args.append(doc)
    for d in db.query(q + " ORDER BY id", args):
        e = effective_label(d["judge_label"], revs.get(d["id"], []))
        yield {"id": d["id"], "doc": d["doc_id"], "kind": d["kind"], "type": d["type"], "left": d["left"],
               "right": d["right"], "judge": d["judge_label"], "effective": e.label, "source": e.source,
               "human": e.human_labels, "detail": json.loads(d["detail"]), "reviews": revs.get(d["id"], [])}


def review_counts_by_type(db: Database, run: str, audit: Audit | None = None) -> list[dict]:
    """Per decision kind and type: decisions, reviewed, overruled, conflicted, judge-invalid (from the stored
    audited state, brought up to date first)."""
    row = run_row(db, run)
    audit = audit or audit_run(db, run)
    return [dict(r) for r in db.query(
        "SELECT d.kind, d.type, COUNT(*) AS decisions, "
        "COALESCE(SUM(e.n_humans > 0 OR e.source = 'adjudicated'), 0) AS reviewed, "
        "COALESCE(SUM(e.label != e.judge_label), 0) AS overruled, "
        "COALESCE(SUM(e.source = 'conflicted'), 0) AS conflicted, "
        "SUM(d.judge_label = 'invalid') AS \"judge invalid\" "
        "FROM decisions d LEFT JOIN effective e ON e.decision_id = d.id WHERE d.run_id = ? "
        "GROUP BY d.kind, d.type ORDER BY d.kind, d.type", [row["id"]])]


@dataclass
class DocumentReview:
    """What a document review page reads: the run, its family, original and audited metrics, and one document."""

    db: Database
    run: dict
    task: TaskFamily
    audit: Audit

    @property
    def original_metrics(self) -> dict:
        return self.run["original_metrics"]

    def document(self, doc_id: str) -> dict:
        """The document with its decisions (judge, effective, reviews, `moot`), original and audited counts."""
        info = document(self.db, self.run["name"], doc_id)
        decs = list(decisions(self.db, self.run["name"], doc_id))
        labels = {(d["kind"], d["type"], d["left"], d["right"]): d["effective"] for d in decs}
        moot = self.task.moot(info["payload"], labels)
        for d in decs:
            d["moot"] = (d["kind"], d["type"], d["left"], d["right"]) in moot
        changed = (self.audit.doc_counts or {}).get(doc_id)
        return info | {"decisions": decs, "audited_counts": changed or info["counts"],
                       "audited_outcome": self.audit.changed_docs.get(doc_id, info["outcome"])}


def document_review(db: Database, run: str) -> DocumentReview:
    row = run_row(db, run)
    return DocumentReview(db, row, get_task(row["task"]), audit_run(db, run))


def audited_doc_counts(db: Database, run: str) -> list[tuple[str, dict]]:
    """(doc id, counts under the effective labels) of every document, in input order."""
    return doc_counts_in_order(db, run_row(db, run)["id"], audit_run(db, run).doc_counts or {})
