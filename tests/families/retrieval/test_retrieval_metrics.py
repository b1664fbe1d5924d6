"""Ranking metrics on hand-computed cases: tie policies, medians, empty subsets, ranks after accepting candidates."""

from dataclasses import replace

import pytest

from scoring.families.retrieval.load import load_rankings
from scoring.families.retrieval.metrics import (
    EMPTY_NOTE,
    full_report,
    query_rank,
    ranking_metrics,
    reviewable_positions,
    summarise,
)
from tests.conftest import FIXTURES
from tests.families.retrieval.rankings import query

# Gold tied around (ranks 2-4), at the top (1-3) and at the bottom (3-4) of its list.
AROUND = query([0.9, 0.8, 0.8, 0.8, 0.5], 2, qid="around")
TOP = query([0.9, 0.9, 0.9, 0.1], 0, qid="top", relation="inspiration")
BOTTOM = query([0.9, 0.5, 0.2, 0.2], 3, qid="bottom", cross=True)
THREE = [AROUND, TOP, BOTTOM]


@pytest.mark.parametrize(("q", "opt", "mean", "pes"), [(AROUND, 2, 3, 4), (TOP, 1, 2, 3), (BOTTOM, 3, 3.5, 4)])
def test_rank_of_a_tie_block_per_policy(q, opt, mean, pes):
    assert query_rank(q, "optimistic") == opt
    assert query_rank(q, "mean") == mean
    assert query_rank(q, "pessimistic") == pes


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="unknown tie policy"):
        query_rank(AROUND, "random")  # type: ignore[arg-type]


def test_all_subset_under_each_policy():
    # mean: ranks uniform on 2-4, 1-3 and 3-4; every figure its expectation over the tie orders
    m = ranking_metrics(THREE, "mean")["all"]
    assert m["n"] == 3
    assert m["mr"] == pytest.approx(8.5 / 3)
    assert m["mrr"] == pytest.approx(((1 / 2 + 1 / 3 + 1 / 4) / 3 + (1 + 1 / 2 + 1 / 3) / 3 + (1 / 3 + 1 / 4) / 2) / 3)
    assert m["hits@1"] == pytest.approx(1 / 9)  # only TOP can be first, in one order of three
    assert m["hits@3"] == pytest.approx((2 / 3 + 1 + 1 / 2) / 3)
    assert (m["hits@5"], m["hits@100"]) == (1, 1)
    assert m["median_rank"] == pytest.approx(53 / 18)  # the median over the 18 equally likely rank triples
    # optimistic 2, 1, 3
    o = ranking_metrics(THREE, "optimistic")["all"]
    assert o["mr"] == 2 and o["mrr"] == pytest.approx((0.5 + 1 + 1 / 3) / 3)
    assert o["hits@1"] == pytest.approx(1 / 3) and o["hits@3"] == 1 and o["median_rank"] == 2
    # pessimistic 4, 3, 4
    p = ranking_metrics(THREE, "pessimistic")["all"]
    assert p["mr"] == pytest.approx(11 / 3) and p["mrr"] == pytest.approx((0.25 + 1 / 3 + 0.25) / 3)
    assert p["hits@1"] == 0 and p["hits@3"] == pytest.approx(1 / 3) and p["median_rank"] == 4


