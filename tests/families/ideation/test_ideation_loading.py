"""Ideation inputs: ideas, absolute ratings and pairwise verdicts load as given and fail with FILE:LINE: reason."""

import json

import pytest

from scoring.errors import InputError
from scoring.families.ideation.load import load_absolute, load_ideas, load_judge_log, load_pairwise
from scoring.families.ideation.model import pools_of
from tests.conftest import write_jsonl

IDEAS = [
    {"question_id": "q1", "question": "How to X?", "system": "ours", "idea": "Idea A", "idea_id": "a1"},
    {"question_id": "q1", "question": "How to X?", "system": "base", "idea": "Idea B"},
    {"question_id": "q2", "question": "How to Y?", "system": "ours", "idea": "Idea C"},
]


@pytest.fixture
def pools(tmp_path):
    return pools_of(load_ideas(write_jsonl(tmp_path / "ideas.jsonl", IDEAS)))


def test_ideas_group_by_question_in_input_order_and_keep_extra_fields(tmp_path):
    qs = load_ideas(write_jsonl(tmp_path / "i.jsonl", IDEAS))
    assert [q.question_id for q in qs] == ["q1", "q2"]
    assert qs[0].systems == ("ours", "base") and qs[1].systems == ("ours",)
    assert qs[0].ideas[0].extra == {"idea_id": "a1"} and qs[0].ideas[0].line == 1


def test_ids_stay_strings(tmp_path):
    qs = load_ideas(write_jsonl(tmp_path / "i.jsonl", [{"question_id": "2103.0771", "question": "q", "system": "s",
                                                          "idea": "i"}]))
    assert qs[0].question_id == "2103.0771"


@pytest.mark.parametrize("lines, where, reason", [
    ([IDEAS[0], IDEAS[0]], 2, "duplicate idea"),
    ([IDEAS[0], {**IDEAS[1], "question": "Other text"}], 2, "different question text"),
    ([{**IDEAS[0], "system": 3}], 1, "field 'system' must be a string, got a number"),
    ([IDEAS[0], {k: v for k, v in IDEAS[1].items() if k != "idea"}], 2, "missing field 'idea'"),
    ([IDEAS[0], "{not json"], 2, "invalid JSON"),
    (["[1, 2]"], 1, "expected a JSON object, got a list"),
    ([{**IDEAS[0], "question_id": "  "}], 1, "field 'question_id' is empty"),
    # a 50 MB idea was stored (93 MB of database) where CHIMERA refuses a long span (scoring.limits)
    ([IDEAS[0], {**IDEAS[1], "idea": "x" * 1_000_001}], 2, "field 'idea' is 1,000,001 characters long"),
])
def test_bad_ideas_name_file_line_and_reason(tmp_path, lines, where, reason):
    p = write_jsonl(tmp_path / "i.jsonl", lines)
    with pytest.raises(InputError) as e:
        load_ideas(p)
    assert e.value.line == where and reason in e.value.reason
    assert str(e.value).startswith(f"{p}:{where}: ")


def test_empty_or_missing_ideas_file(tmp_path):
    with pytest.raises(InputError, match="no ideas"):
        load_ideas(write_jsonl(tmp_path / "i.jsonl", []))
    with pytest.raises(InputError, match="file not found"):
        load_ideas(tmp_path / "nope.jsonl")


def test_ratings_accept_1_to_5_and_null(tmp_path, pools):
    p = write_jsonl(tmp_path / "a.jsonl", [
        {"question_id": "q1", "system": "ours", "criterion": "novelty", "score": 5, "rationale": "new", "raw": "..."},
        {"question_id": "q1", "system": "base", "criterion": "novelty", "score": None},
    ])
    r = load_absolute(p, pools)
    assert [(x.system, x.score, x.rationale) for x in r] == [("ours", 5, "new"), ("base", None, None)]


RATING = {"question_id": "q1", "system": "ours", "criterion": "novelty", "score": 3}


@pytest.mark.parametrize("bad, reason", [
    ({**RATING, "question_id": "q9"}, "unknown question 'q9'"),
    ({**RATING, "system": "other"}, "unknown system 'other' for question 'q1'"),
    ({**RATING, "question_id": "q2", "system": "base"}, "unknown system 'base' for question 'q2'"),
    ({**RATING, "score": 6}, "score 6 is outside 1-5"),
    ({**RATING, "score": 0}, "score 0 is outside 1-5"),
    ({**RATING, "score": 3.5}, "must be an integer 1-5 or null"),
    ({**RATING, "score": "3"}, "must be an integer 1-5 or null, got a string"),
    ({**RATING, "score": True}, "must be an integer 1-5 or null, got a boolean"),
    ({k: v for k, v in RATING.items() if k != "score"}, "missing field 'score'"),
    ({**RATING, "rationale": 4}, "field 'rationale' must be a string"),
    (RATING, "duplicate rating"),
])
def test_bad_ratings(tmp_path, pools, bad, reason):
    p = write_jsonl(tmp_path / "a.jsonl", [RATING, bad] if bad is RATING else [
        {**RATING, "criterion": "feasibility"}, bad])
    with pytest.raises(InputError) as e:
        load_absolute(p, pools)
    assert e.value.line == 2 and reason in e.value.reason, e.value


CALL = {"question_id": "q1", "criterion": "novelty", "first": "ours", "second": "base", "verdict": "first"}


def test_verdicts_keep_the_order_shown(tmp_path, pools):
    p = write_jsonl(tmp_path / "p.jsonl", [CALL, {**CALL, "first": "base", "second": "ours", "verdict": "TIE"}])
    v = load_pairwise(p, pools)
    assert [(x.first, x.second, x.verdict, x.winner) for x in v] == [("ours", "base", "first", "ours"),
                                                                     ("base", "ours", "tie", "tie")]


@pytest.mark.parametrize("bad, reason", [
    ({**CALL, "second": "ghost"}, "'second' names 'ghost', which has no idea in the pool of question 'q1'"),
    ({**CALL, "question_id": "q2", "second": "base"}, "no idea in the pool of question 'q2'"),
    ({**CALL, "first": "base"}, "cannot be compared with itself"),
    ({**CALL, "verdict": "both"}, "verdict 'both' is not one of"),
    ({**CALL, "verdict": 1}, "field 'verdict' must be a string"),
    ({**CALL, "question_id": "zz"}, "unknown question 'zz'"),
    (CALL, "duplicate call"),
])
def test_bad_verdicts(tmp_path, pools, bad, reason):
    p = write_jsonl(tmp_path / "p.jsonl", [CALL, bad])
    with pytest.raises(InputError) as e:
        load_pairwise(p, pools)
    assert e.value.line == 2 and reason in e.value.reason, e.value


def test_line_numbers_count_blank_lines_and_survive_unicode_line_separators(tmp_path, pools):
    p = tmp_path / "a.jsonl"
    good = json.dumps({**RATING, "rationale": "one\u2028two"}, ensure_ascii=False)
    p.write_text(good + "\n\n" + json.dumps({**RATING, "score": 9}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_absolute(p, pools)
    assert e.value.line == 3


def test_judge_log_mixes_ratings_and_calls(tmp_path, pools):
    p = write_jsonl(tmp_path / "log.jsonl", [RATING, CALL])
    ratings, verdicts = load_judge_log(p, pools)
    assert len(ratings) == 1 and len(verdicts) == 1
    with pytest.raises(InputError, match="needs 'score'"):
        load_judge_log(write_jsonl(tmp_path / "bad.jsonl", [{"question_id": "q1"}]), pools)
