"""Issue 27: a database whose schema is not what its migrations made is refused before the first write (a dropped
`effective` table, a half-migrated file), a refused file is not even switched to WAL, and a schema newer than the
code is refused by its stamp, also when this process opened the file before it was migrated elsewhere."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from audit.cli import main
from audit.errors import DatabaseRefused
from audit.store import database as store
from audit.store.database import APPLICATION_ID, open_db
from audit.store.migrations import SCHEMA_VERSION, migrations
from audit.store.schema_check import last_schema_migration
from tests.conftest import GOLD, PRED_MIXED, copy_of


@pytest.fixture(scope="module")
def scored(tmp_path_factory, exact_template) -> Path:
    return copy_of(exact_template, tmp_path_factory.mktemp("stamp") / "base.db")


def changed(scored: Path, folder: Path, *sql: str) -> Path:
    folder.mkdir(exist_ok=True)
    p = folder / "x.db"
    shutil.copy(scored, p)
    c = sqlite3.connect(p)
    for s in sql:
        c.execute(s)
    c.commit()
    c.close()
    return p


def fingerprint(folder: Path) -> dict[str, str]:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(folder.iterdir()) if f.is_file()}


def journal_mode(p: Path) -> str:
    c = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    try:
        return c.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        c.close()


@pytest.mark.parametrize("argv", [["score", "chimera", "--gold", str(GOLD), "--pred", str(PRED_MIXED), "--judge",
                                   "exact", "--run", "new"], ["runs"], ["export", "--run", "mixed"],
                                  ["review", "--run", "mixed", "--decision", "1", "--label", "match", "--reviewer",
                                   "ana"]], ids=lambda a: a[0])
def test_a_database_without_its_effective_table_is_refused_by_every_command(scored, tmp_path, capsys, argv):
    p = changed(scored, tmp_path / "f", "DROP TABLE effective")
    before = fingerprint(p.parent)
    assert main([argv[0], "--db", str(p), *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}: the database is damaged") and "table effective" in err
    assert fingerprint(p.parent) == before


def test_a_half_migrated_file_is_refused_and_stays_in_rollback_mode(scored, tmp_path):
    p = changed(scored, tmp_path / "f", "PRAGMA journal_mode = DELETE",
                f"DELETE FROM _sqlite_migrations WHERE name = '{last_schema_migration()}'")
    assert journal_mode(p) == "delete"
    before = fingerprint(p.parent)
    with pytest.raises(DatabaseRefused, match="half-migrated: .* already there, but migration"):
        open_db(p)
    assert fingerprint(p.parent) == before
    assert journal_mode(p) == "delete"


def test_a_migration_that_fails_leaves_a_rollback_mode_file_as_it_was(scored, tmp_path, monkeypatch):
    p = changed(scored, tmp_path / "f", "PRAGMA journal_mode = DELETE")
    before = fingerprint(p.parent)

    def m999_fails(db) -> None:  # noqa: ANN001 - fails on a database with runs (not on the schema's blueprint)
        db.execute("CREATE TABLE half (x)")
        if db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]:
            raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(migrations, "_migrations", [*migrations._migrations,
                                                    migrations._Migration("m999_fails", m999_fails)])
    with pytest.raises(sqlite3.OperationalError):
        open_db(p)
    assert journal_mode(p) == "delete"
    assert fingerprint(p.parent) == before


def test_a_rollback_mode_file_with_a_pending_migration_is_migrated_then_switched_to_wal(scored, tmp_path,
                                                                                      monkeypatch):
    p = changed(scored, tmp_path / "f", "PRAGMA journal_mode = DELETE", "PRAGMA application_id = 0")

    def m998_new_table(db) -> None:  # noqa: ANN001
        db.execute("CREATE TABLE m998 (x)")

    monkeypatch.setattr(migrations, "_migrations", [*migrations._migrations,
                                                    migrations._Migration("m998_new_table", m998_new_table)])
    db = open_db(p)
    assert "m998_new_table" in {m.name for m in migrations.applied(db)}
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.conn.close()


def test_a_new_database_carries_the_application_id_and_schema_version(tmp_path):
    db = open_db(tmp_path / "new.db")
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_another_applications_id_is_refused(scored, tmp_path):
    p = changed(scored, tmp_path / "f", "PRAGMA application_id = 1234")
    before = fingerprint(p.parent)
    with pytest.raises(DatabaseRefused, match=r"another application \(application_id 0x4d2\)"):
        open_db(p)
    assert fingerprint(p.parent) == before


def test_code_older_than_the_schema_refuses_it(scored, tmp_path, monkeypatch):
    """Simulated older code: one migration fewer and a lower schema version than the file's stamp."""
    p = changed(scored, tmp_path / "f")
    before = fingerprint(p.parent)
    monkeypatch.setattr(store, "SCHEMA_VERSION", SCHEMA_VERSION - 1)
    monkeypatch.setattr(migrations, "_migrations", migrations._migrations[:-1])
    with pytest.raises(DatabaseRefused, match="written by a newer Rejudge .* upgrade Rejudge"):
        open_db(p)
    assert fingerprint(p.parent) == before


def test_a_file_migrated_by_newer_code_after_this_process_opened_it_is_refused(scored, tmp_path):
    """A dashboard keeps running while a newer CLI migrates its database: its next open must refuse it."""
    p = changed(scored, tmp_path / "f")
    open_db(p).conn.close()
    c = sqlite3.connect(p)
    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    c.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('rejudge', 'm099_future', "
              "'2030-01-01')")
    c.commit()
    c.close()
    with pytest.raises(DatabaseRefused, match="written by a newer Rejudge"):
        open_db(p)