def test_subsets_and_even_count_median():
    m = ranking_metrics(THREE, "mean")
    assert list(m) == ["all", "combination", "inspiration", "cross_domain"]
    assert m["combination"]["n"] == 2 and m["combination"]["median_rank"] == 3.25  # midpoint of 3 and 3.5
    assert m["inspiration"]["mr"] == 2 and m["inspiration"]["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert m["cross_domain"]["n"] == 1 and m["cross_domain"]["mr"] == 3.5


def test_even_count_median_of_plain_ranks():
    assert summarise([1, 2, 10, 200])["median_rank"] == 6
    assert summarise([2, 5])["median_rank"] == 3.5


def test_hits_at_cut_offs():
    m = summarise([1, 3, 4, 10, 11, 50, 100, 101])
    assert [m[f"hits@{k}"] for k in (1, 3, 5, 10, 50, 100)] == [1 / 8, 2 / 8, 3 / 8, 4 / 8, 6 / 8, 7 / 8]


def test_empty_subset_is_zero_with_a_note():
    m = ranking_metrics([AROUND, replace(BOTTOM, is_cross_domain=False)])
    assert m["inspiration"] == {"n": 0, "mr": 0, "mrr": 0, "hits@1": 0, "hits@3": 0, "hits@5": 0, "hits@10": 0,
                                "hits@50": 0, "hits@100": 0, "median_rank": 0, "note": EMPTY_NOTE}
    assert m["cross_domain"]["n"] == 0  # flagged (False) on one query: reported, empty
    assert "cross_domain" not in ranking_metrics([AROUND])  # nobody says: not reported


def test_paper_layout_fixture():
    # gold ranks 2, 1, 4 (no scores, so every policy agrees)
    qs = load_rankings(FIXTURES / "retrieval" / "paper_format.jsonl").queries
    for policy in ("mean", "optimistic", "pessimistic"):
        m = ranking_metrics(qs, policy)
        assert m["all"]["mr"] == pytest.approx(7 / 3) and m["all"]["mrr"] == pytest.approx(1.75 / 3)
        assert m["all"]["hits@1"] == pytest.approx(1 / 3) and m["all"]["hits@3"] == pytest.approx(2 / 3)
        assert m["all"]["median_rank"] == 2
        assert m["combination"]["median_rank"] == 2.5 and m["combination"]["mrr"] == 0.625
        assert m["cross_domain"]["n"] == 1 and m["cross_domain"]["mr"] == 2


def test_reviewable_candidates_are_those_above_or_tied_within_the_top_100():
    assert reviewable_positions(AROUND) == [0, 1, 3]  # 0 above, 1 and 3 tied; 4 is below
    assert reviewable_positions(TOP) == [1, 2]
    assert reviewable_positions(query([0.5, 0.4], 0)) == []
    deep = query(None, 120, n=150)
    assert reviewable_positions(deep) == list(range(100))


def test_audited_rank_after_accepting_candidates():
    assert query_rank(AROUND, "mean", {"c0"}) == 2  # above: a 1 -> 0, block 1-3
    assert query_rank(AROUND, "mean", {"c1"}) == 2.5  # tied, listed above the gold
    assert query_rank(AROUND, "pessimistic", {"c3"}) == 3  # tied, listed below the gold
    assert query_rank(AROUND, "mean", {"c4"}) == 3  # below the gold: not reviewable, no effect
    assert query_rank(AROUND, "mean", {"c0", "c1", "c3"}) == 1
    assert query_rank(query(None, 120, n=150), "mean", {f"c{i}" for i in range(150)}) == 21  # only top 100 count


def test_audited_rank_of_a_cut_list_with_the_gold_appended():
    q = query([0.9, 0.8, 0.7, 0.3], 3, positive_index=9, n_candidates=20, gold_block=[9, 11])
    assert query_rank(q, "mean") == 10 and query_rank(q, "optimistic") == 9 and query_rank(q, "pessimistic") == 11
    assert reviewable_positions(q) == [0, 1, 2]
    assert query_rank(q, "mean", {"c0", "c1", "c2"}) == 7


def test_tie_sensitivity_report():
    r = full_report(THREE)
    assert r["tie_policy"] == "mean" and r["all"] == r["tie_policies"]["mean"]["all"]
    s = r["tie_sensitivity"]["all"]
    assert s["queries_with_ties"] == 3
    assert s["spread"]["mr"] == pytest.approx(11 / 3 - 2)
    assert s["spread"]["hits@1"] == pytest.approx(1 / 3) and s["spread"]["median_rank"] == 2
    assert r["tie_sensitivity"]["inspiration"]["queries_with_ties"] == 1
    # accepting both candidates tied with TOP's gold leaves it alone at rank 1
    r2 = full_report(THREE, {"top": {"c1", "c2"}})
    assert r2["tie_sensitivity"]["inspiration"] == {"queries_with_ties": 0,
                                                    "spread": {k: 0 for k in s["spread"]}}
