"""Issue 17 item 9: damaged and foreign databases are refused with a clear message and left byte for byte as they
were; newer schemas are refused before anything is written; read-only databases open read-only and export works.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlite_utils import Database

from audit.cli import main
from audit.errors import DatabaseRefused
from audit.outputs.export import export_run
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.store.migrations import SCHEMA_VERSION, migrations
from tests.conftest import GOLD, PRED_MIXED, ROOT, copy_of

NEW_DB = "a file name that does not exist yet to start a new database"


@pytest.fixture(scope="module")
def scored(tmp_path_factory, exact_template) -> Path:
    """A Rejudge database with run `mixed` (exact judge), checkpointed into one file."""
    return copy_of(exact_template, tmp_path_factory.mktemp("base") / "base.db")


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file of the folder and its sha256: a file appearing (a -wal, a -shm) counts as a change."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def foreign(p: Path, *, wal: bool = False, migrations_of: str | None = None, user_version: int = 7,
            tables: bool = True) -> None:
    c = sqlite3.connect(p)
    if wal:
        c.execute("PRAGMA journal_mode = WAL")
    if tables:
        c.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        c.executemany("INSERT INTO notes (body) VALUES (?)", [(f"n{i}",) for i in range(50)])
    if migrations_of:
        c.execute("CREATE TABLE _sqlite_migrations (migration_set TEXT, name TEXT, applied_at TEXT)")
        c.execute("INSERT INTO _sqlite_migrations VALUES (?, 'm001_initial', '2026-01-01')", [migrations_of])
    c.execute(f"PRAGMA user_version = {user_version}")
    c.commit()
    c.close()


def rejudge_changed(scored: Path, p: Path, *sql: str) -> None:
    shutil.copy(scored, p)
    c = sqlite3.connect(p)
    for s in sql:
        c.execute(s)
    c.commit()
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()


STATES: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "0-byte file": (lambda p, _s: p.write_bytes(b""), f"is an empty file (0 bytes), not a Rejudge database; delete "
                                                      f"it, or give --db (or $REJUDGE_DB) {NEW_DB}"),
    "garbage": (lambda p, _s: p.write_bytes(random.Random(1).randbytes(8192)), "is not an SQLite database"),
    "a text file": (lambda p, _s: p.write_text("hello\n" * 50), "is not an SQLite database"),
    "truncated to half": (lambda p, s: p.write_bytes(s.read_bytes()[:s.stat().st_size // 2]),
                          "the database is truncated"),
    "only the 100-byte header": (lambda p, s: p.write_bytes(s.read_bytes()[:100]), "the database is truncated"),
    "another app, rollback journal": (lambda p, _s: foreign(p), "is an SQLite database of another application "
                                                                "(tables notes, user_version 7, no Rejudge schema)"),
    "another app, WAL": (lambda p, _s: foreign(p, wal=True), "is an SQLite database of another application"),
    "another sqlite-utils app": (lambda p, _s: foreign(p, migrations_of="otherapp", user_version=0),
                                 "is an SQLite database of another application (tables _sqlite_migrations, notes"),
    "no tables but a user_version": (lambda p, _s: foreign(p, tables=False, user_version=3),
                                     "is an SQLite database of another application (tables none, user_version 3"),
    "newer schema version": (lambda p, s: rejudge_changed(s, p, f"PRAGMA user_version = {SCHEMA_VERSION + 1}"),
                             f"written by a newer Rejudge (schema version {SCHEMA_VERSION + 1}); this version knows "
                             f"schema {SCHEMA_VERSION}: upgrade Rejudge to open it (nothing was changed)"),
    "a migration this code does not know": (
        lambda p, s: rejudge_changed(s, p, "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES "
                                           "('rejudge', 'm099_future', '2030-01-01')"),
        f"written by a newer Rejudge (schema version {SCHEMA_VERSION}; migrations m099_future)"),
}


@pytest.mark.parametrize("state", STATES, ids=list(STATES))
def test_unusable_database_is_refused_and_left_unchanged(scored, tmp_path, state):
    make, message = STATES[state]
    folder = tmp_path / "f"
    folder.mkdir()
    p = folder / "x.db"
    make(p, scored)
    before = fingerprint(folder)
    with pytest.raises(DatabaseRefused, match="^" + str(p).replace(".", r"\.") + ": ") as e:
        open_db(p)
    assert message in str(e.value)
    assert fingerprint(folder) == before


@pytest.mark.parametrize("state", ["another app, rollback journal", "another app, WAL"])
def test_a_foreign_database_keeps_its_tables_user_version_and_journal_mode(scored, tmp_path, state):
    p = tmp_path / "other.db"
    STATES[state][0](p, scored)

    def describe() -> tuple:
        with sqlite3.connect(f"file:{p}?mode=ro", uri=True) as c:
            out = (c.execute("PRAGMA journal_mode").fetchone()[0], c.execute("PRAGMA user_version").fetchone()[0],
                   sorted(r[0] for r in c.execute("SELECT name FROM sqlite_master")))
        c.close()
        return out

    before = describe()
    for argv in (["runs"], ["score", "chimera", "--gold", str(GOLD), "--pred", str(PRED_MIXED), "--judge", "exact"]):
        assert main([argv[0], "--db", str(p), *argv[1:]]) == 2
    assert describe() == before == (("wal" if "WAL" in state else "delete"), 7, ["notes"])


def test_cli_refusals_are_one_line(scored, tmp_path, capsys):
    for name, (make, message) in STATES.items():
        p = tmp_path / f"{abs(hash(name))}.db"
        make(p, scored)
        assert main(["runs", "--db", str(p)]) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"error: {p}: " + err[0].split(f"{p}: ", 1)[1]] and message in err[0], name


def test_damaged_pages_behind_an_intact_header_give_one_error_line(scored, tmp_path, capsys):
    data = bytearray(scored.read_bytes())
    rng = random.Random(2)
    for start in range(4096 * 2, len(data), 4096 * 3):
        data[start + 100:start + 2000] = rng.randbytes(1900)
    p = tmp_path / "x.db"
    p.write_bytes(bytes(data))
    for argv in (["runs"], ["decisions", "--run", "mixed"], ["export", "--run", "mixed", "--format", "csv"]):
        status = main([argv[0], "--db", str(p), *argv[1:]])
        err = capsys.readouterr().err.strip().splitlines()
        assert status == 2 and len(err) == 1 and err[0].startswith("error: "), (argv, err)
        assert "Traceback" not in err[0]


@pytest.fixture(params=["file", "folder"])
def read_only(request, scored, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    p = folder / "x.db"
    shutil.copy(scored, p)
    (p if request.param == "file" else folder).chmod(0o444 if request.param == "file" else 0o555)
    yield p
    folder.chmod(0o755)
    p.chmod(0o644)


def test_a_read_only_database_opens_read_only_and_exports(scored, read_only, tmp_path, capsys):
    before = fingerprint(read_only.parent)
    db = open_db(read_only)
    assert db.read_only
    writable = open_db(scored)
    assert not writable.read_only
    for fmt in ("csv", "json", "latex"):
        assert export_run(db, "mixed", fmt) == export_run(writable, "mixed", fmt)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        add_review(db, "mixed", 1, "match", "ana")
    db.conn.close()
    out = tmp_path / "export.csv"
    assert main(["export", "--db", str(read_only), "--run", "mixed", "--format", "csv", "--out", str(out)]) == 0
    assert main(["decisions", "--db", str(read_only), "--run", "mixed"]) == 0
    capsys.readouterr()
    assert main(["review", "--db", str(read_only), "--run", "mixed", "--decision", "1", "--label", "match",
                 "--reviewer", "ana"]) == 2
    assert capsys.readouterr().err == (f"error: {read_only}: the database is read-only (the file or its folder is "
                                       "not writable): it can be browsed and exported, not changed\n")
    assert fingerprint(read_only.parent) == before  # no -wal / -shm left behind, the file untouched
    assert out.read_bytes() == export_run(writable, "mixed", "csv").encode("utf-8")


def test_a_read_only_database_that_needs_a_migration_is_refused(tmp_path):
    p = tmp_path / "old.db"
    last = migrations._migrations[-1].name
    old = Database(p)
    old.enable_wal()
    migrations.apply(old, stop_before=last)  # a database of the previous schema
    old.conn.close()
    p.chmod(0o444)
    try:
        with pytest.raises(DatabaseRefused, match="read-only and needs upgrading to schema"):
            open_db(p)
        p.chmod(0o644)
        db = open_db(p)  # with write access the migration runs
        assert last in {m.name for m in migrations.applied(db)}
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        p.chmod(0o644)


def test_an_sqlite_file_without_tables_or_user_version_becomes_a_database(tmp_path):
    """What a process killed between creating the file and migrating leaves: a header, no tables. Not foreign."""
    p = tmp_path / "blank.db"
    c = sqlite3.connect(p)
    c.execute("CREATE TABLE t (x)")
    c.execute("DROP TABLE t")
    c.commit()
    c.close()
    assert p.read_bytes()[:16] == b"SQLite format 3\x00"
    db = open_db(p)
    assert {"runs", "decisions", "reviews"} <= set(db.table_names())
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


OPENER = """
import sys
sys.path.insert(0, {root!r})
from audit.store.database import open_db
db = open_db(sys.argv[1])
print(db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
"""


def test_processes_creating_the_same_new_database_at_once_all_succeed(tmp_path):
    script = tmp_path / "open.py"
    script.write_text(OPENER.format(root=str(ROOT)))
    p = tmp_path / "new.db"
    procs = [subprocess.Popen([sys.executable, str(script), str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    results = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0], results
    assert [r[0].strip() for r in results] == ["0"] * 4
