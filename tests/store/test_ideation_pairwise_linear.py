"""The ideation pairwise score's sampled estimate is linear in the reviewed documents' corrections (bench/README.md
as of a32f770, "Issue 39": the queue design's −0.048 ± 0.016 at 100 rounds was no estimator bias):

- the score is Σ per-question normalised score / Σ defined questions, and a review changes the numerator only (a
  question's pool, hence its denominator, is the judge's), so g is affine in the totals: the normalisation
  3 + S/(N − 1) is applied per question before summing, never to sampled totals;
- a comparison's two calls (both orders) are one decision of one question, one block: never split across blocks;
- hence the estimate is exactly judge total + Σ_h (M_h/m_h) Σ_{sampled} (human − judge), design-unbiased under a
  fixed allocation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audit.review.sampling import metric_of_totals
from audit.runs import score_run
from audit.store.database import open_db
from devtools.partial_audit import _paths, draw, estimate_round, flatten, plan_for, population

ROOT = Path(__file__).resolve().parents[2]
IDEATION = ROOT / "data" / "ideation"
KEY = "summary/pairwise/novelty"


@pytest.fixture(scope="module")
def pop(tmp_path_factory):
    db = open_db(tmp_path_factory.mktemp("idea") / "idea.db")
    score_run(db, "ideation", {"ideas": str(IDEATION / "demo_ideas.jsonl"),
                               "absolute": str(IDEATION / "demo_absolute.jsonl"),
                               "pairwise": str(IDEATION / "demo_pairwise.jsonl")}, "file", run="idea")
    yield population(db, "idea", seed=11)
    db.conn.close()


def test_the_pairwise_score_is_affine_in_the_totals(pop):
    cell = next(c for c in pop.task.headline if "/".join(c.path) == KEY)
    paths = _paths(pop)
    g = metric_of_totals(pop.task, cell, paths, pop.options)
    tj = sum(flatten(c, paths) for c in pop.judge.values())
    th = sum(flatten(c, paths) for c in pop.human.values())
    assert g(th) != pytest.approx(g(tj))  # the truth moves the score: the check below is not vacuous
    for a in (-1.5, 0.25, 3.0):
        assert g(tj + a * (th - tj)) == pytest.approx(g(tj) + a * (g(th) - g(tj)), abs=1e-12)


def test_the_estimate_is_the_linear_expansion(pop):
    paths = _paths(pop)
    cell = next(c for c in pop.task.headline if "/".join(c.path) == KEY)
    g = metric_of_totals(pop.task, cell, paths, pop.options)
    for seed in (3, 4):
        plan = plan_for(pop, seed)
        sample = draw(plan, 20)
        strata = plan.stratum_of()
        total = sum(flatten(c, paths) for c in pop.judge.values())
        for d in pop.judge:
            if d not in strata:  # no decisions: known exactly
                total = total + flatten(pop.human[d], paths) - flatten(pop.judge[d], paths)
        for h in set(strata.values()):
            big_m = sum(1 for v in strata.values() if v == h)
            mine = [d for d in sample if strata[d] == h]
            total = total + big_m / len(mine) * sum(
                (flatten(pop.human[d], paths) - flatten(pop.judge[d], paths) for d in mine), np.zeros(len(paths)))
        assert estimate_round(pop, plan, sample)[KEY].estimate == pytest.approx(g(total), abs=1e-12)
