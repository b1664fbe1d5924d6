"""Reviews: append-only human labels on decisions (the effective-label rule is `audit.effective`)."""

from __future__ import annotations

import unicodedata
import uuid
from collections.abc import Iterable, Mapping

from sqlite_utils import Database

from audit.effective import POLICIES, Effective, current_labels, effective_label  # noqa: F401 - the rule's home
from audit.errors import AuditError, BadLabel, StaleReview, UnknownDecision
from audit.rescoring import apply_reviews_everywhere, reviews_by_decision
from audit.review.blind_assignments import blind_assigned
from audit.review.identity import reviewer_key
from audit.store.database import now, run_row
from audit.store.limits import MAX_DECISION_ID  # noqa: F401 (re-exported)
from audit.views import RunRef, as_view
from scoring.errors import text_problem
from scoring.families import get_task

ROLES = ("reviewer", "adjudicator")
MAX_NOTE_CHARS = 5_000
MAX_NAME_CHARS = 100


MAX_CLIENT_ID_CHARS = 100


def check_reviewer(name: object) -> str:
    """A reviewer name, stripped: 1..MAX_NAME_CHARS characters of text, no control or invisible characters.

    Raises:
        AuditError: saying what is wrong.
    """
    if not isinstance(name, str) or not name.strip():
        raise AuditError("a review needs a reviewer name")
    name = name.strip()
    if len(name) > MAX_NAME_CHARS:
        raise AuditError(f"reviewer name is {len(name)} characters long; the limit is {MAX_NAME_CHARS}")
    problem = text_problem(name)
    if problem:
        raise AuditError(f"reviewer name {problem}")
    bad = [c for c in name if unicodedata.category(c)[0] == "C"]
    if bad:
        what = "a control or invisible character" if len(bad) == 1 else "control or invisible characters"
        raise AuditError(f"reviewer name contains {what} "
                         f"{', '.join(repr(c) for c in bad[:3])}")
    reviewer_key(name)  # refuses a look-alike of another name (audit.review.identity: the one identity rule)
    return unicodedata.normalize("NFC", name)


def check_note(note: object) -> str | None:
    """A review note: None, or text of at most MAX_NOTE_CHARS characters (line breaks allowed).

    Raises:
        AuditError: saying what is wrong.
    """
    if note is None:
        return None
    if not isinstance(note, str):
        raise AuditError(f"a note must be text, got {type(note).__name__}")
    if len(note) > MAX_NOTE_CHARS:
        raise AuditError(f"note is {len(note)} characters long; the limit is {MAX_NOTE_CHARS}")
    problem = text_problem(note)
    if problem:
        raise AuditError(f"note {problem}")
    return note


def review_note(text: object) -> str | None:
    """The note a review card stores with its label (the classic card's note box and the browser card's): the
    typed text stripped, None when nothing is left; checked by `check_note`.

    Raises:
        AuditError: saying what is wrong.
    """
    return check_note(text.strip() or None if isinstance(text, str) else text)


def check_client_id(client_id: object) -> None:
    """A sender's own id of a write (the browser review card's key press or flag): None, or 1..MAX_CLIENT_ID_CHARS
    printable ASCII characters.

    Raises:
        AuditError: saying what is wrong.
    """
    if client_id is not None and (not isinstance(client_id, str) or not 0 < len(client_id) <= MAX_CLIENT_ID_CHARS
                                  or not client_id.isascii() or not client_id.isprintable()):
        raise AuditError(f"a client id is 1..{MAX_CLIENT_ID_CHARS} printable ASCII characters")


def allowed_labels(task_name: str, kind: str) -> tuple[str, ...]:
    """Labels a reviewer may give a decision of this kind (the family's label scheme)."""
    scheme = get_task(task_name).label_schemes.get(kind)
    return scheme.labels if scheme is not None else ()


def decision(db: Database, run: str, decision_id: int) -> dict:
    """The decision's row (raises UnknownDecision when it is not in the run)."""
    r = run_row(db, run)
    rows = list(db.query("SELECT * FROM decisions WHERE id = ? AND run_id = ?", [decision_id, r["id"]]))
    if not rows:
        number = (f" (a bare number is a decision's id, which counts across runs; #{decision_id} is the run's "
                  f"decision number {decision_id}, as the pages show it)"
                  if isinstance(decision_id, int) and 0 < decision_id <= r["n_decisions"] else "")
        raise UnknownDecision(f"decision {decision_id} is not in run {run!r}{number}; list them with "
                              f"`python -m audit decisions --run {run}`")
    return rows[0]


