"""Fixtures of the store's tests."""

from __future__ import annotations

import pytest

from audit.runs import score_run
from tests.conftest import GOLD, PRED_MIXED, PRED_PERFECT

SHARING_RUNS = ("mixed", "twin", "perfect")
"""The runs of `three_sharing_runs`: `twin` asks exactly `mixed`'s questions, `perfect` some of them."""


@pytest.fixture
def three_sharing_runs(db_with_run):
    """The CHIMERA mixed run with two more on the same gold, so that reviews settle questions across runs."""
    score_run(db_with_run, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="twin")
    score_run(db_with_run, "chimera", {"gold": str(GOLD), "pred": str(PRED_PERFECT)}, "exact", run="perfect")
    return db_with_run


def review_unless_nothing_to_undo(db, run: str, decision_id: int, label: str | None, who: str, **kw) -> bool:
    """`add_review`, for the random review sequences: an undo (`label=None`) by someone holding no label there is
    refused ("nothing to undo") and stores nothing; returns whether a row was stored."""
    from audit.errors import AuditError
    from audit.review.reviews import add_review

    before = db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    try:
        add_review(db, run, decision_id, label, who, **kw)
    except AuditError as e:
        if label is not None or not str(e).startswith("nothing to undo"):
            raise
        assert db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == before
        return False
    return True
