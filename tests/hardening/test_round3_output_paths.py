"""Issue 34, data loss: one rule for every file the CLI and the dashboard write (`audit/output_paths.py`), the judge
log written before the run is stored, and a full disk named as such.

Every output option the CLI's parser has is found by walking the parser, and pointed at the database: each must be
refused with the database unchanged (so a new option that writes a file is either routed through the rule or fails
here)."""

from __future__ import annotations

import argparse
import errno
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from audit import cli, output_paths
from audit.cli import build_parser, main
from audit.errors import AuditError
from audit.output_paths import OPTION_FLAGS, OutputRule, write_output
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import disk_full, open_db, transaction
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A database with run `base` (replay judge, one review), checkpointed (no WAL files beside it)."""
    p = tmp_path_factory.mktemp("r3") / "base.db"
    db = open_db(p)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="base")
    add_review(db, "base", 1, "no-match", "seed")
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return p


@pytest.fixture
def db(base, tmp_path) -> Path:
    p = tmp_path / "audit.db"
    shutil.copy(base, p)
    return p


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def reviews(p: Path) -> int:
    with sqlite3.connect(p) as c:
        n = c.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    c.close()
    return n


def runs(p: Path) -> list[str]:
    with sqlite3.connect(p) as c:
        names = [r[0] for r in c.execute("SELECT name FROM runs ORDER BY name")]
    c.close()
    return names


def files(folder: Path) -> list[str]:
    """The folder's files but the WAL files of a connection the in-process CLI left open."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))


def error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


SCORE = ["score", "chimera", "--gold", str(GOLD), "--pred", str(PRED_MIXED), "--judge", f"replay:{JUDGE_LOG}"]

