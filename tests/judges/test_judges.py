"""Judge specs and the local judges (exact, fuzzy, replay)."""

import pytest

from scoring.errors import InputError, JudgeSpecError
from scoring.families.chimera.questions import SpanQuery, read_span_log_line
from scoring.judges.answer import JudgeStats
from scoring.judges.asking import ask_with_cache
from scoring.judges.local import ExactJudge, FuzzyJudge
from scoring.judges.registry import parse_judge_spec
from scoring.judges.replay import ReplayJudge
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
    plain = ReplayJudge(log, read_span_log_line)  # the plain reader keeps the type as written
    assert [a.value for a in plain.ask_many([q("a", "b", t="inspiration-src"), q("a", "b", t="analogy-src")])] == [
        "missing", "yes"]


def test_replay_rejects_bad_and_conflicting_lines(tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", ['{"paper_id": "d"'])
    with pytest.raises(InputError, match="bad.jsonl:1: invalid JSON"):
        ReplayJudge(bad, read_span_log_line)
    row = {"paper_id": "d", "entity_type": "t", "span1": "a", "span2": "b", "answer": "yes"}
    conflict = write_jsonl(tmp_path / "c.jsonl", [row, row | {"answer": "no"}])
    with pytest.raises(InputError, match="c.jsonl:2: conflicting answers"):
        ReplayJudge(conflict, read_span_log_line)
    with pytest.raises(InputError, match="judge log not found"):
        parse_judge_spec(f"replay:{tmp_path / 'none.jsonl'}", read_log_line=read_span_log_line)


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
    assert "source" not in ReplayJudge(log, read_span_log_line).identity()
    meta = tmp_path / "judge.meta.json"
    meta.write_text('{"judge_spec": "openai-json:m", "prompt_hash": "13bd4d51dfa0", "model": {"alias": "m"}, '
                    '"throughput": {"x": 1}}')
    ident = ReplayJudge(log, read_span_log_line).identity()
    assert ident["source"] == {"judge_spec": "openai-json:m", "prompt_hash": "13bd4d51dfa0", "model": {"alias": "m"}}
    meta.write_text("[1, 2")
    with pytest.raises(InputError, match="metadata is not valid JSON"):
        ReplayJudge(log, read_span_log_line)


def test_judge_kinds_are_listed_once_and_everything_is_derived_from_the_table():
    """The error text, the new-run form's labels, judge-batch's --help and docs/judges.md all come from KINDS."""
    from audit.judge_batch import LLM_FORMS
    from scoring.families import get_task
    from scoring.judges.registry import KINDS, describe, markdown_table, spec_forms
    from tests.conftest import ROOT
    from ui.newrun import judge_choices

    assert markdown_table() in (ROOT / "docs/judges.md").read_text(encoding="utf-8")
    with pytest.raises(JudgeSpecError) as e:
        parse_judge_spec("gpt")
    assert all(k.form in str(e.value) for k in KINDS) and spec_forms() in str(e.value)
    assert LLM_FORMS == " or ".join(k.form for k in KINDS if k.llm) and "openai:MODEL" in LLM_FORMS
    chimera = get_task("chimera")
    choices = judge_choices(chimera, None)
    assert set(choices) == {s.split(":")[0] for s in chimera.judge_specs} | {"replay"}
    by_name = {k.name: k for k in KINDS}
    assert all(label == describe(by_name[name]) for name, label in choices.items())
    replay = describe(by_name["replay"])
    assert judge_choices(get_task("retrieval"), None) == {"gold-only": "gold-only", "replay": replay}


def test_every_kind_builds_from_its_module_with_the_users_options(tmp_path, monkeypatch):
    from scoring.families.chimera.questions import read_log_line
    from scoring.judges.registry import KINDS, JudgeOptions

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    log = write_jsonl(tmp_path / "log.jsonl", [
        {"paper_id": "d", "entity_type": "comb-element", "span1": "a", "span2": "b", "answer": "yes"}])
    args = {"exact": "", "fuzzy": "90", "embed": "0.8", "openai": "m", "openai-json": "m", "replay": str(log)}
    options = JudgeOptions(base_url="http://127.0.0.1:9/v1", api_key="sk-never-recorded", concurrency=3,
                           temperature=0.5)
    assert "sk-never-recorded" not in repr(options)
    for kind in KINDS:
        if kind.name == "embed":
            pytest.importorskip("wordllama")
        spec = f"{kind.name}:{args[kind.name]}" if args[kind.name] else kind.name
        judge = parse_judge_spec(spec, read_log_line=read_log_line, options=options)
        assert judge.spec.partition(":")[0] == kind.name and judge.cacheable == judge.batchable == kind.llm
        assert (judge.temperature == 0.5) == kind.llm  # only an LLM judge samples
        if kind.llm:
            assert judge.concurrency == 3 and "sk-never-recorded" not in str(judge.identity())
    with pytest.raises(JudgeSpecError, match="replay needs a path"):
        parse_judge_spec("replay:", read_log_line=read_log_line)
    with pytest.raises(JudgeSpecError, match="replays its own log format"):
        parse_judge_spec(f"replay:{log}")  # a replay reader is the family's, never a default


def test_an_answer_outside_a_questions_vocabulary_is_named():
    from scoring.judges.answer import Answer
    from scoring.judges.question import answer_problem

    assert answer_problem(q("a", "b"), Answer("yes")) is None and answer_problem(q("a", "b"), Answer("missing")) is None
    assert answer_problem(q("a", "b"), Answer("3")) == "answer '3' is not one this question allows (yes, no)"
