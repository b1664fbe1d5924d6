"""The newest review a run sees (its own, and those settling its questions in other runs: the `run_reviews` view)
is found without walking every review of the database (#38: 2 s of CPU per review -> audited at 1M reviews)."""

from __future__ import annotations

import random

from audit.rescoring import _newest_review
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import run_row
from devtools.sqlite_files import vm_steps
from tests.conftest import GOLD, PRED_MIXED, PRED_PERFECT


def _view_max(db, run_id: int) -> int:
    """What `_newest_review` read before #38."""
    return db.execute("SELECT COALESCE(MAX(id), 0) FROM run_reviews WHERE run_id = ?", [run_id]).fetchone()[0]


def _ids(db, run: str) -> list[int]:
    return [r[0] for r in db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id", [run_row(db, run)["id"]])]


def _with_runs(db) -> dict[str, int]:
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="twin")  # mixed's questions
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_PERFECT)}, "exact", run="perfect")
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_PERFECT)}, "exact", run="quiet")  # never reviewed
    return {r: run_row(db, r)["id"] for r in ("mixed", "twin", "perfect", "quiet")}


def test_the_newest_review_is_the_views(db_with_run):
    db = db_with_run
    runs = _with_runs(db)
    # a decision without a question key sees its own reviews only (the view's second branch)
    unkeyed = _ids(db, "perfect")[3]
    db.execute("UPDATE decisions SET qkey = NULL WHERE id = ?", [unkeyed])
    rng = random.Random(1)
    steps = [("mixed", _ids(db, "mixed")[5]), ("twin", _ids(db, "twin")[7]),  # twin's settles mixed's question
             ("perfect", unkeyed), ("twin", _ids(db, "twin")[40]), ("perfect", _ids(db, "perfect")[9])]
    for run, dec in steps + [(r, rng.choice(_ids(db, r))) for r in ("mixed", "twin", "perfect") for _ in range(5)]:
        add_review(db, run, dec, rng.choice(["match", "no-match"]), "ana")
        for name, run_id in runs.items():
            assert _newest_review(db, run_id) == _view_max(db, run_id), (run, dec, name)
    # twin's reviews settle mixed's questions: mixed saw a review made in another run
    assert db.execute("SELECT COUNT(*) FROM run_reviews WHERE run_id = ? AND made_in_run != run_id",
                      [runs["mixed"]]).fetchone()[0] > 0


def test_the_newest_review_does_not_walk_other_runs_reviews(db_with_run):
    db = db_with_run
    runs = _with_runs(db)
    for dec in _ids(db, "perfect")[:150]:  # reviews the mixed run does not see
        add_review(db, "perfect", dec, "match", "ana")
    add_review(db, "mixed", _ids(db, "mixed")[0], "no-match", "ana")
    mixed = runs["mixed"]
    assert _newest_review(db, mixed) == _view_max(db, mixed)
    assert vm_steps(db, lambda: _newest_review(db, mixed), 10) * 10 < vm_steps(db, lambda: _view_max(db, mixed), 10)
