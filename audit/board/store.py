"""Boards in the store: several runs of one family on the same gold, compared side by side (issue 36 §2).

A board is a name and its runs (table `boards`, migration m015). Runs belong on one board only when they are of
the same family and scored on the same gold: the same documents with the same gold content (the family's
`gold_key`, the key under which a review settles a question in every run, `scoring.families.base.decision_qkeys`).
For a family whose systems live inside one run (ideation: `board_systems`), a board holds that one run and
records its systems. Creating refuses with one line naming what is wrong; nothing is written then.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from sqlite_utils import Database

from audit.errors import AuditError
from audit.numbers import count_noun
from audit.store.database import dumps, now, run_row, transaction
from audit.store.plans import delete_board_plans
from scoring.families import get_task


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > 200 or not name.isprintable():
        raise AuditError(f"board name {name[:60]!r} must be printable text of 1 to 200 characters")
    return name


def _gold_keys(db: Database, run_id: int, family: str) -> dict[str, str]:
    """doc id -> the family's gold key of that document in the run."""
    task = get_task(family)
    return {doc: task.gold_key(json.loads(payload)) for doc, payload in
            db.execute("SELECT doc_id, payload FROM documents WHERE run_id = ?", [run_id])}


def _gold_difference(first: dict[str, str], other: dict[str, str]) -> str | None:
    """In words, how `other`'s gold differs from `first`'s (None: the same documents with the same gold)."""
    missing, extra = sorted(set(first) - set(other)), sorted(set(other) - set(first))
    if missing or extra:
        shown = (missing or extra)[0]
        return (f"{len(missing)} of its documents are missing and {len(extra)} are extra "
                f"(e.g. {shown!r} {'missing' if missing else 'extra'})")
    changed = sorted(d for d in first if first[d] != other[d])
    if changed:
        return f"the gold of {count_noun(len(changed), 'document')} differs (e.g. {changed[0]!r})"
    return None


def create_board(db: Database, name: str, runs: list[str]) -> dict:
    """Store board `name` over `runs` (in that order) and return it as `get_board` does, with a `warning` when the
    runs were scored by different judges (`judges_differ`).

    Raises:
        AuditError: the name is taken or not printable, a run is unknown or given twice, fewer than two systems
            would be compared, or a run differs from the first in family or gold content (the message names it).
    """
    _check_name(name)
    if not runs:
        raise AuditError(f"board {name!r}: give its runs (--runs A,B)")
    dupes = sorted({r for r in runs if runs.count(r) > 1})
    if dupes:
        raise AuditError(f"board {name!r}: run {dupes[0]!r} is given twice")
    if db.execute("SELECT 1 FROM boards WHERE name = ?", [name]).fetchone():
        raise AuditError(f"board {name!r} already exists; pick another name or delete it (`python -m audit board "
                         f"delete {name}`)")
    rows = [run_row(db, r) for r in runs]
    family = rows[0]["task"]
    for row in rows[1:]:
        if row["task"] != family:
            raise AuditError(f"run {row['name']!r} is of family {row['task']}, run {runs[0]!r} of {family}: a "
                             "board compares runs of one family")
    task = get_task(family)
    systems: list[str] | None = None
    in_run = task.board_systems(rows[0]["original_metrics"])
    if in_run:
        if len(rows) > 1:
            raise AuditError(f"run {runs[1]!r}: a board of family {family} holds one run (its systems "
                             f"{', '.join(in_run)} are inside run {runs[0]!r})")
        if len(in_run) < 2:
            raise AuditError(f"run {runs[0]!r} has one system ({in_run[0]}): a board compares two or more")
        systems = in_run
    elif len(rows) < 2:
        raise AuditError(f"board {name!r}: a run of family {family} is one system; give two or more runs "
                         "(--runs A,B)")
    else:
        first = _gold_keys(db, rows[0]["id"], family)
        for row in rows[1:]:
            why = _gold_difference(first, _gold_keys(db, row["id"], family))
            if why:
                raise AuditError(f"run {row['name']!r} is not on the gold of run {runs[0]!r}: {why}; a board "
                                 "compares runs on the same gold")
    with transaction(db):
        if db.execute("SELECT 1 FROM boards WHERE name = ?", [name]).fetchone():  # created meanwhile
            raise AuditError(f"board {name!r} already exists; pick another name")
        db.execute("INSERT INTO boards (name, family, runs, systems, created) VALUES (?, ?, ?, ?, ?)",
                   [name, family, dumps(runs), None if systems is None else dumps(systems), now()])
    warning = judges_differ(rows)
    return get_board(db, name) | ({"warning": warning} if warning else {})


def _judge_of(row: Mapping) -> str | None:
    """The judge a run was scored by, as far as the run says: a replayed log's recorded judge (its meta file's), None
    for a log that names none (it cannot be told apart from another), else the spec."""
    identity = row.get("judge_identity") or {}
    spec = str(row["judge_spec"])
    if spec.startswith("replay:"):
        return (identity.get("source") or {}).get("judge_spec")
    return spec


def judges_differ(rows: Sequence[Mapping]) -> str | None:
    """A warning when the board's runs were scored by different judges (a board compares systems under one judge:
    with two, the judge-only column compares judges as much as systems), else None. A replayed log that does not
    say which judge wrote it is left out of the comparison. `rows`: the runs' rows (`run_row`)."""
    judges = {r["name"]: _judge_of(r) for r in rows}
    known = {r: j for r, j in judges.items() if j is not None}
    if len(set(known.values())) < 2:
        return None
    unknown = [r for r, j in judges.items() if j is None]  # named, so the list does not read as the whole board
    return ("the runs were scored by different judges (" + "; ".join(f"{r}: {j}" for r, j in known.items()) +
            (f"; not recorded: {', '.join(unknown)}" if unknown else "") +
            "): the judge-only values compare the judges as well as the systems, and so do the audited ones until "
            "every decision is reviewed")


def _board(row: dict) -> dict:
    return {"name": row["name"], "family": row["family"], "runs": json.loads(row["runs"]),
            "systems": None if row["systems"] is None else json.loads(row["systems"]), "created": row["created"]}


def get_board(db: Database, name: str) -> dict:
    """{name, family, runs, systems, created}.

    Raises:
        AuditError: no board of that name (the message lists a few that exist).
    """
    rows = list(db.query("SELECT * FROM boards WHERE name = ?", [name]))
    if not rows:
        known = [r[0] for r in db.execute("SELECT name FROM boards ORDER BY created DESC LIMIT 5")]
        hint = f"; boards in this database: {', '.join(known)}" if known else "; this database has no boards"
        raise AuditError(f"unknown board {name[:80]!r}{hint}")
    return _board(rows[0])


def list_boards(db: Database) -> list[dict]:
    """Every board, newest first."""
    return [_board(r) for r in db.query("SELECT * FROM boards ORDER BY created DESC, name")]


def delete_board(db: Database, name: str) -> None:
    """Delete the board (its runs and their reviews stay).

    Raises:
        AuditError: no board of that name.
    """
    get_board(db, name)
    with transaction(db):
        db.execute("DELETE FROM boards WHERE name = ?", [name])
        delete_board_plans(db, [name])


def boards_of_run(db: Database, run: str) -> list[str]:
    """Names of the boards that hold run `run`, by name."""
    return [n for n, in db.execute("SELECT name FROM boards WHERE EXISTS (SELECT 1 FROM json_each(boards.runs) "
                                   "WHERE value = ?) ORDER BY name", [run])]

