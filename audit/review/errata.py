"""Gold errata: reviewers flag a gold item that is wrong or missing, with a note and a proposed correction.

Errata are stored like reviews: append-only rows with reviewer and time (table `errata`, migration m006). A new
flag by the same reviewer on the same document and gold item supersedes their older one; withdrawing appends a
row marked `withdrawn`. Errata never change a score: they are listed on their own page and exported (JSON, CSV;
`audit.outputs.errata_export`) for the benchmark's maintainers, naming the benchmark, the gold file, the document,
the gold item and the
proposed correction.
"""

from __future__ import annotations

import uuid

from sqlite_utils import Database

from audit.errors import AuditError
from audit.review.reviews import MAX_NAME_CHARS, MAX_NOTE_CHARS, check_client_id
from audit.store.database import now, transaction
from audit.views import RunRef, as_view

PROBLEMS = {
    "wrong item": "the gold item is not what the text says (e.g. a wrong span)",
    "missing item": "the text has an item the gold lacks",
    "wrong type": "right item, wrong type or role",
    "wrong value": "a gold value (number, measurement) is wrong",
    "wrong unit": "a gold unit is wrong",
    "should not be there": "the gold item should be removed",
    "other": "anything else (say what in the note)",
}
MAX_ITEM_CHARS = 2_000
_COLS = ("id", "uid", "doc_id", "decision_id", "item", "problem", "correction", "note", "reviewer", "created",
         "withdrawn")


def flagged_item(listed: str | None, typed: str | None) -> str:
    """The gold item a flag names: the one picked from the document's list, else (`listed` None: the item is not
    in the list, or missing from the gold) the one typed (the review cards' errata forms)."""
    return (listed if listed is not None else typed or "").strip()


def add_erratum(db: Database, run: RunRef, doc_id: str, item: str, problem: str, reviewer: str, *,
                correction: str | None = None, note: str | None = None, decision_id: int | None = None,
                withdrawn: bool = False, auth_subject: str | None = None, auth_email: str | None = None,
                client_id: str | None = None) -> dict:
    """Append one erratum row (or, with `withdrawn=True`, the withdrawal of the reviewer's flag on that item).

    `item` is the gold item as shown (a span, a measurement); for a missing item it may be empty and the
    `correction` says what is missing.

    `client_id`: the sender's own id of this flag (the browser review card), stored as the row's uid: a flag
    whose client id is stored already (a re-send after a reconnect or a reload) is not written again; the stored
    row is returned, marked `duplicate`.

    Raises:
        UnknownRun; AuditError: unknown document or decision, unknown problem, empty or too long fields, a client
        id another run's or reviewer's flag holds.
    """
    view = as_view(db, run)
    db, row = view.db, view.row
    check_client_id(client_id)
    with transaction(db):  # the client-id look-up and the write are one: a concurrent re-send waits
        if client_id is not None:
            found = db.execute(f"SELECT {', '.join(_COLS)}, run_id FROM errata WHERE uid = ?", [client_id]).fetchone()
            if found is not None:
                stored = dict(zip((*_COLS, "run_id"), found, strict=True))
                if stored["run_id"] != row["id"] or stored["reviewer"] != (reviewer or "").strip():
                    raise AuditError("this flag's client id belongs to another run's or reviewer's flag")
                return stored | {"duplicate": True}
        if problem not in PROBLEMS:
            raise AuditError(f"problem {problem!r} is not one of {', '.join(PROBLEMS)}")
        if db.execute("SELECT 1 FROM documents WHERE run_id = ? AND doc_id = ?",
                      [row["id"], doc_id]).fetchone() is None:
            raise AuditError(f"document {doc_id!r} is not in run {view.name!r}")
        if decision_id is not None and db.execute("SELECT 1 FROM decisions WHERE id = ? AND run_id = ? AND doc_id = ?",
                                                  [decision_id, row["id"], doc_id]).fetchone() is None:
            raise AuditError(f"decision {decision_id} is not a decision of {doc_id!r} in run {view.name!r}")
        reviewer = (reviewer or "").strip()
        if not reviewer:
            raise AuditError("an erratum needs a reviewer name")
        if len(reviewer) > MAX_NAME_CHARS:
            raise AuditError(f"reviewer name is longer than {MAX_NAME_CHARS} characters")
        item = (item or "").strip()
        correction = (correction or "").strip() or None
        note = (note or "").strip() or None
        if not item and not correction:
            raise AuditError("say which gold item is wrong, or (for a missing item) what is missing in the correction")
        if len(item) > MAX_ITEM_CHARS or len(correction or "") > MAX_ITEM_CHARS:
            raise AuditError(f"gold item and correction are limited to {MAX_ITEM_CHARS} characters")
        if note is not None and len(note) > MAX_NOTE_CHARS:
            raise AuditError(f"note is longer than {MAX_NOTE_CHARS} characters")
        new = {"uid": client_id or uuid.uuid4().hex, "run_id": row["id"], "doc_id": doc_id, "decision_id": decision_id,
               "item": item, "problem": problem, "correction": correction, "note": note, "reviewer": reviewer,
               "created": now(), "withdrawn": int(withdrawn), "auth_subject": auth_subject, "auth_email": auth_email,
               "auth_mode": "oidc" if auth_subject else "local"}
        cur = db.conn.execute(
            "INSERT INTO errata (uid, run_id, doc_id, decision_id, item, problem, correction, note, reviewer, created, "
            "withdrawn, auth_subject, auth_email, auth_mode) VALUES (:uid, :run_id, :doc_id, :decision_id, :item, "
            ":problem, :correction, :note, :reviewer, :created, :withdrawn, :auth_subject, :auth_email, :auth_mode)",
            new)
        return new | {"id": cur.lastrowid}


def withdraw_erratum(db: Database, run: RunRef, erratum_id: int, reviewer: str, *, auth_subject: str | None = None,
                     auth_email: str | None = None) -> dict:
    """Withdraw a current erratum (appends a `withdrawn` row for the same document and item).

    Raises:
        AuditError: no such erratum in the run, or it is another reviewer's.
    """
    view = as_view(db, run)
    found = view.db.execute("SELECT doc_id, item, problem, reviewer FROM errata WHERE id = ? AND run_id = ?",
                       [erratum_id, view.id]).fetchone()
    if found is None:
        raise AuditError(f"erratum {erratum_id} is not in run {view.name!r}")
    if found[3] != (reviewer or "").strip():
        raise AuditError(f"erratum {erratum_id} was flagged by {found[3]}; only they can withdraw it")
    return add_erratum(view.db, view, found[0], found[1], found[2], reviewer, withdrawn=True,
                       correction=None if found[1] else "(withdrawn)", auth_subject=auth_subject,
                       auth_email=auth_email)


def history(db: Database, run: RunRef) -> list[dict]:
    """Every erratum row of the run, oldest first (the append-only log)."""
    view = as_view(db, run)
    return [dict(zip(_COLS, r, strict=True)) for r in view.db.execute(
        f"SELECT {', '.join(_COLS)} FROM errata WHERE run_id = ? ORDER BY created, id", [view.id])]


def current_errata(db: Database, run: RunRef, doc_id: str | None = None) -> list[dict]:
    """The standing errata: per reviewer, document and gold item the latest row, unless it is a withdrawal."""
    latest: dict[tuple, dict] = {}
    for r in history(db, run):
        latest[(r["reviewer"], r["doc_id"], r["item"])] = r
    out = [r for r in latest.values() if not r["withdrawn"] and (doc_id is None or r["doc_id"] == doc_id)]
    return sorted(out, key=lambda r: r["id"])
