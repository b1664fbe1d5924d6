"""Moving reviews between databases: export as JSON lines, import with merge (no duplicates, nothing lost)."""

from __future__ import annotations

import json
from pathlib import Path

from sqlite_utils import Database

from audit.errors import AuditError
from audit.rescoring import apply_reviews
from audit.reviews import ROLES, allowed_labels
from audit.store import run_row, transaction
from scoring.errors import InputError
from scoring.families import get_task

FIELDS = ("uid", "doc", "kind", "type", "left", "right", "reviewer", "label", "role", "note", "blind", "created")


def export_reviews(db: Database, run: str) -> str:
    """Every review row of the run, keyed by the decision's natural key so another database can match it."""
    row = run_row(db, run)
    out = []
    for r in db.query("SELECT r.uid, d.doc_id AS doc, d.kind, d.type, d.left, d.right, r.reviewer, r.label, r.role, "
                      "r.note, r.blind, r.created FROM reviews r JOIN decisions d ON d.id = r.decision_id "
                      "WHERE r.run_id = ? ORDER BY r.created, r.id", [row["id"]]):
        out.append(json.dumps({k: r[k] for k in FIELDS}, ensure_ascii=False))
    return "".join(line + "\n" for line in out)


def import_reviews(db: Database, run: str, path: str | Path) -> dict:
    """Merge review rows from a JSON-lines export into `run`: rows already present (same uid) are skipped.

    Everything is checked before anything is written; one transaction writes all new rows.

    Raises:
        InputError: a malformed line, or a decision the run does not have (file and line named).
    """
    row = run_row(db, run)
    task = get_task(row["task"])
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), None, "file not found")
    ids = {(d["doc_id"], d["kind"], d["type"], d["left"], d["right"]): d["id"] for d in
           db.query("SELECT id, doc_id, kind, type, left, right FROM decisions WHERE run_id = ?", [row["id"]])}
    have = {r["uid"] for r in db.query("SELECT uid FROM reviews WHERE run_id = ?", [row["id"]])}
    new, skipped = [], 0
    for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(str(p), n, f"invalid JSON: {e.msg}") from None
        if not isinstance(rec, dict) or any(k not in rec for k in FIELDS):
            raise InputError(str(p), n, f"a review line needs the fields {', '.join(FIELDS)}")
        key = (rec["doc"], rec["kind"], rec["type"], rec["left"], rec["right"])
        scheme = task.label_schemes.get(rec["kind"])
        if key not in ids and scheme is not None and scheme.symmetric:
            key = (rec["doc"], rec["kind"], rec["type"], rec["right"], rec["left"])  # either orientation
        if key not in ids:
            raise InputError(str(p), n, f"no such decision in run {run!r}: doc {rec['doc']!r}, {rec['type']} "
                                        f"{rec['left']!r} / {rec['right']!r}")
        if rec["role"] not in ROLES or not isinstance(rec["reviewer"], str) or not rec["reviewer"].strip():
            raise InputError(str(p), n, "bad reviewer or role")
        allowed = allowed_labels(task.name, rec["kind"])
        if rec["label"] is not None and rec["label"] not in allowed:
            raise InputError(str(p), n, f"label {rec['label']!r} is not allowed; use one of {', '.join(allowed)}")
        if rec["uid"] in have:
            skipped += 1
            continue
        have.add(rec["uid"])
        new.append((rec["uid"], row["id"], ids[key], rec["reviewer"], rec["label"], rec["role"], rec["note"],
                    int(bool(rec["blind"])), rec["created"]))
    if not new and skipped == 0:
        raise AuditError(f"{p}: no reviews in the file")
    with transaction(db):
        db.conn.executemany("INSERT INTO reviews (uid, run_id, decision_id, reviewer, label, role, note, blind, "
                            "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", new)
        apply_reviews(db, row["id"])
    return {"imported": len(new), "skipped_duplicates": skipped}
