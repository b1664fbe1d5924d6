"""Opening a database reads every page (`PRAGMA quick_check`) only when the file changed since a check passed on
it (`audit.store.check_record`, #38: 0.4 s of every command on a 480 MB database), and damage done after the
check is refused however it is made."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from audit.cli import main
from audit.errors import DatabaseRefused
from audit.store import check_record, database
from audit.store.database import open_db
from tests.conftest import ROOT, copy_of


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records in this test's folder, and no database counted as opened by this process before."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(database, "_CHECKED", {})


@pytest.fixture
def page_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every `quick_check` SQLite runs on a connection the store opens from now on."""
    seen: list[str] = []
    connect = sqlite3.connect

    def traced(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(lambda sql: seen.append(sql) if "quick_check" in sql else None)
        return conn

    monkeypatch.setattr(database.sqlite3, "connect", traced)
    return seen


def reopen(p: Path) -> None:
    database._CHECKED.clear()  # as a new process would
    open_db(p).conn.close()


def damage_pages(p: Path) -> None:
    """Overwrite bytes inside pages 3, 6, ... (the header intact), keeping the file's size and modification time."""
    st = p.stat()
    data = bytearray(p.read_bytes())
    rng = random.Random(5)
    for start in range(4096 * 2, len(data), 4096 * 3):
        data[start + 200:start + 1200] = rng.randbytes(1000)
    with p.open("r+b") as f:
        f.write(data)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_size == st.st_size and p.stat().st_mtime_ns == st.st_mtime_ns


OPEN_IN_A_NEW_PROCESS = """
import sqlite3, sys
connect, seen = sqlite3.connect, []
def traced(*args, **kwargs):
    conn = connect(*args, **kwargs)
    conn.set_trace_callback(lambda sql: seen.append(sql) if "quick_check" in sql else None)
    return conn
sqlite3.connect = traced
from audit.store.database import open_db
open_db(sys.argv[1]).conn.close()
print(len(seen))
"""


def page_checks_of_a_new_process(p: Path) -> int:
    out = subprocess.run([sys.executable, "-c", OPEN_IN_A_NEW_PROCESS, str(p)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env=os.environ | {"PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


def test_an_unchanged_database_is_read_once_a_changed_one_again(mixed_template, db_path) -> None:
    """Each command is a new process: the first reads every page, the next ones (file unchanged) none, and one
    after a change (here by another program) all of them again."""
    p = copy_of(mixed_template, db_path)
    assert page_checks_of_a_new_process(p) == 1
    assert page_checks_of_a_new_process(p) == 0
    assert page_checks_of_a_new_process(p) == 0
    with sqlite3.connect(p) as c:
        c.execute("UPDATE runs SET name = name")
    c.close()
    assert page_checks_of_a_new_process(p) == 1


@pytest.mark.parametrize("how", ["pages overwritten, size and mtime kept", "replaced by a damaged copy"])
def test_damage_after_a_passed_check_is_refused(how: str, mixed_template, db_path, tmp_path) -> None:
    """The evasion: damage that leaves the size and modification time as they were (or a damaged file moved over
    the checked one) is still refused, because the file's change time and inode are part of its state."""
    p = copy_of(mixed_template, db_path)
    reopen(p)
    assert check_record.is_recorded(p, check_record.state(p))
    if how.startswith("pages"):
        damage_pages(p)
    else:
        other = copy_of(mixed_template, tmp_path / "other.db")
        damage_pages(other)
        shutil.copystat(p, other)
        os.replace(other, p)
    with pytest.raises(DatabaseRefused, match="the database is damaged"):
        reopen(p)
    assert not check_record.is_recorded(p, check_record.state(p))


def test_a_cli_command_that_writes_leaves_the_file_checked(mixed_template, db_path, page_checks,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`review` writes, then checks the file as it leaves it; the read that follows does not read it again, and the
    record lives in the cache folder, never beside the database."""
    p = copy_of(mixed_template, db_path)
    assert main(["review", "--db", str(p), "--run", "mixed", "--decision", "1", "--label", "match",
                 "--reviewer", "ana"]) == 0
    assert len(page_checks) == 2  # on opening, and as it was left
    assert check_record.is_recorded(p, check_record.state(p))
    assert sorted(f.name for f in p.parent.iterdir() if f.name.startswith(p.name)) == [p.name]
    database._CHECKED.clear()
    assert main(["decisions", "--db", str(p), "--run", "mixed"]) == 0
    assert len(page_checks) == 2
    capsys.readouterr()


def test_check_reads_the_whole_database_on_demand(mixed_template, db_path, page_checks,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    p = copy_of(mixed_template, db_path)
    assert main(["check", "--db", str(p)]) == 0
    assert '"ok": true' in capsys.readouterr().out
    damage_pages(p)
    database._CHECKED.clear()
    assert main(["check", "--db", str(p)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {p}: the database is damaged")
