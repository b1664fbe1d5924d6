"""The queue's change strip (`audit.review.queue.describe_change`) compares every metric cell the family declares,
with a
tolerance: an ideation mean 3.0204 → 3.0000 is a change, LitXBench's float counts are listed as whole numbers."""

import random

import pytest

from audit.review.queue import changed, describe_change, metric_changes
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import as_view, decisions
from tests.conftest import copy_of

IDEATION = "demo-ideation-si2024-humans"
LITX = "demo-litxbench-drop-meas30"


@pytest.fixture
def db(demo_template, tmp_path):
    return open_db(copy_of(demo_template, tmp_path / "demo.db"))


def review_and_describe(db, run, decision, label):
    before = as_view(db, run).audit.metrics
    add_review(db, run, decision["id"], label, "ana")
    after = as_view(db, run).audit.metrics
    return before, after, describe_change(as_view(db, run).task, decision["id"], label, before, after)


def differing_cells(task, before, after):
    out = 0
    for o, a in zip(task.metric_rows(before), task.metric_rows(after), strict=True):
        if o.get("type") in ("macro average", "avg"):
            continue
        out += sum(1 for k, v in o.items() if isinstance(v, int | float) and not isinstance(v, bool)
                   and isinstance(a.get(k), int | float) and changed(v, a[k]))
    return out


def test_an_ideation_rating_that_moves_a_mean_is_a_change(db):
    rating = next(d for d in decisions(db, IDEATION) if d["kind"] == "rating" and d["judge"] not in ("1", "invalid"))
    before, after, text = review_and_describe(db, IDEATION, rating, "1")
    assert "no score changed" not in text
    assert "absolute mean" in text
    task = as_view(db, IDEATION).task
    assert len(metric_changes(task, before, after)) == differing_cells(task, before, after) > 0


def test_litxbench_float_counts_are_listed_as_whole_numbers(db):
    pair = next(d for d in decisions(db, LITX) if d["kind"] == "material_pair" and d["judge"] == "match")
    _, _, text = review_and_describe(db, LITX, pair, "no-match")
    assert "no score changed" not in text
    assert " tp " in text and ".0→" not in text  # "value tp 2091→2080", not "2091.0000→2080.0000"


@pytest.mark.parametrize("run", [IDEATION, LITX])
def test_no_score_changed_exactly_when_no_cell_moved(db, run):
    """Invariant over random reviews: the strip says "no score changed" iff no declared cell moved."""
    rng = random.Random(run)
    task = as_view(db, run).task
    for d in rng.sample(decisions(db, run), 8):
        before, after, text = review_and_describe(db, run, d, rng.choice(task.label_schemes[d["kind"]].labels))
        headline_moved = any(c.value(before) is not None and c.value(after) is not None
                             and changed(c.value(before), c.value(after)) for c in task.headline)
        moved = differing_cells(task, before, after) > 0 or headline_moved
        assert ("no score changed" in text) == (not moved), text
