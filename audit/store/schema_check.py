"""Is a database's schema the one its recorded migrations made? Read-only, before `audit.store.database.open_db` writes.

The expected schema of a set of applied migrations is built by running exactly those migrations on an empty
in-memory database (their own code, so it cannot drift from them). A file is refused when an object those
migrations create is missing (a dropped `effective` table: every command would fail or write around it) or when an
object of a migration not recorded as applied is already there (a half-migrated file: running that migration would
fail after the file was changed).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterable

from sqlite_utils import Database

from audit.store.migrations import migrations

Schema = dict[str, frozenset[str]]
"""`table:NAME` -> its column names; `index:NAME` -> empty."""


@functools.cache
def expected_schema(applied: frozenset[str]) -> Schema:
    """The tables (with columns) and indexes the named migrations create, applied in their registered order."""
    db = Database(memory=True, execute_plugins=False)
    for m in migrations._migrations:
        if m.name in applied:
            m.fn(db)
    return read_schema(db.conn)


def last_schema_migration() -> str:
    """The newest migration that adds a table, column or index. A file that lacks only the record of a later,
    data-only one (m020) is not half-migrated: nothing of it shows in the schema, and applying it again is safe."""
    names = [m.name for m in migrations._migrations]
    return next(n for i, n in reversed(list(enumerate(names)))
                if expected_schema(frozenset(names[:i + 1])) != expected_schema(frozenset(names[:i])))


def read_schema(conn: sqlite3.Connection) -> Schema:
    """The schema of a connection's main database (reads only; SQLite's own and the migrations table left out)."""
    out: Schema = {}
    for kind, name in conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index') AND name "
                                   "NOT LIKE 'sqlite_%' AND name != '_sqlite_migrations'").fetchall():
        if kind == "index":
            out[f"index:{name}"] = frozenset()
        else:
            quoted = '"' + name.replace('"', '""') + '"'
            out[f"table:{name}"] = frozenset(r[1] for r in conn.execute(f"PRAGMA table_info({quoted})"))
    return out


def schema_problem(conn: sqlite3.Connection, applied: Iterable[str]) -> str | None:
    """Why this database's schema is not the one its applied migrations made (None when it is).

    Extra objects of no Rejudge migration (a user's own table, `sqlite_stat1`) are allowed.
    """
    applied = frozenset(applied)
    known = frozenset(m.name for m in migrations._migrations)
    want = expected_schema(applied & known)
    have = read_schema(conn)
    missing = [_name(k) for k in want if k not in have]
    missing += [f"column {_name(k)[6:]}.{c}" for k, cols in want.items() if k in have for c in sorted(cols - have[k])]
    if missing:
        return (f"{', '.join(missing[:4])}{' …' if len(missing) > 4 else ''} missing (the schema its migrations made "
                "is incomplete)")
    full = expected_schema(known)
    pending = sorted(known - applied)
    early = [_name(k) for k in full if k not in want and k in have]
    early += [f"column {_name(k)[6:]}.{c}" for k, cols in full.items() if k in want and k in have
              for c in sorted((cols - want[k]) & have[k])]
    if early and pending:
        return (f"half-migrated: {', '.join(early[:4])} already there, but migration {', '.join(pending[:3])} "
                "is not recorded as applied")
    return None


def _name(key: str) -> str:
    kind, name = key.split(":", 1)
    return f"{kind} {name}"
