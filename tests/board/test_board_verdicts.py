"""Boards on judged items (issue 41: boards work on the verdicts family too). Two runs imported from the same real
Inspect log ask the same questions of the same samples, so a review made in one settles it in both and the board
shows both systems move; a log of another eval (other samples) is refused as another gold."""

from __future__ import annotations

import json
from pathlib import Path

from audit.cli import main
from tests.conftest import ROOT

INSPECT = ROOT / "data" / "verdicts" / "inspect_qa.eval"
PROMPTFOO = ROOT / "data" / "verdicts" / "promptfoo_results.json"


def _show(db: str, capsys) -> dict:
    assert main(["--db", db, "board", "show", "qa"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_review_in_one_imported_run_moves_both_systems_of_the_board(tmp_path: Path, capsys) -> None:
    db = str(tmp_path / "v.db")
    for run in ("grader-a", "grader-b"):
        assert main(["--db", db, "import", "inspect", str(INSPECT), "--run", run]) == 0
    assert main(["--db", db, "board", "create", "qa", "--runs", "grader-a,grader-b"]) == 0
    capsys.readouterr()
    before = _show(db, capsys)
    metric = before["metric"]
    assert before["family"] == "verdicts" and before["shared_questions"] > 0
    assert [s["audited"][metric] for s in before["systems"]] == [s["judge_only"][metric] for s in before["systems"]]

    assert main(["--db", db, "decisions", "--run", "grader-a"]) == 0
    decisions = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    wrong = next(d for d in decisions if d["judge"] == "I")  # overrule an "incorrect" verdict: the score must rise
    assert main(["--db", db, "review", "--run", "grader-a", "--decision", str(wrong["id"]), "--label", "C",
                 "--reviewer", "ana"]) == 0
    capsys.readouterr()
    after = _show(db, capsys)
    for b, a in zip(before["systems"], after["systems"], strict=True):
        assert a["judge_only"] == b["judge_only"]
        assert a["audited"][metric] > b["audited"][metric], a["run"]  # made in grader-a, counted in both

    assert main(["--db", db, "import", "promptfoo", str(PROMPTFOO), "--run", "other-eval"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "board", "create", "mixed", "--runs", "grader-a,other-eval"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "other-eval" in err