COMMANDS = {
    "export": [["export", "--run", "base", "--format", f] for f in ("json", "csv", "latex", "judgelog")],
    "report": [["report", "--run", "base"]],
    "export-reviews": [["export-reviews", "--run", "base"]],
    "delete-run": [["delete-run", "--run", "base"]],
    "score": [[*SCORE, "--run", "new"]],
    "judge-batch": [["judge-batch", "export", "--task", "chimera", "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                     "--judge", "openai:gpt-4o-mini"]],
    "improve-judge": [["improve-judge", "--run", "base", "--strategy", "threshold"]],
    "write-back": [["write-back", "inspect", "--run", "base", "--log", str(PRED_MIXED)]],
    "board": [["board", "export", "no-board", "--format", f] for f in ("json", "csv", "latex")],
}
"""Each command with an output option, with the arguments it needs besides that option."""


def output_options() -> list[tuple[str, str]]:
    """(command, option) for every option of the CLI that names a file or folder to write, found by walking the
    parser: its flag is an output flag, or its help says it writes."""
    found = []

    def walk(parser: argparse.ArgumentParser, command: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, command or name)
                continue
            flags = [o for o in action.option_strings if o.startswith("--")]
            says_write = re.search(r"\bwrite\b", action.help or "", re.IGNORECASE)
            if flags and (set(flags) & set(OPTION_FLAGS) or says_write or "out" in action.dest.split("_")):
                found.append((command, flags[0]))

    for argv in (["score"], ["judge-batch", "--help"], ["runs"]):
        walk(build_parser(argv), "")
    return sorted(set(found))


def test_the_walk_finds_every_output_option_and_only_the_known_ones():
    found = output_options()
    assert {o for _, o in found} <= set(OPTION_FLAGS)
    assert {c for c, _ in found} == set(COMMANDS)
    assert ("export", "--out") in found and ("score", "--judge-log") in found and ("delete-run", "--exported") in found


@pytest.mark.parametrize("target", ["", "-wal", "-shm", "symlink", "hardlink", "relative"])
def test_every_output_option_refuses_the_database(db, tmp_path, capsys, monkeypatch, target):
    """`--out audit.db` (and its -wal/-shm, through a link or a relative path), for every output option the parser
    has: refused, the database byte for byte unchanged, every review still there."""
    if target == "symlink":
        out = tmp_path / "link.html"
        out.symlink_to(db)
    elif target == "hardlink":
        out = tmp_path / "hard.html"
        os.link(db, out)
    elif target == "relative":
        monkeypatch.chdir(tmp_path)
        out = Path("sub/../audit.db")
        (tmp_path / "sub").mkdir()
    else:
        out = Path(f"{db}{target}")
    before = sha(db)
    for command, option in output_options():
        if option == "--figures":
            continue  # a folder: its files are checked one by one (test_figures_never_replace_without_force)
        for argv in COMMANDS[command]:
            status = main(["--db", str(db), *argv, option, str(out), "--force"])
            line = error(capsys)
            assert status == 2, (argv, option, line)
            assert "the database" in line and str(out) in line, line
    assert sha(db) == before and reviews(db) == 1 and runs(db) == ["base"]
    assert not Path(f"{db}-wal").exists() or target == "-wal"


def test_an_existing_file_is_replaced_only_with_force(db, tmp_path, capsys):
    out = tmp_path / "old.csv"
    out.write_text("precious\n")
    assert main(["--db", str(db), "export", "--run", "base", "--format", "csv", "--out", str(out)]) == 2
    assert "the file exists" in error(capsys) and out.read_text() == "precious\n"
    assert main(["--db", str(db), "export", "--run", "base", "--format", "csv", "--out", str(out), "--force"]) == 0
    assert out.read_text().startswith("id,") or "," in out.read_text().splitlines()[0]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_an_input_of_the_run_is_never_replaced_even_with_force(db, tmp_path, capsys):
    """A copy of the run's gold file (the store has its SHA-256) and the command's own inputs."""
    gold = tmp_path / "gold.csv"
    shutil.copy(GOLD, gold)
    assert main(["--db", str(db), "export-reviews", "--run", "base", "--out", str(gold), "--force"]) == 2
    assert "input of this run" in error(capsys) and sha(gold) == sha(GOLD)
    log = tmp_path / "log.jsonl"
    shutil.copy(JUDGE_LOG, log)
    argv = ["score", "chimera", "--gold", str(gold), "--pred", str(PRED_MIXED), "--judge", f"replay:{log}"]
    for target in (gold, log):
        assert main(["--db", str(db), *argv, "--run", "x", "--judge-log", str(target), "--force"]) == 2
        assert "input of this command" in error(capsys)
    assert sha(gold) == sha(GOLD) and sha(log) == sha(JUDGE_LOG) and runs(db) == ["base"]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_output_option_replaces_another_database_even_with_force(db, tmp_path, capsys, command):
    """Another Rejudge database (any SQLite file) is not an output, --force or not: `export --out x.db --force`
    typed at the wrong database destroyed the other one's reviews."""
    other = tmp_path / "other.db"
    shutil.copy(db, other)
    before = sha(other)
    for argv in COMMANDS[command]:
        for option in [o for c, o in output_options() if c == command.split()[0] and o != "--figures"]:  # a folder
            status = main(["--db", str(db), *argv, option, str(other), "--force"])
            err = capsys.readouterr().err
            assert status == 2 and "is an SQLite database" in err, (argv, option, err)
    assert sha(other) == before


def test_a_database_behind_another_name_or_a_link_is_still_refused(db, tmp_path, capsys):
    """The guard reads the file's header, not its name: a database renamed `.json`, or reached through a link named
    like an export, is refused all the same."""
    renamed = tmp_path / "audited.json"
    shutil.copy(db, renamed)
    link = tmp_path / "audited.csv"
    link.symlink_to(renamed)
    before = sha(renamed)
    for target in (renamed, link):
        assert main(["--db", str(db), "export", "--run", "base", "--format", "csv", "--out", str(target),
                     "--force"]) == 2
        assert "is an SQLite database" in error(capsys)
    assert sha(renamed) == before and link.is_symlink()


def test_delete_run_never_overwrites_the_exported_file(db, tmp_path, capsys):
    out = tmp_path / "reviews.jsonl"
    out.write_text("other reviews\n")
    assert main(["--db", str(db), "delete-run", "--run", "base", "--exported", str(out)]) == 2
    line = error(capsys)
    assert "the file exists" in line and "--force" not in line  # delete-run's --force deletes reviews
    assert out.read_text() == "other reviews\n" and runs(db) == ["base"]


def test_judge_log_on_dev_full_stores_nothing_and_names_the_file(db, capsys):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    assert main(["--db", str(db), *SCORE, "--run", "new", "--judge-log", "/dev/full", "--force"]) == 2
    line = error(capsys)
    assert "/dev/full" in line and "disk full" in line
    assert runs(db) == ["base"]
    assert main(["--db", str(db), *SCORE, "--run", "new", "--judge-log", "/dev/full"]) == 2
    assert "/dev/full" in error(capsys) and runs(db) == ["base"]


def _enospc(*_: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_judge_log_that_cannot_be_written_stores_nothing(db, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(output_paths.os, "fsync", _enospc)
    log = tmp_path / "run.judge.jsonl"
    assert main(["--db", str(db), *SCORE, "--run", "new", "--judge-log", str(log)]) == 2
    line = error(capsys)
    assert str(log) in line and "disk full" in line and "nothing was written" in line
    assert runs(db) == ["base"] and files(tmp_path) == ["audit.db"]


def test_the_judge_log_appears_with_the_run(db, tmp_path, capsys):
    log = tmp_path / "run.judge.jsonl"
    assert main(["--db", str(db), *SCORE, "--run", "new", "--judge-log", str(log)]) == 0
    assert runs(db) == ["base", "new"] and f"judge log: {log} (" in capsys.readouterr().err
    assert log.stat().st_size > 0 and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_report_cut_by_a_full_disk_leaves_the_old_file(db, tmp_path, capsys, monkeypatch):
    out = tmp_path / "report.html"
    out.write_text("the old report")
    monkeypatch.setattr(output_paths.os, "fsync", _enospc)
    assert main(["--db", str(db), "report", "--run", "base", "--out", str(out), "--force"]) == 2
    line = error(capsys)
    assert str(out) in line and "disk full" in line and "it was not changed" in line
    assert out.read_text() == "the old report" and files(tmp_path) == ["audit.db", "report.html"]


def test_figures_never_replace_without_force(db, tmp_path, capsys):
    figs = tmp_path / "figs"
    figs.mkdir()
    (figs / "table.tex").write_text("my table")
    assert main(["--db", str(db), "report", "--run", "base", "--out", str(tmp_path / "r.html"), "--figures",
                 str(figs)]) == 2
    assert "table.tex" in error(capsys) and (figs / "table.tex").read_text() == "my table"
    assert list(figs.iterdir()) == [figs / "table.tex"]
    assert not (tmp_path / "r.html").exists()  # refused whole: every path is checked before the report is written


def test_write_output_through_a_full_disk_keeps_nothing_half_written(tmp_path, monkeypatch):
    target = tmp_path / "x.json"
    monkeypatch.setattr(output_paths.os, "fsync", _enospc)
    with pytest.raises(AuditError, match="disk full"):
        write_output(target, "data", "--out", OutputRule())
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- a full disk under the database


def test_sqlite_full_is_named_disk_full_and_nothing_lost():
    e = sqlite3.OperationalError("database or disk is full")
    e.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    message, status = cli.explain(e, "/data/audit.db")
    assert status == 2 and "disk full" in message and "nothing stored was lost" in message
    assert "damaged" not in message and "/data/audit.db" in message
    assert disk_full(e, "/data/audit.db")


def test_a_rollback_after_sqlite_rolled_back_keeps_the_real_error(db):
    """SQLite ends the transaction itself on a full disk: ROLLBACK then failed with "no transaction is active" and
    hid the cause (the CLI said "damaged or not a Rejudge database")."""
    conn = open_db(db)
    with pytest.raises(RuntimeError, match="the real cause"), transaction(conn):
        conn.conn.execute("ROLLBACK")  # what SQLite does on SQLITE_FULL
        raise RuntimeError("the real cause")


@pytest.fixture
def full_disk(tmp_path):
    """A 3 MB tmpfs (root only), unmounted afterwards."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    m = tmp_path / "full"
    m.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(m)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (no CAP_SYS_ADMIN)")
    try:
        yield m
    finally:
        subprocess.run(["umount", "-l", str(m)], check=False)


def fill(folder: Path, leave: int) -> None:
    """Fill the file system until `leave` bytes are free."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with open(folder / "filler", "wb") as f:
        f.write(b"\0" * max(0, free - leave))


@pytest.mark.parametrize("leave", [0, 40_000])
def test_reviewing_on_a_full_disk_says_disk_full(base, full_disk, capsys, leave):
    db = full_disk / "audit.db"
    shutil.copy(base, db)
    fill(full_disk, leave)
    assert main(["--db", str(db), "review", "--run", "base", "--decision", "2", "--label", "match",
                 "--reviewer", "ana"]) == 2
    line = error(capsys)
    assert "disk full" in line and "nothing stored was lost" in line and "damaged" not in line, line
    (full_disk / "filler").unlink()
    assert reviews(db) == 1


def test_a_report_on_a_full_disk_leaves_no_truncated_file(db, full_disk, capsys):
    out = full_disk / "report.html"
    fill(full_disk, 20_000)
    assert main(["--db", str(db), "report", "--run", "base", "--out", str(out)]) == 2
    line = error(capsys)
    assert "disk full" in line and str(out) in line
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]


def test_the_new_run_form_says_disk_full_too():
    """The dashboard's form uses the CLI's message (`ui.newrun.input_problem`): no folder named for "the database"."""
    from ui.newrun import input_problem

    e = sqlite3.OperationalError("database or disk is full")
    e.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    message = input_problem(e)
    assert message.startswith("the database: disk full") and "nothing stored was lost" in message
    assert " in /" not in message


def test_a_dangling_link_is_refused_by_name(tmp_path):
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "gone" / "x.json")
    with pytest.raises(AuditError, match="link to a missing file"):
        OutputRule(force=True).check(link)


def test_a_judge_log_whose_rename_fails_takes_the_run_back(db, tmp_path, capsys, monkeypatch):
    def no_rename(*_: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(output_paths.os, "replace", no_rename)
    log = tmp_path / "run.judge.jsonl"
    assert main(["--db", str(db), *SCORE, "--run", "new", "--judge-log", str(log)]) == 2
    assert str(log) in error(capsys) and runs(db) == ["base"] and files(tmp_path) == ["audit.db"]
