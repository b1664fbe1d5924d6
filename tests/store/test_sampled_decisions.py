"""`sampled_decision_ids` reads a run's sample draws from the reviews made in it, through the partial index of
migration m023 (#38: the `run_reviews` view walked every review of the run, 0.57 s at a million); `document_drawn`
asks the same of one document (every sampled review checks it: reading the run's draws each time made a review
after 60 served BM25 queries cost 1.2 s instead of 0.33 s).

Invariant, on random review sets in runs that share questions (a review made in one run is seen by the other, but
is a sample draw only in its own): the reader gives exactly the decisions the view gives a sampled row, in every
run, and a document is drawn exactly when one of its decisions is among them; and SQLite reads both through the
indexes, never by walking the run's reviews."""

from __future__ import annotations

import random

import pytest

from audit.rescoring import _DOCUMENT_DRAWN, _SAMPLED_DECISIONS, document_drawn, sampled_decision_ids
from audit.review.reviews import add_review
from audit.store.database import run_row
from tests.store.conftest import SHARING_RUNS as RUNS


def _view_reading(db, run_id: int) -> set[int]:
    return {r[0] for r in db.execute("SELECT DISTINCT decision_id FROM run_reviews WHERE run_id = ? AND sampled = 1",
                                     [run_id])}


@pytest.mark.parametrize("seed", [3, 4])
def test_sampled_decisions_equal_the_views_on_random_review_sets(three_sharing_runs, seed):
    db = three_sharing_runs
    rng = random.Random(seed)
    ids = {run: [r[0] for r in db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id",
                                          [run_row(db, run)["id"]])] for run in RUNS}
    unkeyed = rng.sample(ids["twin"][:40], 16)  # stored before keys existed: settled by their own reviews only
    db.execute(f"UPDATE decisions SET qkey = NULL WHERE id IN ({','.join('?' * len(unkeyed))})", unkeyed)
    docs = {run: {} for run in RUNS}
    for run in RUNS:
        for i, doc in db.execute("SELECT id, doc_id FROM decisions WHERE run_id = ? ORDER BY id LIMIT 40",
                                 [run_row(db, run)["id"]]):
            docs[run].setdefault(doc, set()).add(i)
    shared_seen = drawn_docs = drawn_unkeyed = 0
    for step in range(60):
        run = rng.choice(RUNS)
        row = add_review(db, run, rng.choice(ids[run][:40]), rng.choice(["match", "no-match"]), "ana")
        if rng.random() < 0.4:  # stored as a draw (the queue's check is not what this reader is about)
            db.execute("UPDATE reviews SET sampled = 1 WHERE id = ?", [row["id"]])
        for other in RUNS:
            rid = run_row(db, other)["id"]
            expected = _view_reading(db, rid)
            assert sampled_decision_ids(db, rid) == expected, (step, other)
            for doc, of_doc in docs[other].items():
                assert document_drawn(db, rid, doc) == (not of_doc.isdisjoint(expected)), (step, other, doc)
            drawn_docs += sum(document_drawn(db, rid, doc) for doc in docs[other])
            drawn_unkeyed += any(document_drawn(db, rid, doc) for doc, of_doc in docs[other].items()
                                 if of_doc & set(unkeyed) and of_doc & expected & set(unkeyed))
            seen = {r[0] for r in db.execute("SELECT decision_id FROM run_reviews WHERE run_id = ? AND "
                                             "made_in_run != ?", [rid, rid])}
            shared_seen += bool(seen)
    assert shared_seen  # the runs did see each other's reviews, which must not count as their draws
    assert any(sampled_decision_ids(db, run_row(db, run)["id"]) for run in RUNS)
    assert drawn_docs and drawn_unkeyed  # documents were drawn, also through a decision without a key


def test_sampled_decisions_are_read_through_the_partial_index(db_with_run):
    plan = " ".join(str(r[-1]) for r in db_with_run.execute("EXPLAIN QUERY PLAN " + _SAMPLED_DECISIONS, [1]))
    assert "reviews_sampled" in plan, plan


def test_a_documents_draw_is_read_through_the_indexes(db_with_run):
    plan = [str(r[-1]) for r in db_with_run.execute("EXPLAIN QUERY PLAN " + _DOCUMENT_DRAWN, [1, "doc"])]
    assert all(step.startswith(("SEARCH", "SCAN CONSTANT ROW", "SCALAR SUBQUERY")) for step in plan), plan
    assert sum("reviews_sampled" in step for step in plan) == 2, plan
