"""Moving reviews between databases: export as JSON lines, import with merge (no duplicates, nothing lost)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from sqlite_utils import Database

if TYPE_CHECKING:
    from audit.review.sampling import DrawRule

from audit.errors import AuditError
from audit.rescoring import apply_reviews_everywhere
from audit.review.reviews import ROLES, allowed_labels, check_note, check_reviewer
from audit.store.database import run_row, transaction
from audit.store.shared_reviews import SAME_QUESTION
from audit.views import as_view
from scoring.errors import InputError, quoted, text_problem
from scoring.families import get_task
from scoring.families.base import TaskFamily
from scoring.jsonl import read_records

MAX_IMPORT_BYTES = 512 * 2**20
MAX_UID_CHARS = 100
MAX_IDENTITY_CHARS = 320  # the longest e-mail address RFC 3696 allows (a subject is shorter)
MAX_CLOCK_SKEW = timedelta(minutes=10)
"""How far ahead of this computer's clock an imported review's time may be (clocks of reviewers' machines differ)."""
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
FIELDS = ("uid", "doc", "kind", "type", "left", "right", "reviewer", "label", "role", "note", "blind", "created")
IDENTITY = ("auth_subject", "auth_email", "auth_mode")
OPTIONAL = ("sampled", *IDENTITY)
"""Fields a line may leave out (files exported before they existed): `sampled` (false), whether the review was a
draw of the run's sampling plan, without which a merged sample has no estimate; the identity (`IDENTITY`) of who
wrote it: the sign-in provider's subject and e-mail, and `auth_mode` 'oidc' (signed in) or 'local' (an unverified
name; the default), so that a merge keeps who reviewed."""
AUTH_MODES = ("local", "oidc")


def export_reviews(db: Database, run: str) -> str:
    """Every review row of the run, keyed by the decision's natural key so another database can match it."""
    row = run_row(db, run)
    out = []
    for r in db.query("SELECT r.uid, d.doc_id AS doc, d.kind, d.type, d.left, d.right, r.reviewer, r.label, r.role, "
                      "r.note, r.blind, r.created, r.sampled, r.auth_subject, r.auth_email, r.auth_mode FROM reviews r "
                      "JOIN decisions d ON d.id = r.decision_id WHERE r.run_id = ? ORDER BY r.created, r.id",
                      [row["id"]]):
        out.append(json.dumps({k: r[k] for k in FIELDS + IDENTITY} | {"blind": bool(r["blind"]),
                                                                       "sampled": bool(r["sampled"])},
                              ensure_ascii=False))
    return "".join(line + "\n" for line in out)


def import_reviews(db: Database, run: str, path: str | Path, *, now: datetime | None = None) -> dict:
    """Merge review rows from a JSON-lines export into `run`: rows already present (same uid, same content) are
    skipped.

    Everything is checked before anything is written (field types, reviewer names, labels, timestamps, that
    the decision exists and the uid is not another run's, unless it is the same review of a question this run asks
    too: it settles it here already, and is skipped); one transaction writes all new rows. A uid already
    stored (or repeated in the file) with other content is refused: uids name one review, so the file was changed.
    A `created` time later than `now` (default: the clock) plus `MAX_CLOCK_SKEW` is refused: the newest review
    of a reviewer is their label, and a date in 2999 would outrank every later one. A review of a symmetric kind
    written with left and right the other way round than the stored decision is re-oriented (its label read
    through the scheme's `swapped`: ideation `a` <-> `b`) and counted in `reoriented`.

    An import cannot verify who wrote a line: a line claiming a signed-in identity (`auth_mode` 'oidc') is stored
    as a local name (counted in `stored_as_local`), and `sampled` only where the run's sample queue would serve the
    document, taken in the file's order (`audit.review.sampling.DrawRule`: served already, or the next draw of its
    stratum; else counted in `not_sample_draws`): a file cannot make an unverified name pass for a signed-in
    reviewer, nor hand-picked labels pass for sample draws (issue 34).

    Raises:
        InputError: a malformed line, a decision the run does not have, a tampered uid, a future time (file and
            line named).
    """
    row = run_row(db, run)
    task = get_task(row["task"])
    p = Path(path)
    latest = (now or datetime.now(UTC)) + MAX_CLOCK_SKEW
    ids = {(d["doc_id"], d["kind"], d["type"], d["left"], d["right"]): d["id"] for d in
           db.query("SELECT id, doc_id, kind, type, left, right FROM decisions WHERE run_id = ?", [row["id"]])}
    from audit.review.sampling import DrawRule  # numpy and SciPy: not for export-reviews, which imports this module

    draw_rule = DrawRule(as_view(db, run))
    claims: dict[str, tuple] = {}
    """uid -> the identity a line of this file claimed, where it was stored as a local name instead."""
    counts = {"imported": 0, "skipped_duplicates": 0, "reoriented": 0, "stored_as_local": 0, "not_sample_draws": 0}
    decided: set[int] = set()
    # one transaction for the whole file, written a batch of lines at a time (a million lines held 1.8 GB when
    # kept until the end, #38): a bad line anywhere rolls every batch back, so nothing is stored
    with transaction(db):
        for batch in _batches(read_records(p, limit=MAX_IMPORT_BYTES, objects=False), IMPORT_BATCH):
            new = _check_batch(db, batch, task, row, ids, draw_rule, claims, latest, counts, str(p))
            db.conn.executemany("INSERT INTO reviews (uid, run_id, decision_id, reviewer, label, role, note, "
                                "blind, created, sampled, auth_subject, auth_email, auth_mode) VALUES (?, ?, ?, ?, ?, "
                                "?, ?, ?, ?, ?, ?, ?, ?)", new)
            decided.update(r[2] for r in new)
            counts["imported"] += len(new)
        if not counts["imported"] and not counts["skipped_duplicates"]:
            raise AuditError(f"{p}: no reviews in the file")
        apply_reviews_everywhere(db, row["id"], sorted(decided))
    return counts


IMPORT_BATCH = 5_000
"""Lines of a review file checked and written together."""


def _batches(records: Iterator[tuple[int, object]], size: int) -> Iterator[list[tuple[int, object]]]:
    batch: list[tuple[int, object]] = []
    for rec in records:
        batch.append(rec)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _stored(db: Database, batch: list[tuple[int, object]]) -> dict[str, dict]:
    """uid -> the stored review row (any run's) of every uid the batch's lines name."""
    uids = sorted({v["uid"] for _, v in batch if isinstance(v, dict) and isinstance(v.get("uid"), str)})
    out: dict[str, dict] = {}
    for i in range(0, len(uids), 900):
        chunk = uids[i:i + 900]
        marks = ",".join("?" * len(chunk))
        for r in db.query("SELECT uid, run_id, decision_id, reviewer, label, role, note, blind, created, "
                          f"auth_subject, auth_email, auth_mode FROM reviews WHERE uid IN ({marks})", chunk):
            out[r["uid"]] = r
    return out


def _check_batch(db: Database, batch: list[tuple[int, object]], task: TaskFamily, row: Mapping,
                 ids: Mapping[tuple, int], draw_rule: DrawRule, claims: dict[str, tuple], latest: datetime,
                 counts: dict[str, int], p: str) -> list[tuple]:
    """The rows to insert for a batch of lines, in order, each line checked as `import_reviews` says (against the
    reviews stored, those written by earlier batches of the file among them, and the earlier lines of the batch);
    `claims` and `counts` are updated."""
    stored = _stored(db, batch)
    have: dict[str, tuple] = {}
    who: dict[str, tuple] = {}
    for uid, r in stored.items():
        if r["run_id"] == row["id"]:
            have[uid], who[uid] = _content(r["decision_id"], r), claims.get(uid) or _identity(r)
    new = []
    for n, value in batch:
        rec = _check_record(value, p, n)
        if datetime.fromisoformat(rec["created"]) > latest:
            raise InputError(p, n, f"field 'created' {rec['created'][:32]} is in the future (more than "
                                   f"{MAX_CLOCK_SKEW.seconds // 60} minutes ahead of this computer's clock); "
                                   "a review's time orders a reviewer's labels, so nothing was imported")
        key = (rec["doc"], rec["kind"], rec["type"], rec["left"], rec["right"])
        scheme = task.label_schemes.get(rec["kind"])
        if key not in ids and scheme is not None and scheme.symmetric:
            key = (rec["doc"], rec["kind"], rec["type"], rec["right"], rec["left"])  # the stored orientation
            if key in ids:
                counts["reoriented"] += 1
                if rec["label"] is not None:
                    rec["label"] = scheme.swapped(rec["label"])
        if key not in ids:
            kinds = sorted(task.label_schemes)
            if rec["kind"] not in kinds:  # the likeliest slip: say it, not that the decision is missing
                raise InputError(p, n, f"field 'kind' {str(rec['kind'])[:40]!r} is not a decision kind of "
                                       f"{task.title}; use one of {', '.join(kinds)}")
            raise InputError(p, n, f"no such decision in run {row['name']!r}: doc {quoted(rec['doc'])}, "
                                   f"{rec['type']} {quoted(rec['left'])} / {quoted(rec['right'])}")
        allowed = allowed_labels(task.name, rec["kind"])
        if rec["label"] is not None and rec["label"] not in allowed:
            raise InputError(p, n, f"label {rec['label']!r} is not allowed; use one of {', '.join(allowed)}")
        content = _content(ids[key], rec)
        if rec["uid"] in have:
            if have[rec["uid"]] != content:
                raise InputError(p, n, f"review uid {rec['uid']!r} is already stored (or earlier in the file) "
                                       f"with other content ({_difference(have[rec['uid']], content)}): a uid "
                                       "names one review, so the file was changed after its export; nothing "
                                       "was imported")
            # a file cannot carry a verified identity, so its local copy of a stored signed-in review is the same
            # review (what another database's export of an import says); any other difference is a changed file
            claimed = _identity(rec)
            if any(k in value for k in IDENTITY) and who[rec["uid"]] != claimed and claimed[2] != "local":
                raise InputError(p, n, f"review uid {rec['uid']!r} is already stored (or earlier in the file) "
                                       f"by another identity ({_identity_text(who[rec['uid']])} stored, "
                                       f"{_identity_text(_identity(rec))} in the file): a uid names one "
                                       "review, so the file was changed after its export; nothing was imported")
            counts["skipped_duplicates"] += 1
            continue
        if rec["uid"] in stored:
            if _settles_here(db, stored[rec["uid"]], ids[key], content):
                # the same review, moved to a run asking the same question (delete-run): it settles it here already
                counts["skipped_duplicates"] += 1
                continue
            other = db.execute("SELECT name FROM runs WHERE id = ?", [stored[rec["uid"]]["run_id"]]).fetchone()
            raise InputError(p, n, f"review uid {rec['uid']!r} is already stored for run {other[0]!r}: "
                                   "reviews exported from one run cannot be imported into another run of "
                                   "the same database (unless that run asks the same question: then it counts there "
                                   "already)")
        have[rec["uid"]], who[rec["uid"]] = content, _identity(rec)
        identity = _identity(rec)
        if identity[2] != "local":  # a claim this database cannot verify: stored as what it is, a local name
            claims[rec["uid"]] = identity
            identity = (None, None, "local")
            counts["stored_as_local"] += 1
        sampled = bool(rec.get("sampled", False))
        if sampled and not draw_rule.allows(ids[key]):  # a draw only where the run's sample queue would serve it
            sampled = False
            counts["not_sample_draws"] += 1
        new.append((rec["uid"], row["id"], ids[key], rec["reviewer"], rec["label"], rec["role"], rec["note"],
                    int(rec["blind"]), rec["created"], int(sampled), *identity))
    return new


CONTENT = ("decision", "reviewer", "label", "role", "note", "blind", "created")


def _settles_here(db: Database, stored: Mapping, decision_id: int, content: tuple) -> bool:
    """Whether a review stored under another run is this line's review of this decision's question: its decision
    asks this decision's question (`shared_reviews.SAME_QUESTION`) and the content is the same but the decision (what
    `delete-run` leaves when it moves a review to a run that asks it)."""
    asks_it = db.execute(f"SELECT 1 FROM decisions d1 CROSS JOIN decisions d2 WHERE d1.id = ? AND d2.id = ? "
                         f"AND {SAME_QUESTION}", [stored["decision_id"], decision_id]).fetchone()
    return asks_it is not None and _content(stored["decision_id"], stored)[1:] == content[1:]


def _content(decision_id: int, rec: Mapping) -> tuple:
    """What a review uid stands for, comparable between a stored row and an imported line."""
    try:
        created = datetime.fromisoformat(rec["created"]).astimezone(UTC).isoformat(timespec="microseconds")
    except (TypeError, ValueError):  # a stored time of another format: compared as written
        created = str(rec["created"])
    return (decision_id, rec["reviewer"], rec["label"], rec["role"], rec["note"] or None, bool(rec["blind"]), created)


def _identity(rec: Mapping) -> tuple[str | None, str | None, str]:
    """(subject, e-mail, mode) of a review: a line without them is from local mode, as m010 marked old rows."""
    return rec.get("auth_subject"), rec.get("auth_email"), rec.get("auth_mode") or "local"


def _identity_text(identity: tuple) -> str:
    subject, email, mode = identity
    return f"{email or subject}, signed in" if mode == "oidc" else "an unverified local name"


def _difference(stored: tuple, line: tuple) -> str:
    """'label: no-match stored, match in the file' for the first field that differs."""
    field, was, now_ = next((f, a, b) for f, a, b in zip(CONTENT, stored, line, strict=True) if a != b)
    return f"{field}: {str(was)[:40]!r} stored, {str(now_)[:40]!r} in the file"


def _check_record(rec: object, path: str, line: int) -> dict:
    """One review line's fields, type-checked and normalised (`created` to UTC), or InputError at path:line."""
    if not isinstance(rec, dict) or any(k not in rec for k in FIELDS):
        raise InputError(path, line, f"a review line needs the fields {', '.join(FIELDS)}")
    for k in FIELDS + tuple(k for k in OPTIONAL if k in rec):
        v = rec[k]
        if k in ("blind", "sampled"):
            if type(v) is not bool and not (type(v) is int and v in (0, 1)):
                raise InputError(path, line, f"field {k!r} must be true or false, got {_json_type(v)}"
                                             + (f" {v!r}" if v is not None else ""))
        elif not isinstance(v, str) and not (v is None and k in ("label", "note", *IDENTITY)):
            nullable = k in ("label", "note", *IDENTITY)
            raise InputError(path, line, f"field {k!r} must be a string{' or null' if nullable else ''}"
                                         f", got {_json_type(v)}")
        elif isinstance(v, str) and (problem := text_problem(v)):
            raise InputError(path, line, f"field {k!r} {problem}")
    uid = rec["uid"]
    if not uid.strip() or len(uid) > MAX_UID_CHARS or any(unicodedata.category(c)[0] == "C" for c in uid):
        raise InputError(path, line, f"field 'uid' must be 1..{MAX_UID_CHARS} printable characters")
    try:
        reviewer, note = check_reviewer(rec["reviewer"]), check_note(rec["note"])
    except AuditError as e:
        raise InputError(path, line, str(e)) from None
    if rec["role"] not in ROLES:
        raise InputError(path, line, f"role must be one of {', '.join(ROLES)}, got {rec['role']!r}")
    subject, email, mode = _identity(rec)
    if mode not in AUTH_MODES:
        raise InputError(path, line, f"field 'auth_mode' must be one of {', '.join(AUTH_MODES)}, got {mode!r}")
    if mode == "oidc" and not (subject or "").strip():
        raise InputError(path, line, "a signed-in review (auth_mode 'oidc') needs the provider's auth_subject")
    for k, v in (("auth_subject", subject), ("auth_email", email)):
        if v is not None and len(v) > MAX_IDENTITY_CHARS:
            raise InputError(path, line, f"field {k!r} is longer than {MAX_IDENTITY_CHARS} characters")
    return {**rec, "reviewer": reviewer, "note": note, "created": _timestamp(rec["created"], path, line)}


def _timestamp(value: str, path: str, line: int) -> str:
    """An ISO-8601 date and time with a UTC offset, as the store writes them (`audit.store.database.now`)."""
    try:
        t = datetime.fromisoformat(value) if TIMESTAMP.match(value) else None
    except ValueError:
        t = None
    if t is None or t.tzinfo is None:
        raise InputError(path, line, f"field 'created' must be an ISO-8601 date and time with a UTC offset, "
                                     f"like 2026-01-31T09:30:00+00:00; got {value[:40]!r}")
    try:
        return t.astimezone(UTC).isoformat(timespec="microseconds")
    except OverflowError:  # year 1 west of UTC, or 9999 east of it: no such time in UTC
        raise InputError(path, line, f"field 'created' {value[:40]!r} is out of range (in UTC it falls before "
                                     "year 1 or after 9999)") from None


def _json_type(v: object) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list",
            dict: "an object", type(None): "null"}.get(type(v), type(v).__name__)
