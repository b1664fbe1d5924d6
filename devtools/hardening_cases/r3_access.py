"""Issue 34, round 3, access control: what a CLI or in-process call can express of the team-mode fixes.

- `import-reviews` of a hand-written line claiming a signed-in owner and a sample draw (no plan): stored as a local
  name, not sampled.
- The browser review card's store (`ui.review_card.store.store_events`, its real entry point) given a forged undo
  of another run's review followed by a good label, another reviewer's client id, and a reviewer's undo of an
  adjudication: each bad event refused alone, nothing of another reviewer answered, no adjudicator row written.
- Roles: a Latin-1 byte in the roles file (refused naming the file and line), look-alike addresses (the Kelvin
  sign's `Kim`, `ſtanford.edu`) that must take no role, and `email_verified` values that are not true.
- Reviewer names: `Straße` and `strasse` are two shares; a review by a look-alike name is refused (CLI).

The browser-only cases (four deep links at once on a fresh server, the refusal pages) are tests, not bench cases:
tests/e2e/test_concurrent_first_visits.py, tests/auth/test_fail_closed.py, tests/auth/test_team_mode.py,
tests/app/test_review_card_access.py, tests/auth/test_roles.py, tests/auth/test_identity_io.py.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from devtools.hardening_cases import Case2

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "chimera"
GOLD, PRED = DATA / "eval.csv", DATA / "pred_mixed.jsonl"
RUN = "base"
IMPORT, CARD, ROLES, NAMES = ("access: review import", "access: review card store", "access: roles and sign-in",
                              "access: reviewer names")


def _rows(db: Path, sql: str, args: tuple = ()) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute(sql, args).fetchall()


def _forged_line(work: Path, db: Path) -> Path:
    """One review line of the base run, as a hand-edited file would claim it: the owner, signed in, a draw."""
    decision = _rows(db, "SELECT d.doc_id, d.kind, d.type, d.left, d.right FROM decisions d JOIN runs r ON "
                         "r.id = d.run_id WHERE r.name = ? ORDER BY d.id LIMIT 1", (RUN,))[0]
    doc, kind, typ, left, right = decision
    line = {"uid": "f0rged" * 4, "doc": doc, "kind": kind, "type": typ, "left": left, "right": right,
            "reviewer": "olga@lab.org", "label": "match", "role": "reviewer", "note": None, "blind": False,
            "created": "2026-01-01T00:00:00+00:00", "sampled": True, "auth_mode": "oidc",
            "auth_subject": "sub-olga", "auth_email": "olga@lab.org"}
    path = work / "forged-reviews.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def _import_forged(work: Path, db: Path) -> tuple[int, str]:
    from audit.review.reviews_io import import_reviews
    from audit.store.database import open_db

    conn = open_db(db)
    try:
        if _rows(db, "SELECT COUNT(*) FROM sampling_plans sp JOIN runs r ON r.id = sp.run_id WHERE r.name = ?",
                 (RUN,))[0][0]:
            return 1, "the base run has a sampling plan: the case needs one without"
        import_reviews(conn, RUN, _forged_line(work, db))
    finally:
        conn.conn.close()
    return 0, ""


def _forged_stored_local(work: Path, db: Path, stderr: str) -> str | None:  # noqa: ARG001
    got = _rows(db, "SELECT auth_subject, auth_email, auth_mode, sampled FROM reviews WHERE uid = ?", ("f0rged" * 4,))
    return None if got == [(None, None, "local", 0)] else f"stored as {got}, not as an unsampled local name"


def _card(work: Path, db: Path) -> tuple[int, str]:
    """Three sessions' outboxes through `store_events`; the answers are kept in work/acks.json for the check."""
    from audit.errors import AuditError
    from audit.review.queue import queue_ids
    from audit.review.reviews import add_review
    from audit.runs import score_run
    from audit.store.database import open_db
    from audit.views import as_view
    from ui.review_card.store import Reviewer, store_events

    conn = open_db(db)
    try:
        if "other" not in {r[0] for r in conn.execute("SELECT name FROM runs").fetchall()}:
            score_run(conn, "chimera", {"gold": str(GOLD), "pred": str(PRED)}, "exact", run="other")
        base, other = as_view(conn, RUN), as_view(conn, "other")
        first, second = queue_ids(conn, base, "ana", "all")[:2]
        add_review(conn, "other", queue_ids(conn, other, "ana", "all")[0], "match", "ana", client_id="in-other")
        add_review(conn, RUN, first, "match", "bo", note="bo's note", client_id="bo-1")
        add_review(conn, RUN, first, "no-match", "adam", role="adjudicator", client_id="adam-adj")

        def reviewer(name: str) -> Reviewer:
            def authorize(role: str) -> None:
                if role == "adjudicator":
                    raise AuditError(f"Only an adjudicator may settle conflicts; {name} is a reviewer.")
            return Reviewer(name=name, role="reviewer", blind=False, authorize=authorize)

        ev = {"run": RUN, "who": "ana"}
        acks: dict = {}
        store_events(conn, base, [ev | {"cid": "undo-other-run", "type": "undo", "undo_of": "in-other"},
                                  ev | {"cid": "after", "type": "label", "decision": second, "label": "match"},
                                  ev | {"cid": "bo-1", "type": "label", "decision": first, "label": "match"},
                                  ev | {"cid": "undo-adj", "type": "undo", "undo_of": "adam-adj"}],
                     reviewer("ana"), acks)
    finally:
        conn.conn.close()
    (work / "acks.json").write_text(json.dumps(acks), encoding="utf-8")
    return 0, ""


