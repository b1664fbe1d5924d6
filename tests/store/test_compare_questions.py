"""Compare judges pairs the decisions of two runs by the question they ask (the key under which one review settles
both), so its "shared" count is the Leaderboard's, and runs whose gold lives inside the predictions (retrieval) can
be compared."""

from __future__ import annotations

import pytest

from audit.board.store import create_board
from audit.board.table import board_table
from audit.outputs.compare import comparable_runs, compare_runs
from audit.store.database import open_db
from tests.conftest import copy_of

PAIRS = [("demo-litxbench-drop-meas30", "demo-litxbench-process-perturb"),
         ("demo-retrieval-bm25", "demo-retrieval-wordllama"),
         ("demo-chimera-fuzzy-mixed", "demo-chimera-fuzzy-terse")]


@pytest.fixture
def demo(demo_template, tmp_path):
    db = open_db(copy_of(demo_template, tmp_path / "d.db"))
    yield db
    db.conn.close()


def _questions(db, run: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for qkey, i in db.execute("SELECT d.qkey, d.id FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? "
                              "AND d.qkey IS NOT NULL", [run]):
        out.setdefault(qkey, []).append(i)
    return out


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_shared_is_the_questions_both_ask_and_the_boards_count(demo, a, b):
    res = compare_runs(demo, a, b, n_resamples=50)
    qa, qb = _questions(demo, a), _questions(demo, b)
    both = qa.keys() & qb.keys()
    assert res["shared"] == len(both) > 0
    assert res["only_a"] == sum(len(v) for k, v in qa.items() if k not in both)
    assert res["only_b"] == sum(len(v) for k, v in qb.items() if k not in both)
    labels = dict(demo.execute("SELECT id, judge_label FROM decisions"))
    assert len(res["differ"]) == sum(labels[qa[k][0]] != labels[qb[k][0]] for k in both)
    create_board(demo, "pair", [a, b])
    assert board_table(demo, "pair")["shared_questions"] == res["shared"]  # the two pages say one number
    assert b in comparable_runs(demo, a) and a in comparable_runs(demo, b)


def test_runs_on_different_gold_are_not_compared(demo):
    assert "demo-chimera-fuzzy-mixed" not in comparable_runs(demo, "demo-retrieval-bm25")
    assert not [r for r in comparable_runs(demo, "demo-ideation-si2024-humans")]