UNDO_NOTE = "undo of the previous review"
"""The note every card stores with an undo."""


def undo_label(reviews: Iterable[Mapping], review_id: int, *, who: str, role: str) -> str | None:
    """The undo rule of both cards: undoing review `review_id` stores (as a new row) the label held just before it
    (a reviewer's: their own; an adjudicator's: the adjudication), None when there was none.

    Raises:
        AuditError: an adjudication someone else made after `review_id` holds now; undoing would overwrite theirs
            (the newest adjudication is the one that counts), so nothing is undone.
    """
    rows = list(reviews)
    at = next((i for i, r in enumerate(rows) if r["id"] == review_id), len(rows))
    if role == "adjudicator":
        later = [r for r in rows[at + 1:] if r["role"] == "adjudicator" and r["reviewer"] != who]
        if later:
            raise AuditError(f"nothing was undone: {later[-1]['reviewer']!r} adjudicated this decision after you, "
                             "and theirs is the adjudication that holds; give your label again to change it")
    humans, adjudicated = current_labels(rows[:at])
    return adjudicated if role == "adjudicator" else humans.get(who)


def newest_seen(reviews: Iterable[Mapping]) -> int:
    """The id of the newest review row read (0 for none). An undo passes it as `add_review(expect_last_review=)`:
    a review stored between the read `undo_label` decided on and the write refuses the undo (StaleReview) instead of
    being overwritten unsaid (another adjudicator's, in the moment between)."""
    return max((int(r["id"]) for r in reviews), default=0)


def last_review_by(reviews: Iterable[Mapping], who: str, role: str) -> Mapping | None:
    """`who`'s newest review row of a decision in `role` (what an undo on the classic card undoes)."""
    return next((r for r in reversed(list(reviews)) if r["reviewer"] == who and r["role"] == role), None)


def reviewer_labels(db: Database, run: RunRef, reviewer: str) -> dict[int, str]:
    """The one reader of a reviewer's current labels in a run: decision id -> the label `reviewer` holds now, their
    adjudications included (`Effective.labels_by`: what the queues and the card's progress call "labelled by you"),
    over the reviews the run sees (shared by question key)."""
    return {i: lab for i, e in as_view(db, run).effective.items() if (lab := e.labels_by().get(reviewer)) is not None}


