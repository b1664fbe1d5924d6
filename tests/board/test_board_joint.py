"""The board's one sampling plan wired into boards (issue 36 §3): `board plan` / `board queue --next` through the
CLI, `board show` reading the plan's estimates, and a plan that never outlives its board or one of its runs."""

from __future__ import annotations

import json

from audit.board.joint import board_plan
from audit.board.store import create_board, delete_board
from audit.board.table import board_table
from audit.cli import main
from audit.runs import delete_run
from audit.store.database import db_file


def _db_path(bdb) -> str:
    return db_file(bdb)


def _err(capsys) -> str:
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and len(err.strip().splitlines()) == 1, err
    return lines[0]


def test_plan_queue_and_show_through_the_cli(bdb, capsys):
    db = _db_path(bdb)
    assert main(["--db", db, "board", "create", "paper", "--runs", "a,b,c"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "board", "plan", "paper", "--seed", "2"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["runs"] == ["a", "b", "c"] and plan["seed"] == 2 and plan["blocks"] > 0
    assert main(["--db", db, "board", "plan", "paper"]) == 2
    assert "already has a sampling plan" in _err(capsys)
    assert main(["--db", db, "board", "queue", "paper", "--next", "--focus", "c"]) == 0
    pick = json.loads(capsys.readouterr().out)
    assert pick["focus"] == "c" and pick["review_in"] and pick["more_text"]
    assert main(["--db", db, "board", "queue", "paper"]) == 2
    assert "--next" in _err(capsys)
    assert main(["--db", db, "board", "show", "paper"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["interval"] == "joint plan" and isinstance(shown["more_documents"], int)
    for s in shown["systems"]:
        assert "ci" in s["estimate"][shown["metric"]] and "anytime" in s["estimate"][shown["metric"]]
    assert main(["--db", db, "board", "create", "ideas-board", "--runs", "ideas"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "board", "plan", "ideas-board"]) == 0  # systems inside one run: the run's own plan
    assert json.loads(capsys.readouterr().out)["run"] == "ideas"
    assert main(["--db", db, "board", "plan", "ideas-board"]) == 2
    assert "the board reads that plan" in _err(capsys)


def test_a_plan_goes_with_its_board_and_with_its_runs(bdb):
    create_board(bdb, "paper", ["a", "c"])
    assert main(["--db", _db_path(bdb), "board", "plan", "paper"]) == 0
    assert board_plan(bdb, "paper") is not None
    delete_board(bdb, "paper")
    assert board_plan(bdb, "paper") is None
    create_board(bdb, "paper", ["a", "b"])  # the same name, other runs: no plan of the old board shows
    assert board_table(bdb, "paper")["interval"] == "none"
    assert main(["--db", _db_path(bdb), "board", "plan", "paper"]) == 0
    assert main(["--db", _db_path(bdb), "board", "queue", "paper", "--next"]) == 0
    assert bdb.execute("SELECT COUNT(*) FROM board_draws WHERE board = 'paper'").fetchone()[0] == 1
    delete_run(bdb, "b")
    assert board_plan(bdb, "paper") is None
    assert bdb.execute("SELECT COUNT(*) FROM board_draws").fetchone()[0] == 0
