"""Retrieval's decisions are made when read (#38): scoring 683k of them held every detail dict at once (300 MB)."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from devtools.generate_retrieval import generate_retrieval
from scoring.decisions import Decision
from scoring.families.retrieval.family import RetrievalTask
from scoring.families.retrieval.judge import GoldOnlyJudge
from scoring.families.retrieval.review import _interned, decide
from scoring.judges.answer import Answer


def _queries(tmp_path: Path, n: int = 200) -> list:
    generate_retrieval(n, tmp_path, seed=3)
    return RetrievalTask().load({"pred": str(tmp_path / "rankings.jsonl")}).docs


def test_the_decisions_hold_no_detail_dicts(tmp_path: Path) -> None:
    queries = _queries(tmp_path)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        decisions, _ = decide(queries, GoldOnlyJudge())
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(decisions) > 5_000
    # a Decision with its detail dict is ~600 B; what stays is the (query, position) list and one answer pointer
    assert held / len(decisions) < 150, f"{held / len(decisions):.0f} B per decision held"


def test_decisions_read_the_same_every_time_and_as_a_list(tmp_path: Path) -> None:
    queries = _queries(tmp_path, 30)
    decisions, _ = decide(queries, GoldOnlyJudge())
    listed = list(decisions)
    assert all(isinstance(d, Decision) for d in listed)
    assert [decisions[i] for i in range(len(decisions))] == listed == decisions[:]
    assert [d.detail for d in decisions] == [d.detail for d in listed]
    assert decisions[-1] == listed[-1] and decisions[2:5] == listed[2:5]
    # equal answers share one answer dict, as the eager list did
    assert len({id(d.detail["answer"]) for d in listed}) == 1


def test_interning_keeps_every_answer_and_its_order() -> None:
    a, b = Answer("yes", rationale="r"), Answer("no")
    got = _interned([a, Answer("yes", rationale="r"), b, Answer("no")])
    assert got == [a, a, b, b] and got[1] is a and got[3] is b