def add_review(db: Database, run: str, decision_id: int, label: str | None, reviewer: str, *, note: str | None = None,
               blind: bool = False, role: str = "reviewer", expect_last_review: int | None = None,
               sampled: bool = False, auth_subject: str | None = None, auth_email: str | None = None,
               client_id: str | None = None) -> dict:
    """Append one review row; `label=None` undoes the reviewer's current label (also a new row).

    `auth_subject` / `auth_email`: the signed-in identity (team mode); without them the row is marked
    `auth_mode` 'local' (the reviewer name is an unverified label).

    `sampled`: the decision was served by the run's sampling plan (the "sample" queue), so its document may
    enter the partial-audit estimator as a sample draw (`audit/review/sampling.py`); hand-picked reviews never do.

    `client_id`: the sender's own id of this label (the browser review card, `ui/review_card`); a review whose
    client id is already stored is not written again: the stored row is returned, marked `duplicate`.

    Args:
        expect_last_review: the id of the newest review the caller saw on this decision (0 for none); when
            given and the decision has been reviewed since, raise StaleReview instead of writing.
    Returns:
        The stored review row.
    Raises:
        UnknownRun, UnknownDecision, BadLabel, StaleReview, AuditError (empty reviewer name, bad role).
    """
    if isinstance(decision_id, bool) or not isinstance(decision_id, int) or not 0 < decision_id <= MAX_DECISION_ID:
        raise UnknownDecision(f"decision {decision_id!r} is not a decision id (a positive whole number); list them "
                              f"with `python -m audit decisions --run {run}`")
    found = db.execute("SELECT d.run_id, d.kind, r.task FROM decisions d JOIN runs r ON r.id = d.run_id "
                       "WHERE d.id = ? AND r.name = ?", [decision_id, run]).fetchone()
    if found is None:
        decision(db, run, decision_id)  # raises UnknownRun or UnknownDecision with the helpful message
    run_id, kind, task_name = found
    allowed = allowed_labels(task_name, kind)
    if label is not None and label not in allowed:
        raise BadLabel(f"label {label!r} is not allowed for {kind} decisions; use one of {', '.join(allowed)}")
    reviewer = check_reviewer(reviewer)
    if role not in ROLES:
        raise AuditError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    note = check_note(note)
    check_client_id(client_id)
    if role == "adjudicator" and blind_assigned(db, run, auth_email or reviewer):
        # checked at the write: a card drawn before the owner's assignment kept adjudicating, sighted
        raise AuditError(f"{auth_email or reviewer} is blind on run {run!r} (the owner's assignment, or that of a run "
                         "asking its questions) and cannot adjudicate it: nothing was stored (on a page drawn "
                         "before: reload it)")
    if sampled:
        # imported here, not above: sampling's statistics (SciPy) stay out of commands that only read reviews
        from audit.review.sampling import check_sample_draw

        check_sample_draw(db, run, decision_id)
    row = {"uid": uuid.uuid4().hex, "run_id": run_id, "decision_id": decision_id, "reviewer": reviewer,
           "label": label, "role": role, "note": note or None, "blind": int(blind), "created": now(),
           "sampled": int(bool(sampled)), "auth_subject": auth_subject, "auth_email": auth_email,
           "auth_mode": "oidc" if auth_subject else "local", "client_id": client_id}
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        if client_id is not None:
            stored = review_by_client_id(db, client_id)
            if stored is not None:
                conn.execute("ROLLBACK")
                return stored | {"duplicate": True}
        seen = (reviews_by_decision(db, run_id, [decision_id]).get(decision_id, [])
                if expect_last_review is not None or label is None else [])
        if expect_last_review is not None:
            last = max((r["id"] for r in seen), default=0)
            if last != expect_last_review:
                raise StaleReview(f"decision {decision_id} was reviewed by someone else since you opened it; "
                                  "reload to see the new review")
        if label is None:  # an undo withdraws a label held now; with none, a row would only list a non-reviewer
            humans, adjudicated = current_labels(seen)
            what = "adjudication" if role == "adjudicator" else "label"
            if (adjudicated is None) if role == "adjudicator" else (reviewer not in humans):
                theirs = role != "adjudicator" and adjudicated is not None and any(
                    r["reviewer"] == reviewer and r["role"] == "adjudicator" for r in seen)
                raise AuditError(f"nothing to undo: {reviewer!r} holds no {what} on decision {decision_id} (nothing "
                                 "was stored)" + ("; they adjudicated it: withdraw an adjudication as the adjudicator "
                                                  "(`--role adjudicator`)" if theirs else ""))
        cur = conn.execute(
            "INSERT INTO reviews (uid, run_id, decision_id, reviewer, label, role, note, blind, created, sampled, "
            "auth_subject, auth_email, auth_mode, client_id) VALUES (:uid, :run_id, :decision_id, :reviewer, :label, "
            ":role, :note, :blind, :created, :sampled, :auth_subject, :auth_email, :auth_mode, :client_id)", row)
        apply_reviews_everywhere(db, run_id, [decision_id])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a full disk rolls back by itself: its error, not ROLLBACK's, must reach the user
            conn.execute("ROLLBACK")
        raise
    return row | {"id": cur.lastrowid}


def review_by_client_id(db: Database, client_id: str) -> dict | None:
    """The stored review sent with this client id, or None."""
    rows = list(db.query("SELECT * FROM reviews WHERE client_id = ?", [client_id]))
    return rows[0] if rows else None


def stored_client_ids(db: Database, client_ids: list[str]) -> dict[str, dict]:
    """The stored reviews among these client ids, by client id (what a reconnecting review card asks)."""
    out: dict[str, dict] = {}
    for i in range(0, len(client_ids), 500):
        chunk = client_ids[i:i + 500]
        for r in db.query(f"SELECT * FROM reviews WHERE client_id IN ({','.join('?' * len(chunk))})", chunk):
            out[r["client_id"]] = r
    return out
