"""Issue 34, silent acceptances: every case of `devtools/hardening_cases/r3_inputs.py`, run through the CLI in-process,
ends in one `error:` line naming the file (and line), exit 2, and nothing stored, or (`expect="ok"`) is the
documented acceptance its check describes; and the same readers still accept the valid inputs the cases were cut
from (so a refusal is the hostile part, not the rest of the file).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from audit.cli import main
from devtools.hardening_cases import r3_inputs
from devtools.hardening_cases.r3_inputs import (
    BASE_RUN,
    chimera_argv,
    gold_csv,
    ideas_file,
    judge_log,
    litx_argv,
    litx_folders,
)


def _case_names() -> list[str]:
    """The cases' names, built once in a scratch folder of pytest's own (ids for parametrize)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return [f"{c.group.removeprefix('r3 inputs: ')}: {c.name}" for c in r3_inputs.cases(Path(d), Path(d))]


CASE_NAMES = _case_names()


def _state(db: Path) -> tuple:
    with sqlite3.connect(db) as c:
        out = (c.execute("SELECT name, n_docs, n_decisions FROM runs ORDER BY name").fetchall(),
               c.execute("SELECT COUNT(*) FROM reviews").fetchone()[0],
               c.execute("SELECT COUNT(*) FROM review_assignments").fetchone()[0])
    c.close()
    return out


def _cli(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse's own refusals
        return e.code if isinstance(e.code, int) else 1


@pytest.fixture(scope="module")
def base_db(tmp_path_factory) -> Path:
    """A database holding run `base` (the cases name it), scored from the cases' own valid CHIMERA inputs."""
    d = tmp_path_factory.mktemp("base")
    gold = gold_csv(d / "gold.csv")
    pred = d / "pred.jsonl"
    pred.write_text(json.dumps({"paper_id": "p1", "relations": r3_inputs.RELATIONS}) + "\n")
    db = d / "base.db"
    argv = [str(a).replace("{db}", str(db)) for a in chimera_argv(gold, pred)]
    assert _cli([*argv, "--run", BASE_RUN]) == 0
    import gc

    gc.collect()  # the CLI's connection closes, so the copies below hold everything (no -wal left behind)
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    return db


@pytest.mark.parametrize("index", range(len(CASE_NAMES)), ids=CASE_NAMES)
def test_each_silent_acceptance_is_a_clear_error_or_documented(index: int, tmp_path: Path, base_db: Path,
                                                                capsys, monkeypatch) -> None:
    case = r3_inputs.cases(tmp_path / "work", base_db)[index]
    db = tmp_path / "case.db"
    shutil.copyfile(base_db, db)
    before = _state(db)
    capsys.readouterr()
    if case.argv is None:  # in-process (a local judge server)
        status, err = case.call(tmp_path / "work", db)
    else:
        for k, v in case.env.items():
            monkeypatch.setenv(k, v)
        status = _cli([a.replace("{db}", str(db)) if isinstance(a, str) else a.decode() for a in case.argv])
        err = capsys.readouterr().err
    if case.expect == "ok":  # a documented acceptance: stored, and as the README says
        assert status == 0, err
        assert case.check is not None and case.check(tmp_path / "work", db, err) is None
        return
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert status == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert lines and (lines[-1].startswith("error:") or ": error:" in lines[-1]), err
    assert _state(db) == before


def _ok(argv: list, db: Path, capsys) -> None:
    status = _cli([str(a).replace("{db}", str(db)) for a in argv])
    assert status == 0, capsys.readouterr().err


def test_the_valid_inputs_the_cases_are_cut_from_still_score(tmp_path: Path, capsys) -> None:
    db = tmp_path / "ok.db"
    gold = gold_csv(tmp_path / "gold.csv")
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"paper_id": "p1", "relations": r3_inputs.RELATIONS}) + "\n")
    _ok(chimera_argv(gold, pred, f"replay:{judge_log(tmp_path / 'log.jsonl')}"), db, capsys)
    g, p = litx_folders(tmp_path / "litx")
    _ok(litx_argv(g, p), db, capsys)
    g, p = litx_folders(tmp_path / "litx-temp", r3_inputs.litx_paper(
        temperature=', "temperature": {"value": 20, "unit": "celsius"}'))
    _ok(litx_argv(g, p), db, capsys)
    ideas = ideas_file(tmp_path / "ideas.jsonl")
    ratings = tmp_path / "abs.jsonl"
    ratings.write_text("".join(json.dumps({"question_id": "q1", "system": s, "criterion": "novelty", "score": 3})
                               + "\n" for s in ("a", "b")))
    _ok(["score", "ideation", "--db", "{db}", "--ideas", str(ideas), "--absolute", str(ratings)], db, capsys)


def test_a_prediction_may_still_give_one_relation_as_an_object(tmp_path: Path, capsys) -> None:
    """Documented in README (CHIMERA inputs): predictions are LLM output, whose one relation often comes as an
    object; gold must give the list."""
    gold = gold_csv(tmp_path / "gold.csv")
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"paper_id": "p1", "relations": {"combination": {"comb-element": ["alpha", "beta"]}}})
                    + "\n")
    _ok(chimera_argv(gold, pred), tmp_path / "ok.db", capsys)
