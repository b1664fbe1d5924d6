"""The verdicts family on hand-written items of every scheme: the unreviewed aggregate is the mean of the recorded
values (the framework's own), a review moves a verdict to its label's worth, and bad items name file and line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import decisions
from scoring.errors import InputError
from scoring.families.verdicts.family import VerdictsTask
from scoring.families.verdicts.model import CPI, FAILED, PASS_FAIL, PASSED, SCORE

ITEMS = [
    {"id": "a", "input": "2+2?", "output": "4", "target": ["4"],
     "verdicts": [{"scorer": "grader", "scheme": CPI, "value": "P", "explanation": "half right"},
                  {"scorer": "rubric", "scheme": PASS_FAIL, "value": True},
                  {"scorer": "geval", "scheme": SCORE, "value": 0.7, "threshold": 0.5}]},
    {"id": "b", "input": "capital of France?", "output": "Lyon", "target": "Paris",
     "verdicts": [{"scorer": "grader", "scheme": CPI, "value": "C"},
                  {"scorer": "rubric", "scheme": PASS_FAIL, "value": False},
                  {"scorer": "geval", "scheme": SCORE, "value": 0.2, "threshold": 0.5}]},
    {"id": "c", "input": "?", "output": "", "target": [],
     "verdicts": [{"scorer": "grader", "scheme": CPI, "value": "N"},
                  {"scorer": "geval", "scheme": SCORE, "value": 0.9, "threshold": 0.5}]},
]


def write(tmp_path: Path, items: list[dict]) -> str:
    p = tmp_path / "items.jsonl"
    p.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return str(p)


def test_unreviewed_means_are_the_recorded_values_and_reviews_move_them(tmp_path):
    db = open_db(tmp_path / "a.db")
    row = score_run(db, "verdicts", {"items": write(tmp_path, ITEMS)}, "recorded", run="r")
    m = row["original_metrics"]
    assert math.isclose(m["scorers"]["grader"]["mean"], (0.5 + 1 + 0) / 3)  # P = 0.5, C = 1, N = 0
    assert m["scorers"]["rubric"] == {"n": 2, "mean": 0.5}
    assert math.isclose(m["scorers"]["geval"]["mean"], (0.7 + 0.2 + 0.9) / 3)  # the raw scores, not pass/fail
    assert m["headline"] == m["scorers"]["grader"]
    by = {(d["doc"], d["type"]): d for d in decisions(db, "r")}
    assert by[("a", "geval")]["judge"] == PASSED and by[("b", "geval")]["judge"] == FAILED
    assert by[("c", "grader")]["judge"] == "N"
    add_review(db, "r", by[("b", "grader")]["id"], "I", "ana", note="Lyon is not Paris")
    add_review(db, "r", by[("b", "geval")]["id"], PASSED, "ana")  # an overruled score counts as 1
    add_review(db, "r", by[("a", "geval")]["id"], PASSED, "ana")  # confirmed: its raw 0.7 stays
    a = audit_run(db, "r").metrics
    assert math.isclose(a["scorers"]["grader"]["mean"], 0.5 / 3)
    assert math.isclose(a["scorers"]["geval"]["mean"], (0.7 + 1.0 + 0.9) / 3)


@pytest.mark.parametrize(("line", "bad", "message"), [
    (2, {"id": "b", "verdicts": [{"scorer": "s", "scheme": SCORE, "value": 0.3}]}, "needs its 'threshold'"),
    (2, {"id": "b", "verdicts": [{"scorer": "s", "scheme": PASS_FAIL, "value": "yes"}]}, "true or false"),
    (2, {"id": "b", "verdicts": [{"scorer": "s", "scheme": "stars", "value": 3}]}, "'scheme' must be one of"),
    # another letter was stored as an unreadable answer with no word (the helper's "Q" and "c")
    (2, {"id": "b", "verdicts": [{"scorer": "s", "scheme": CPI, "value": "Q"}]}, "letter C, P, I or N, got 'Q'"),
    (2, {"id": "b", "verdicts": [{"scorer": "s", "scheme": CPI, "value": "c"}]}, "letter C, P, I or N, got 'c'"),
    (2, {"id": "b", "verdicts": [{"scorer": "s", "scheme": CPI, "value": ["C"]}]}, "letter C, P, I or N, got a list"),
    (2, {"id": "b", "verdicts": [{"scorer": "s", "scheme": CPI, "value": {"C": 1}}]}, "C, P, I or N, got an object"),
    (2, {"id": "b", "verdicts": []}, "non-empty list"),
    (2, {"id": "a", "verdicts": [{"scorer": "s", "scheme": CPI, "value": "C"}]}, "repeats line 1"),
    (2, {"id": "b", "verdicts": [{"scorer": "s", "scheme": CPI, "value": "C"},
                                 {"scorer": "s", "scheme": CPI, "value": "I"}]}, "a scorer gives two verdicts"),
])
def test_a_bad_item_names_file_and_line(tmp_path, line, bad, message):
    path = write(tmp_path, [ITEMS[0], bad])
    with pytest.raises(InputError, match=message) as e:
        VerdictsTask().load({"items": path})
    assert e.value.path == path and e.value.line == line


def test_replay_reads_the_judge_log_and_refuses_conflicts(tmp_path):
    fam = VerdictsTask()
    log = tmp_path / "log.jsonl"
    log.write_text('{"id": "a", "scorer": "grader", "label": "C"}\n{"id": "a", "scorer": "grader", "label": "I"}\n',
                   encoding="utf-8")
    with pytest.raises(InputError, match="conflicting labels") as e:
        fam.make_judge(f"replay:{log}")
    assert e.value.line == 2
