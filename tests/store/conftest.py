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
