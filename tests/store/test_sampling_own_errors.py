"""`estimate` of a retrieval run says why it shows no interval while a sampled tail stratum has no changed query
(`RetrievalTask.sampling_own_error_sizes`, `scoring.stats.estimators.stratum_df`; issue 39 point 4), and shows one
once a query of that stratum changes; the former rule (the flag off) gave an interval from the other strata's
errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.review.reviews import add_review
from audit.review.sampling import create_plan, estimate, load_plan, next_sample
from audit.runs import score_run
from scoring.families.retrieval.family import RetrievalTask
from scoring.families.retrieval.review import ACCEPTABLE, NOT_ACCEPTABLE

RANKINGS = Path(__file__).resolve().parents[2] / "data" / "retrieval" / "demo_rankings.jsonl"
TAIL = "20-49 above"


@pytest.fixture
def db(tmp_path):
    from audit.store.database import open_db

    rows = [json.loads(line) for line in RANKINGS.read_text().splitlines() if line.strip()]
    head = [r for r in rows if 0 < r["positive_index"] < 19][:36]
    tail = [r for r in rows if 21 <= r["positive_index"] < 45][:12]
    path = tmp_path / "rankings.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in head + tail))
    db = open_db(tmp_path / "own.db")
    score_run(db, "retrieval", {"pred": str(path)}, "gold-only", run="rank")
    create_plan(db, "rank", seed=3)
    return db


def _review_served(db, accept: bool) -> str:
    """Review the document the sample queue serves: its first candidate accepted (`accept`), the rest not."""
    pick = next_sample(db, "rank")
    for j, i in enumerate(pick["decisions"]):
        add_review(db, "rank", i, ACCEPTABLE if accept and j == 0 else NOT_ACCEPTABLE, "ana", sampled=True)
    return pick["stratum"]


def test_a_tail_stratum_with_no_changed_query_gives_the_reason_then_an_interval(db, monkeypatch):
    plan = load_plan(db, "rank")
    assert TAIL in plan.strata() and TAIL not in plan.take_all
    # the take-all strata first (every fifth query changed), then 3 tail queries the judge got right
    served = {True: 0, False: 0}  # tail, head
    while served[True] < 3:
        in_tail = next_sample(db, "rank")["stratum"] == TAIL
        _review_served(db, accept=not in_tail and served[False] % 5 == 0)
        served[in_tail] += 1
    mrr = estimate(db, "rank")["all/mrr"]
    assert mrr["n_documents_sampled"] >= 30 and mrr["estimate"] is not None
    assert mrr["ci"] is None and mrr["anytime"]["ci"] is None
    assert mrr["note"].startswith("insufficient reviews") and repr(TAIL) in mrr["note"]
    with monkeypatch.context() as m:  # the former rule: the tail borrows the take-all strata's error sizes
        m.setattr(RetrievalTask, "sampling_own_error_sizes", False)
        assert estimate(db, "rank")["all/mrr"]["ci"] is not None
    while next_sample(db, "rank")["stratum"] != TAIL:
        _review_served(db, accept=False)
    _review_served(db, accept=True)  # one tail query changes: its stratum's variance has a size now
    mrr = estimate(db, "rank")["all/mrr"]
    assert mrr["ci"] is not None and mrr["ci"][0] <= mrr["estimate"] <= mrr["ci"][1], mrr["note"]
