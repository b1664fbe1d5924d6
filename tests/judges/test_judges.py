"""Judge specs and the local judges (exact, fuzzy, replay)."""

import pytest

from scoring.errors import InputError, JudgeSpecError
from scoring.judges.base import (
    ExactJudge,
    FuzzyJudge,
    JudgeStats,
    ReplayJudge,
    SpanQuery,
    ask_with_cache,
    parse_judge_spec,
    read_span_log_line,
)
from tests.conftest import write_jsonl


def q(a: str, b: str, doc: str = "d", t: str = "comb-element") -> SpanQuery:
    return SpanQuery(doc, "text", t, a, b)


def test_exact_is_case_and_whitespace_insensitive():
    j = ExactJudge()
    assert [a.value for a in j.ask_many([q("Back  Translation", "back translation"), q("a b", "ab")])] == ["yes", "no"]


def test_fuzzy_threshold_and_spec():
    assert parse_judge_spec("fuzzy").spec == "fuzzy:85"
    j = parse_judge_spec("fuzzy:90")
    assert isinstance(j, FuzzyJudge) and j.threshold == 90
    a, b = j.ask_many([q("multilingual training", "multi-lingual training"), q("graph", "transformer")])
    assert a.value == "yes" and 0.9 <= a.score <= 1
    assert b.value == "no"
    with pytest.raises(JudgeSpecError, match="between 0 and 100"):
        parse_judge_spec("fuzzy:120")
    with pytest.raises(JudgeSpecError, match="must be a number"):
        parse_judge_spec("fuzzy:high")


def test_unknown_spec():
    with pytest.raises(JudgeSpecError, match="unknown judge spec 'gpt'"):
        parse_judge_spec("gpt")


def test_replay_answers_and_missing_pairs(tmp_path):
    log = write_jsonl(tmp_path / "log.jsonl", [
        {"paper_id": "d", "entity_type": "analogy-src", "span1": "a", "span2": "b", "answer": "Yes"},
        {"paper_id": "d", "entity_type": "inspiration-src", "span1": "b", "span2": "a", "answer": "maybe"},
    ])
    def read_line(rec, path, lineno):  # a family's line reader: here old type names are renamed
        return read_span_log_line(rec, path, lineno, lambda t: t.replace("analogy", "inspiration"))

    j = ReplayJudge(log, read_line)
    got = j.ask_many([q("a", "b", t="inspiration-src"), q("b", "a", t="inspiration-src"), q("a", "c")])
    assert [a.value for a in got] == ["yes", "invalid", "missing"]
    assert got[1].raw == "maybe"
    assert "not in judge log" in got[2].rationale
    plain = ReplayJudge(log)  # the default reader keeps the type as written
    assert [a.value for a in plain.ask_many([q("a", "b", t="inspiration-src"), q("a", "b", t="analogy-src")])] == [
        "missing", "yes"]


def test_replay_rejects_bad_and_conflicting_lines(tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", ['{"paper_id": "d"'])
    with pytest.raises(InputError, match="bad.jsonl:1: invalid JSON"):
        ReplayJudge(bad)
    row = {"paper_id": "d", "entity_type": "t", "span1": "a", "span2": "b", "answer": "yes"}
    conflict = write_jsonl(tmp_path / "c.jsonl", [row, row | {"answer": "no"}])
    with pytest.raises(InputError, match="c.jsonl:2: conflicting answers"):
        ReplayJudge(conflict)
    with pytest.raises(InputError, match="judge log not found"):
        parse_judge_spec(f"replay:{tmp_path / 'none.jsonl'}")


class CountingJudge(ExactJudge):
    """An exact judge that pretends to be expensive, to exercise the cache."""

    cacheable = True
    spec = "counting"

    def __init__(self) -> None:
        self.asked = 0

    def ask_many(self, queries, progress=None):
        self.asked += len(queries)
        return super().ask_many(queries, progress)


class DictCache:
    def __init__(self) -> None:
        self.store = {}

    def get_many(self, keys):
        return {k: self.store[k] for k in keys if k in self.store}

    def put_many(self, answers):
        self.store.update(answers)


def test_cache_means_each_request_is_asked_once_ever():
    judge, cache = CountingJudge(), DictCache()
    queries = [q("a", "a"), q("a", "b")]
    s1 = JudgeStats()
    ask_with_cache(judge, queries, cache, s1)
    s2 = JudgeStats()
    again = ask_with_cache(judge, queries, cache, s2)
    assert judge.asked == 2 and (s1.requests, s2.requests, s2.cached) == (2, 0, 2)
    assert [a.value for a in again] == ["yes", "no"] and all(a.cached for a in again)


def test_replay_identity_names_the_judge_from_the_logs_metadata(tmp_path):
    row = {"paper_id": "d", "entity_type": "t", "span1": "a", "span2": "b", "answer": "yes"}
    log = write_jsonl(tmp_path / "judge.jsonl", [row])
    assert "source" not in ReplayJudge(log).identity()
    meta = tmp_path / "judge.meta.json"
    meta.write_text('{"judge_spec": "openai-json:m", "prompt_hash": "13bd4d51dfa0", "model": {"alias": "m"}, '
                    '"throughput": {"x": 1}}')
    ident = ReplayJudge(log).identity()
    assert ident["source"] == {"judge_spec": "openai-json:m", "prompt_hash": "13bd4d51dfa0", "model": {"alias": "m"}}
    meta.write_text("[1, 2")
    with pytest.raises(InputError, match="metadata is not valid JSON"):
        ReplayJudge(log)
