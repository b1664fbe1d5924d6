"""`python -m audit board ...` through `audit.cli.main`: create, show, export, delete, list; one-line errors."""

from __future__ import annotations

import json

import pytest

from audit.cli import main
from audit.store.database import db_file


def _db_path(bdb) -> str:
    return db_file(bdb)


def _err(capsys) -> str:
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and len(err.strip().splitlines()) == 1, err
    return lines[0]


def test_create_show_list_export_delete(bdb, tmp_path, capsys):
    db = _db_path(bdb)
    assert main(["board", "create", "paper", "--runs", "a,b,c", "--db", db]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == ["a", "b", "c"]
    assert main(["--db", db, "board", "show", "paper", "--policy", "majority"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["policy"] == "majority" and [s["run"] for s in shown["systems"]] == ["a", "b", "c"]
    for key in ("run", "judge_only", "audited", "estimate", "bias", "rank_judge", "rank_audited", "rank_set"):
        assert all(key in s for s in shown["systems"]), key
    assert {"shared_questions", "pairs", "policy", "reviewed", "interval", "settled"} <= set(shown)
    assert main(["--db", db, "board", "list"]) == 0
    assert [b["name"] for b in json.loads(capsys.readouterr().out)] == ["paper"]
    out = tmp_path / "t.csv"
    assert main(["--db", db, "board", "export", "paper", "--format", "csv", "--out", str(out)]) == 0
    assert out.read_text().startswith("system,run,metric,")
    assert capsys.readouterr().err.strip() == f"wrote {out}"
    assert main(["--db", db, "board", "export", "paper", "--format", "csv", "--out", str(out)]) == 2
    assert "the file exists" in _err(capsys)
    assert main(["--db", db, "board", "export", "paper", "--format", "latex", "--out", str(out), "--force"]) == 0
    assert "\\toprule" in out.read_text()
    assert main(["--db", db, "board", "delete", "paper"]) == 0
    assert json.loads(capsys.readouterr().out) == {"deleted": "paper"}
    assert main(["--db", db, "board", "show", "paper"]) == 2
    assert "unknown board 'paper'" in _err(capsys)


@pytest.mark.parametrize(("argv", "message"), [
    (["board", "create", "t", "--runs", "a,other-gold"], "run 'other-gold' is not on the gold of run 'a'"),
    (["board", "create", "t", "--runs", "a,zz"], "unknown run 'zz'"),
    (["board", "export", "nope", "--format", "json", "--out", "X"], "unknown board 'nope'"),
    (["board", "delete", "nope"], "unknown board 'nope'"),
])
def test_errors_are_one_line_with_exit_2(bdb, tmp_path, capsys, argv, message):
    argv = [str(tmp_path / "x.json") if a == "X" else a for a in argv]
    assert main(["--db", _db_path(bdb), *argv]) == 2
    assert message in capsys.readouterr().err


def test_export_never_writes_over_the_database_or_a_runs_input(bdb, tmp_path, capsys):
    import shutil

    from tests.conftest import GOLD

    db = _db_path(bdb)
    assert main(["--db", db, "board", "create", "t", "--runs", "a,b"]) == 0
    before = open(db, "rb").read()  # noqa: SIM115
    assert main(["--db", db, "board", "export", "t", "--format", "csv", "--out", db, "--force"]) == 2
    assert "the database" in _err(capsys)
    gold = tmp_path / "gold.csv"
    shutil.copy(GOLD, gold)
    assert main(["--db", db, "board", "export", "t", "--format", "csv", "--out", str(gold), "--force"]) == 2
    assert "input" in _err(capsys) and gold.read_bytes() == GOLD.read_bytes()
    assert len(open(db, "rb").read()) >= len(before) // 2  # noqa: SIM115 - the database is still there


def test_an_empty_run_name_is_an_argument_error(bdb, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--db", _db_path(bdb), "board", "create", "t", "--runs", "a,,b"])
    assert e.value.code == 2 and "give run names separated by commas" in capsys.readouterr().err
