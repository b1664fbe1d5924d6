"""The store reads retrieval's decisions through `Decisions.fields` and `Decisions.detail_text` (#38: without making
683k `Decision`s and encoding their detail dicts whole); each must give exactly what the decision itself gives."""

from __future__ import annotations

import json
from pathlib import Path

from audit.runs import _positions_by_doc, _rows
from audit.store.database import dumps
from scoring.families.base import canonical_json, content_hash, decision_qkeys
from scoring.families.retrieval.family import RetrievalTask
from scoring.families.retrieval.judge import CandidateReplayJudge, GoldOnlyJudge
from scoring.families.retrieval.review import decide
from tests.families.retrieval.rankings import query

TRICKY = ['plain', 'é ü 漢字 😀', 'quote " backslash \\ slash /', 'tab\tnewline\ncontrol \x01 \x7f', '\u2028 sep']


def _queries() -> list:
    out = []
    for k, text in enumerate(TRICKY):
        q = query([3.0, 2.5, 2.5, 2.0, 1.0, 1e-7], 4, qid=f"q{k}")
        out.append(type(q)(**{**q.__dict__, "candidates_text": tuple(f"{text} {i}" for i in range(6)),
                              "anchor_text": text, "positive": text + "!"}))
    out.append(query(None, 3, qid="unscored", n=5))  # no scores: no "score" key in the detail
    return out


def test_fields_and_detail_text_are_the_decisions_own(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"  # several answers inside one query: the shared part of the text switches
    log.write_text("\n".join(json.dumps(r) for r in [
        {"query_id": "q0", "candidate_id": "c0", "answer": "acceptable", "note": "é"},
        {"query_id": "q0", "candidate_id": "c2", "answer": "garbled"},
        {"query_id": "q1", "candidate_id": "c1", "answer": "not-acceptable"}]) + "\n")
    for judge in (GoldOnlyJudge(), CandidateReplayJudge(str(log))):
        decisions, _ = decide(_queries(), judge)
        listed = list(decisions)
        assert len({d.judge for d in listed}) > (judge.spec != "gold-only")
        for i in [*range(len(listed)), *reversed(range(len(listed)))]:  # in order and at random
            d = listed[i]
            assert decisions.fields(i) == (d.doc, d.kind, d.type, d.left, d.right, d.judge)
            assert decisions.detail_text(i, dumps) == dumps(d.detail)
        # the store's rows and grouping read the same through the fast path as from plain decisions
        assert list(_rows(decisions)) == list(_rows(listed))
        assert _positions_by_doc(decisions) == _positions_by_doc(listed)
        assert decisions.doc_ids() == [d.doc for d in listed]


def test_a_list_of_strings_hashes_as_json_spells_it() -> None:
    for value in (TRICKY, ["lone \ud800"], [], ["x"], ["a", 1], [None, "b"], ["a", ["b"]], ["a", {"k": "v"}]):
        assert canonical_json(value) == json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                                                   default=str)
    task = RetrievalTask()
    asked = [{"kind": "candidate", "type": t, "left": left, "right": "g"} for t in TRICKY for left in ("c0", "é")]
    assert decision_qkeys(task, {}, asked, "gold") == [
        content_hash([task.name, "gold", task.question_key({}, d)]) for d in asked]
    assert decision_qkeys(task, {}, asked, None) == [  # the gold key computed from the payload
        content_hash([task.name, task.gold_key({}), task.question_key({}, d)]) for d in asked]


def test_the_page_cache_is_as_it_was_after_a_run_is_stored(tmp_path: Path) -> None:
    from audit.runs import _page_cache
    from audit.store.database import open_db

    db = open_db(str(tmp_path / "t.db"))
    before = db.conn.execute("PRAGMA cache_size").fetchone()[0]
    with _page_cache(db, 64 * 1024):
        assert db.conn.execute("PRAGMA cache_size").fetchone()[0] == -64 * 1024
    assert db.conn.execute("PRAGMA cache_size").fetchone()[0] == before
