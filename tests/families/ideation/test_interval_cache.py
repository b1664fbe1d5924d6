"""An ideation review re-draws the bootstrap of the cells it changed only (#38: 30 cells over 500 questions were
re-drawn after every review, 0.32 s of CPU), and a kept interval is the one drawing it again gives."""

from __future__ import annotations

import json
import random

import pytest

import scoring.stats.bootstrap as bootstrap
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import open_db
from scoring.families import get_task
from tests.conftest import ROOT

DEMO = ROOT / "data" / "ideation"


@pytest.fixture
def demo_run(tmp_path):
    db = open_db(tmp_path / "ideation.db")
    score_run(db, "ideation", {"ideas": str(DEMO / "demo_ideas.jsonl"), "absolute": str(DEMO / "demo_absolute.jsonl"),
                               "pairwise": str(DEMO / "demo_pairwise.jsonl")}, "file", run="demo")
    yield db
    db.conn.close()


def _review_some(db, n: int, rng: random.Random) -> None:
    task = get_task("ideation")
    decisions = db.execute("SELECT id, kind FROM decisions ORDER BY id").fetchall()
    for dec_id, kind in rng.sample(decisions, n):
        add_review(db, "demo", dec_id, rng.choice(task.label_schemes[kind].labels), rng.choice(["ana", "ben"]))


def test_a_review_redraws_only_the_cells_it_changed(demo_run, monkeypatch):
    audit_run(demo_run, "demo")  # every cell drawn once
    draws = []
    real = bootstrap.resampled_sums
    monkeypatch.setattr(bootstrap, "resampled_sums", lambda *a, **k: draws.append(1) or real(*a, **k))
    audit_run(demo_run, "demo")
    assert draws == []  # nothing changed: nothing drawn again
    task = get_task("ideation")
    rating = demo_run.execute("SELECT id, judge_label FROM decisions WHERE kind = 'rating' ORDER BY id").fetchone()
    labels = [x for x in task.label_schemes["rating"].labels if x != rating[1]]
    add_review(demo_run, "demo", rating[0], labels[0], "ana")
    metrics = audit_run(demo_run, "demo").metrics
    cells = sum(1 for section in ("absolute", "pairwise") for row in metrics[section].values() for c in row.values()
                if c.get("ci") is not None)
    assert cells >= 10
    assert 1 <= len(draws) <= 2  # the reviewed idea's absolute cell (and nothing else of 'cells')


def test_kept_intervals_equal_intervals_drawn_again(demo_run, monkeypatch):
    rng = random.Random(5)
    for _ in range(4):
        _review_some(demo_run, 15, rng)
        kept = audit_run(demo_run, "demo").metrics
        with monkeypatch.context() as m:
            m.setattr(bootstrap, "_INTERVALS", bootstrap.OrderedDict())
            m.setattr(bootstrap, "_KEEP_INTERVALS", 0)  # nothing kept: every interval drawn again
            fresh = audit_run(demo_run, "demo", rebuild=True).metrics
        assert json.dumps(kept, sort_keys=True) == json.dumps(fresh, sort_keys=True)


def test_an_interval_is_keyed_by_every_number_it_depends_on(monkeypatch):
    """Clusters that differ in one number, or another seed / confidence / resample count, are drawn anew."""
    draws = []
    real = bootstrap.resampled_sums
    monkeypatch.setattr(bootstrap, "resampled_sums", lambda *a, **k: draws.append(1) or real(*a, **k))
    base = ([3.0, 4.0, 5.0, 2.0], [1.0, 1.0, 2.0, 1.0])
    first = bootstrap.ratio_interval(*base, seed=12345)
    assert bootstrap.ratio_interval(*base, seed=12345) == first and len(draws) == 1
    first.append(99.0)  # a caller changing its copy changes nothing kept
    assert bootstrap.ratio_interval(*base, seed=12345) == first[:2]
    for n, args in enumerate((([3.0, 4.0, 5.0, 2.5], base[1], 12345, 0.95, 2000),
                              (base[0], [1.0, 1.0, 2.0, 2.0], 12345, 0.95, 2000), (*base, 12346, 0.95, 2000),
                              (*base, 12345, 0.9, 2000), (*base, 12345, 0.95, 1999)), start=2):
        num, den, seed, confidence, resamples = args
        bootstrap.ratio_interval(num, den, seed=seed, confidence=confidence, n_resamples=resamples)
        assert len(draws) == n, args
    bootstrap._INTERVALS.clear()
    assert bootstrap.ratio_interval(*base, seed=12345) == first[:2]