def _card_check(work: Path, db: Path, stderr: str) -> str | None:  # noqa: ARG001
    acks = json.loads((work / "acks.json").read_text(encoding="utf-8"))
    problems = [f"{cid} was accepted" for cid in ("undo-other-run", "bo-1", "undo-adj") if acks[cid].get("ok")]
    if "label" in acks["bo-1"] or "decision" in acks["bo-1"]:
        problems.append("bo's client id was answered with bo's decision or label")
    if not acks["after"].get("ok"):
        problems.append("the label behind the forged undo was not stored")
    if _rows(db, "SELECT COUNT(*) FROM reviews WHERE reviewer = 'ana' AND role = 'adjudicator'")[0][0]:
        problems.append("a reviewer's undo stored an adjudicator row")
    return "; ".join(problems) or None


def _latin1_roles(work: Path, db: Path) -> tuple[int, str]:  # noqa: ARG001
    from audit.review.roles import RolesFileError, load_roles

    path = work / "rejudge.toml"
    path.write_bytes(b'[roles]\nowners = ["olga@lab.org"]\n# Ren\xe9\n')
    try:
        load_roles(path)
    except RolesFileError as e:
        return (2, f"error: {e}\n") if f"{path}, line 3" in str(e) else (1, f"no file and line: {e}")
    return 0, ""


def _roles_check(email: str) -> Callable[[Path, Path], tuple[int, str]]:
    def call(work: Path, db: Path) -> tuple[int, str]:  # noqa: ARG001
        from audit.review.roles import parse_roles

        roles = parse_roles('[roles]\nowners = ["kim@lab.org"]\nreviewers = ["@stanford.edu"]\n')
        role = roles.role_of(email)
        return (0, "") if role is None else (1, f"{email!r} took the role {role}")
    return call


def _unverified(value: object) -> Callable[[Path, Path], tuple[int, str]]:
    def call(work: Path, db: Path) -> tuple[int, str]:  # noqa: ARG001
        from ui.auth import email_verified

        return (1, f"email_verified {value!r} counted as verified") if email_verified(
            {"email_verified": value}) else (0, "")
    return call


def _two_shares(work: Path, db: Path) -> tuple[int, str]:  # noqa: ARG001
    """`Straße` and `strasse` assigned together: two reviewers, two disjoint shares (casefold made them one)."""
    from audit.review.assigned_review import set_review_assignment, share_of
    from audit.store.database import open_db

    conn = open_db(db)
    try:
        set_review_assignment(conn, RUN, ["Straße", "strasse"], min_reviewers=1, set_by="bench")
        a, b = set(share_of(conn, RUN, "Straße") or []), set(share_of(conn, RUN, "strasse") or [])
    finally:
        conn.conn.close()
    return (0, "") if a and b and not a & b else (1, f"shares {len(a)} and {len(b)} decisions, {len(a & b)} shared")


def _look_alike_review(name: str) -> list[str]:
    return ["review", "--db", "{db}", "--run", RUN, "--decision", "1", "--label", "match", "--reviewer", name]


def cases(work: Path, base_db: Path) -> list[Case2]:  # noqa: ARG001 - the runner's protocol
    ok = lambda *_: None  # noqa: E731 - the call's status is the check
    return [
        Case2(IMPORT, "forged signed-in owner and sample draw in an import", None, expect="ok",
              call=_import_forged, check=_forged_stored_local),
        Case2(CARD, "forged undo of another run, another reviewer's client id, undo of an adjudication", None,
              expect="ok", call=_card, check=_card_check),
        Case2(ROLES, "roles file with a Latin-1 byte", None, call=_latin1_roles),
        *[Case2(ROLES, f"look-alike address {name}", None, expect="ok", call=_roles_check(email), check=ok)
          for name, email in (("Kelvin-sign Kim", "\u212aim@lab.org"), ("long-s stanford", "x@\u017ftanford.edu"),
                              ("full-width kim", "\uff4bim@lab.org"))],
        *[Case2(ROLES, f"email_verified {value!r}", None, expect="ok", call=_unverified(value), check=ok)
          for value in (False, "false", 0, 1, "no")],
        Case2(NAMES, "Straße and strasse assigned together", None, expect="ok", call=_two_shares, check=ok),
        *[Case2(NAMES, f"review by the look-alike name {what}", _look_alike_review(name))
          for what, name in (("Cyrillic а in ana", "\u0430na"), ("Kelvin-sign Kim", "\u212aim"),
                             ("full-width ana", "\uff41na"))],
    ]
