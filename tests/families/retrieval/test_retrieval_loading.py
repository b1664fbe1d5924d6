"""Loading ranking results: the paper's layout, our extensions (scores, cut lists) and errors naming file and line."""

import json

import pytest

from scoring.errors import InputError
from scoring.families.retrieval.load import load_rankings
from scoring.limits import MAX_QUERY_CHARS
from tests.conftest import FIXTURES, write_jsonl
from tests.families.retrieval.rankings import line, query

PAPER = FIXTURES / "retrieval" / "paper_format.jsonl"


def test_paper_layout_loads_with_ids_as_text_and_no_ties():
    lr = load_rankings(PAPER)
    assert [q.id for q in lr.queries] == ["e17_101", "e8_102", "e5_102"]
    q = lr.queries[0]
    assert q.relation == "inspiration" and q.is_cross_domain is True and q.positive_index == 1
    assert q.gold_block == (2, 2) and q.n_candidates == 4 and q.scores is None
    assert lr.queries[2].context is None
    assert any("no scores" in w for w in lr.warnings)


def test_tie_block_comes_from_scores():
    assert query([0.9, 0.8, 0.8, 0.8, 0.5], 2).gold_block == (2, 4)
    assert query([0.9, 0.9, 0.9, 0.1], 0).gold_block == (1, 3)
    assert query([0.9, 0.5, 0.2, 0.2], 3).gold_block == (3, 4)
    assert query([3, 2, 1], 1).gold_block == (2, 2)


def test_old_relation_names_are_normalised(tmp_path):
    p = write_jsonl(tmp_path / "r.jsonl", [line([1.0, 0.5], 1, relation="analogy")])
    lr = load_rankings(p)
    assert lr.queries[0].relation == "inspiration"
    assert lr.notes == ["relation 'analogy' renamed 'inspiration' (1 queries)"]


def test_cut_list_with_the_gold_appended():
    q = query([0.9, 0.8, 0.7, 0.3], 3, positive_index=9, n_candidates=20, gold_block=[9, 11])
    assert q.appended_gold and q.rank_of_position(3) == 10
    assert (q.strictly_above, q.tied) == (8, 2)
    bare = query([0.9, 0.8, 0.7, 0.3], 3, positive_index=9, n_candidates=20)
    assert bare.gold_block == (10, 10)


def test_unseen_ties_below_the_cut_are_a_warning(tmp_path):
    p = write_jsonl(tmp_path / "r.jsonl", [line([0.9, 0.8, 0.7, 0.3], 3, positive_index=9, n_candidates=20)])
    assert any("cannot be seen" in w for w in load_rankings(p).warnings)


def _error(tmp_path, rows) -> InputError:
    p = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError) as e:
        load_rankings(p)
    assert e.value.path == str(p)
    return e.value


BAD_LINES = [
    (line([0.9, 0.5], 1, positive_id="zz"), "positive_id 'zz' is not among the candidates"),
    (line([0.9, 0.5, 0.1], 1, positive_index=2), "positive_index 2 points to 'c2', not to positive_id 'c1'"),
    (line([0.9, 0.5, 0.1], 1, positive_index=7), "positive_index 7 points to nothing"),
    (line([0.9, 0.5], 1, candidates_text=["x"]), "candidates_text has 1 entries but candidates has 2"),
    ({**line([0.9, 0.5, 0.2], 1), "scores": [0.9, 0.5]}, "scores has 2 entries but candidates has 3"),
    (line([0.5, 0.9, 0.1], 0), "scores are not sorted descending: scores[1] = 0.9 > scores[0] = 0.5"),
    (line([0.9, 0.5], 1, candidates=["c0", "c0"], positive_id="c0", positive_index=0), "listed twice"),
    (line([0.9, 0.5], 1, positive_index="1"), "field 'positive_index' must be an integer, got str"),
    (line([0.9, 0.5], 1, positive_index=True), "field 'positive_index' must be an integer, got bool"),
    (line([0.9, 0.5], 1, id=17), "field 'id' must be a string, got int"),
    (line([0.9, 0.5], 1, candidates="c0 c1"), "field 'candidates' must be a list of strings, got str"),
    (line([0.9, 0.5], 1, candidates=["c0", 1]), "candidates[1] must be a string, got int"),
    (line([0.9, "x"], 1), "scores[1] must be a finite number"),
    (line([0.9, 0.5], 1, is_cross_domain="yes"), "'is_cross_domain' must be true, false or absent"),
    (line([0.9, 0.5], 1, relation="causation"), "relation must be one of combination, inspiration"),
    (line([0.9, 0.5], 1, n_candidates=1), "n_candidates (1) is smaller than the 2 listed candidates"),
    (line([0.9, 0.8, 0.8], 1, gold_block=[2, 2]), "gold_block [2, 2] disagrees with scores: rank 3"),
    (line([0.9, 0.8, 0.7], 1, gold_block=[3, 3]), "gold_block [3, 3] must satisfy 1 <= first <= gold rank (2)"),
    (line([0.9, 0.8, 0.8], 2, n_candidates=9), "the gold's tie block reaches the end of the listed top"),
    (line([0.9, 0.8, 0.8], 2, n_candidates=9, positive_index=5), "ties with the last of them"),
    # scoring.limits.MAX_QUERY_CHARS names candidate texts too: 5,000,000 characters were stored
    (line([0.9, 0.5], 1, candidates_text=["x", "y" * (MAX_QUERY_CHARS + 1)]),
     f"candidates_text[1] is {MAX_QUERY_CHARS + 1:,} characters long; the limit is {MAX_QUERY_CHARS:,}"),
    (line([0.9, 0.5], 1, context="c" * (MAX_QUERY_CHARS + 1)),
     f"field 'context' is {MAX_QUERY_CHARS + 1:,} characters long"),
]


@pytest.mark.parametrize(("rec", "reason"), BAD_LINES, ids=[r[:60] for _, r in BAD_LINES])
def test_bad_lines_name_file_line_and_reason(tmp_path, rec, reason):
    good = line([0.9, 0.5], 0, qid="ok")
    err = _error(tmp_path, [good, rec])
    assert err.line == 2
    assert reason in err.reason


def test_duplicate_query_ids(tmp_path):
    err = _error(tmp_path, [line([1, 0], 0, qid="x"), "", line([1, 0], 1, qid="x")])
    assert err.line == 3 and err.reason == "duplicate query id 'x' (first on line 1)"


def test_malformed_json_and_non_objects(tmp_path):
    err = _error(tmp_path, [json.dumps(line([1, 0], 0))[:-1]])
    assert err.line == 1 and err.reason.startswith("invalid JSON")
    assert _error(tmp_path, ["[1, 2]"]).reason == "expected a JSON object, got list"


def test_empty_and_missing_files(tmp_path):
    assert _error(tmp_path, [""]).reason == "no queries in the rankings file"
    with pytest.raises(InputError, match="not found"):
        load_rankings(tmp_path / "nope.jsonl")
