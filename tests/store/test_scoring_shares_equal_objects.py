"""Scoring keeps one object for equal values it holds per document, decision or judge-log line (#38: at 100,000
CHIMERA abstracts, a counts dict per document, two answer dicts and a `sides` dict per decision and an Answer per
log line held 720 MB of `score`'s 1,281 MiB peak):

- `audit.runs._shared`: documents whose counts spell the same JSON share one counts object;
- `scoring.families.chimera.scorer._shared_answer` and `_SIDES`: a decision's answer dicts and sides;
- `scoring.judges.replay.one_of_equal`: a replayed judge log's equal answers.

Invariant, for every CHIMERA demo run (replayed logs with and without rationales, the fuzzy judge's float scores) and
the first demo run of every other family: the stored run (run row, documents, decisions, counts index, audit state)
is the same, column for column, as the run scored with nothing shared; and with sharing, equal counts are one
object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audit.runs as runs
import scoring.families.chimera.scorer as chimera_scorer
import scoring.judges.replay as replay
from audit.demo import demo_runs
from audit.runs import score_run
from audit.store.database import dumps, open_db
from scoring.judges.answer import answer_dict

CASES = {d.name: (task, d) for task, d in demo_runs() if task == "chimera"}
CASES.update({d.name: (task, d) for task, d in reversed(demo_runs()) if task != "chimera"})
FIRST_OTHERS = {task: name for name, (task, _) in CASES.items() if task != "chimera"}
RUNS = sorted(n for n, (task, _) in CASES.items() if task == "chimera" or FIRST_OTHERS[task] == n)
VOLATILE = {"id", "run_id", "created"}


def _stored(path: Path, run: str) -> dict[str, list[tuple]]:
    db = open_db(path)
    try:
        run_id = db.execute("SELECT id FROM runs WHERE name = ?", [run]).fetchone()[0]
        out = {}
        for table, key in (("runs", "id"), ("documents", "run_id"), ("decisions", "run_id"),
                           ("document_counts", "run_id"), ("audit_state", "run_id")):
            cur = db.execute(f"SELECT * FROM {table} WHERE {key} = ? ORDER BY rowid", [run_id])
            keep = [i for i, d in enumerate(cur.description) if d[0] not in VOLATILE]
            out[table] = [tuple(row[i] for i in keep) for row in cur.fetchall()]
        return out
    finally:
        db.conn.close()


@pytest.mark.parametrize("run", RUNS)
def test_shared_objects_store_the_same_run_as_objects_of_their_own(run, tmp_path, monkeypatch):
    task, demo = CASES[run]
    seen: dict[str, set[int]] = {}
    real = runs._shared

    def recording(shared, counts):
        text, kept = real(shared, counts)
        seen.setdefault(text, set()).add(id(kept))
        return text, kept

    monkeypatch.setattr(runs, "_shared", recording)
    score_run(open_db(tmp_path / "shared.db"), task, demo.inputs, demo.judge, run=run)
    assert seen and all(len(ids) == 1 for ids in seen.values())  # one counts object per distinct JSON

    monkeypatch.setattr(runs, "_shared", lambda shared, counts: (dumps(counts), counts))
    monkeypatch.setattr(chimera_scorer, "_shared_answer", lambda equal, answer: answer_dict(answer))
    monkeypatch.setattr(chimera_scorer, "_SIDES", {k: {"left": list(v["left"]), "right": list(v["right"])}
                                                   for k, v in chimera_scorer._SIDES.items()})
    monkeypatch.setattr(replay, "one_of_equal", lambda equal, answer: answer)
    score_run(open_db(tmp_path / "own.db"), task, demo.inputs, demo.judge, run=run)

    shared, own = _stored(tmp_path / "shared.db", run), _stored(tmp_path / "own.db", run)
    assert all(own[table] for table in ("runs", "documents", "document_counts", "audit_state"))
    assert shared == own


def test_equal_answers_share_one_dict_but_not_across_json_spellings():
    from scoring.judges.answer import Answer

    equal: dict = {}
    one = chimera_scorer._shared_answer(equal, Answer("yes", raw="yes"))
    assert chimera_scorer._shared_answer(equal, Answer("yes", raw="yes")) is one
    assert chimera_scorer._shared_answer(equal, Answer("yes", raw="Yes")) is not one
    as_int, as_float = (chimera_scorer._shared_answer(equal, Answer("yes", score=s)) for s in (1, 1.0))
    assert dumps(as_int) == '{"value":"yes","score":1}' and dumps(as_float) == '{"value":"yes","score":1.0}'
    kept: dict = {}
    a, b = replay.one_of_equal(kept, Answer("no", score=1)), replay.one_of_equal(kept, Answer("no", score=1.0))
    assert a is not b and type(b.score) is float
    assert replay.one_of_equal(kept, Answer("no", score=1.0)) is b


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3, width=32),
                    st.sampled_from(["yes", "no", "Yes", ""]))
_COUNTS = st.recursive(st.dictionaries(st.sampled_from("abc"), st.one_of(st.integers(0, 3), st.floats(0, 3))),
                       lambda inner: st.dictionaries(st.sampled_from("abcd"), inner), max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(_COUNTS, max_size=12), st.lists(st.tuples(st.sampled_from(["yes", "no", "invalid"]),
                                                          st.sampled_from([None, "yes", "no", "Yes"]), _SCALAR),
                                                max_size=12))
def test_a_shared_object_always_spells_what_its_own_would(counts_list, answers):
    """For any counts and answers: what each sharing rule hands back spells, in JSON, exactly what the value it was
    given spells (so storing the shared object stores the same text), and equal spellings are one object."""
    from scoring.judges.answer import Answer

    seen: dict = {}
    for counts in counts_list:
        text, kept = runs._shared(seen, counts)
        assert text == dumps(counts) == dumps(kept)
        assert runs._shared(seen, json.loads(text))[1] is kept
    equal: dict = {}
    kept_answers: dict = {}
    for value, raw, score in answers:
        score = score if type(score) in (int, float) else None
        # each score also as its twin of the other type (1 and 1.0): equal, but spelled apart
        twins = [score] if score is None else [score, float(score)] + ([int(score)] if score == int(score) else [])
        for s in twins:
            answer = Answer(value, raw=raw, score=s)
            assert dumps(chimera_scorer._shared_answer(equal, answer)) == dumps(answer_dict(answer))
            one = replay.one_of_equal(kept_answers, answer)
            assert dumps(answer_dict(one)) == dumps(answer_dict(answer))
            assert replay.one_of_equal(kept_answers, Answer(value, raw=raw, score=s)) is one
