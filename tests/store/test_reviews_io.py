"""Merging two reviewers' databases: no duplicates, nothing lost, bad lines named."""

import json

import pytest

from audit.review.reviews import add_review
from audit.review.reviews_io import export_reviews, import_reviews
from audit.runs import score_run
from audit.store.database import open_db
from scoring.errors import InputError
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED


def scored(path):
    db = open_db(path)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="mixed")
    return db


def test_merge_two_reviewer_databases(tmp_path):
    a, b = scored(tmp_path / "a.db"), scored(tmp_path / "b.db")
    add_review(a, "mixed", 1, "no-match", "ana", note="é ✓")
    add_review(a, "mixed", 2, "match", "ana")
    add_review(b, "mixed", 1, "match", "bo")
    (tmp_path / "a.jsonl").write_text(export_reviews(a, "mixed"))
    (tmp_path / "b.jsonl").write_text(export_reviews(b, "mixed"))
    assert import_reviews(a, "mixed", tmp_path / "b.jsonl") == {"imported": 1, "skipped_duplicates": 0, "reoriented": 0,
                                                                 "stored_as_local": 0, "not_sample_draws": 0}
    assert import_reviews(a, "mixed", tmp_path / "b.jsonl") == {"imported": 0, "skipped_duplicates": 1, "reoriented": 0,
                                                                 "stored_as_local": 0, "not_sample_draws": 0}
    assert import_reviews(b, "mixed", tmp_path / "a.jsonl") == {"imported": 2, "skipped_duplicates": 0, "reoriented": 0,
                                                                 "stored_as_local": 0, "not_sample_draws": 0}
    rows_a = sorted(json.loads(x)["uid"] for x in export_reviews(a, "mixed").splitlines())
    rows_b = sorted(json.loads(x)["uid"] for x in export_reviews(b, "mixed").splitlines())
    assert rows_a == rows_b and len(rows_a) == 3


def test_import_rejects_unknown_decisions_and_writes_nothing(tmp_path):
    a = scored(tmp_path / "a.db")
    good = {"uid": "u1", "doc": "2105.13065", "kind": "entity_pair", "type": "comb-element", "left": "x",
            "right": "y", "reviewer": "ana", "label": "match", "role": "reviewer", "note": None, "blind": 0,
            "created": "2026-01-01T00:00:00+00:00"}
    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(good) + "\n")
    with pytest.raises(InputError, match=r"r.jsonl:1: no such decision in run 'mixed'"):
        import_reviews(a, "mixed", f)
    f.write_text(json.dumps(good | {"kind": "rank"}) + "\n")  # a kind the family has not: said, not "no decision"
    with pytest.raises(InputError, match=r"r.jsonl:1: field 'kind' 'rank' is not a decision kind of .*; use one of "
                                         r"entity_pair$"):
        import_reviews(a, "mixed", f)
    assert a.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 0
