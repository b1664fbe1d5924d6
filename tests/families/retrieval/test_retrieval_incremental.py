"""A review updates the run's retrieval metrics query by query (`ranktable`, #38): after any sequence of reviews the
figures equal a recomputation from scratch (`metrics.full_report` from the queries), bit for bit, for every tie
policy and subset."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.families.base import sum_nested
from scoring.families.retrieval import ranktable
from scoring.families.retrieval.metrics import full_report, reviewable_positions
from scoring.families.retrieval.model import TIE_POLICIES
from scoring.families.retrieval.review import metrics_from_counts, query_counts
from tests.families.retrieval.rankings import query


@st.composite
def runs(draw: st.DrawFn) -> list:
    """Queries of 3-12 candidates with scores drawn from a few values (so golds tie), some cross-domain."""
    out = []
    for i in range(draw(st.integers(1, 14))):
        n = draw(st.integers(3, 12))
        scores = sorted(draw(st.lists(st.sampled_from((0.9, 0.8, 0.5, 0.2)), min_size=n, max_size=n)), reverse=True)
        out.append(query(scores, draw(st.integers(0, n - 1)), qid=f"q{i}",
                         relation=draw(st.sampled_from(("combination", "inspiration"))),
                         cross=draw(st.sampled_from((None, True, False)))))
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(runs(), st.data())
def test_incremental_metrics_equal_a_recomputation_after_random_reviews(queries, data):
    accepted: dict[str, set[str]] = {q.id: set() for q in queries}
    per_doc = [query_counts(q) for q in queries]
    metrics_from_counts(sum_nested(per_doc), per_doc)
    table = ranktable._TABLES[0]
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(queries) - 1))
        q = queries[i]
        reviewable = [q.candidates[k] for k in reviewable_positions(q)]
        if reviewable:
            cand = data.draw(st.sampled_from(reviewable))
            accepted[q.id] ^= {cand}  # accept it, or undo an earlier acceptance
        per_doc = [*per_doc[:i], query_counts(q, accepted[q.id]), *per_doc[i + 1:]]  # a new dict, as the audit
        got = metrics_from_counts(sum_nested(per_doc), per_doc)
        want = full_report(queries, accepted)
        assert ranktable._TABLES[0] is table  # updated, not rebuilt
        for p in TIE_POLICIES:
            assert got["tie_policies"][p] == want["tie_policies"][p], p
            for subset, summary in want["tie_policies"][p].items():
                assert [type(v) for v in got["tie_policies"][p][subset].values()] == [type(v) for v in summary.values()]
        assert got == want
