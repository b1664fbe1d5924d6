"""Blind by assignment: the owner makes a run, or one reviewer on a run, blind (table `blind_assignments`, m010).

Who may set them is `audit.review.roles`' decision (action `edit_assignments`); what they mean for a reviewer is
`audit.review.roles.blind_forced`.
"""

from __future__ import annotations

from sqlite_utils import Database

from audit.errors import AuditError
from audit.review.identity import reviewer_key
from audit.review.roles import blind_forced
from audit.store.database import now, run_row
from audit.store.shared_reviews import SAME_QUESTION

EVERYONE = "*"


def blind_assignments(db: Database, run: str) -> dict[str, bool]:
    """The run's assignments: reviewer e-mail (or `EVERYONE`) -> blind (none for an unknown run). One query by
    name: the sidebar asks on every render, beside the page's own run lookup."""
    return {who: bool(blind) for who, blind in db.execute(
        "SELECT a.reviewer, a.blind FROM blind_assignments a JOIN runs r ON r.id = a.run_id WHERE r.name = ?",
        [run]).fetchall()}


def blind_assigned(db: Database, run: str, email: str | None) -> bool:
    """Whether the owner's assignments make `email` blind on `run`: an assignment of the run itself, or of a run that
    asks one of its questions. A label settles its question in every run that asks it, so without the second an
    assigned reviewer could settle (and adjudicate) the blind run's questions from a twin run, sighted, seeing the
    other reviewers' labels there."""
    assigned: dict[tuple[int, str, str], dict[str, bool]] = {}
    for run_id, name, task, who, blind in db.execute(
            "SELECT r.id, r.name, r.task, a.reviewer, a.blind FROM blind_assignments a JOIN runs r ON r.id = a.run_id"):
        assigned.setdefault((run_id, name, task), {})[who] = bool(blind)
    here = next((k for k in assigned if k[1] == run), None)
    if here is not None and blind_forced(assigned[here], email):
        return True
    forcing = [k for k, a in assigned.items() if k[1] != run and blind_forced(a, email)]
    if not forcing:
        return False
    row = db.execute("SELECT id, task FROM runs WHERE name = ?", [run]).fetchone()
    return row is not None and any(task == row[1] and _ask_alike(db, row[0], other) for other, _, task in forcing)


def _ask_alike(db: Database, run_id: int, other_id: int) -> bool:
    """Whether two runs ask a question in common (a decision of each with one question key)."""
    return db.execute(f"SELECT 1 FROM decisions d1 CROSS JOIN decisions d2 WHERE d1.run_id = ? AND {SAME_QUESTION} "
                      "AND d2.run_id = ? LIMIT 1", [run_id, other_id]).fetchone() is not None


def set_blind_assignment(db: Database, run: str, reviewer: str, blind: bool | None, set_by: str) -> None:
    """Make `reviewer` (an e-mail address, or `EVERYONE`) blind on `run` (`blind=True`), explicitly not blind
    (`False`, which overrides a run-wide assignment), or remove the assignment (`None`).

    Raises:
        UnknownRun; AuditError: `reviewer` is neither an address nor `EVERYONE`.
    """
    reviewer = reviewer.strip() if reviewer.strip() == EVERYONE else reviewer_key(reviewer)
    if reviewer != EVERYONE and reviewer.count("@") != 1:
        raise AuditError(f"{reviewer!r} is not an e-mail address (or {EVERYONE!r} for every reviewer of the run)")
    run_id = run_row(db, run)["id"]
    if blind is None:
        db.execute("DELETE FROM blind_assignments WHERE run_id = ? AND reviewer = ?", [run_id, reviewer])
        return
    db.execute("INSERT INTO blind_assignments (run_id, reviewer, blind, set_by, updated) VALUES (?, ?, ?, ?, ?) "
               "ON CONFLICT (run_id, reviewer) DO UPDATE SET blind = excluded.blind, set_by = excluded.set_by, "
               "updated = excluded.updated", [run_id, reviewer, int(blind), set_by, now()])
