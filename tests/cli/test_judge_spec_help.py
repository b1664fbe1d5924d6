"""`score FAMILY --help` offers only the judges the family can take, and a stored improved judge scores runs of the
family it was fitted for only."""

from __future__ import annotations

import pytest

from audit.cli import main
from tests.conftest import copy_of


def _help(family: str, capsys) -> str:
    with pytest.raises(SystemExit):
        main(["score", family, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_litxbench_offers_no_replay_and_chimera_does(capsys):
    litx = _help("litxbench", capsys)
    assert "offered: official (the judge is a fixed algorithm" in litx and "replay:PATH" not in litx
    assert "improved:ID" not in litx
    chim = _help("chimera", capsys)
    assert "replay:PATH with a judge log" in chim and "improved:ID" in chim


def test_an_improved_judge_of_another_family_is_refused_by_name(demo_template, tmp_path, capsys):
    db = copy_of(demo_template, tmp_path / "d.db")
    from audit.store.database import open_db

    conn = open_db(db)
    imp, = conn.execute("SELECT i.id FROM judge_improvements i JOIN runs r ON r.id = i.run_id "
                        "WHERE r.task = 'chimera' ORDER BY i.id LIMIT 1").fetchone()
    conn.conn.close()
    assert main(["--db", str(db), "score", "litxbench", "--gold", "data/litxbench/gold", "--pred",
                 "data/litxbench/pred_drop_meas30", "--judge", f"improved:{imp}", "--run", "x"]) == 2
    err = capsys.readouterr().err
    assert f"--judge improved:{imp}: that judge was fitted on run " in err and "of family chimera; this is a " \
           "litxbench run" in err, err
