"""A sampling plan of one decision kind in a family of several (ideation: ratings and comparisons). Its estimate
read the numbers only the other kind moves as exact at the judge's value ("fully reviewed: exact, no variance":
pairwise consistency 0.3741 [0.3741, 0.3741] with none of the 441 comparisons reviewed, a claim the report
repeated). Now those numbers say the plan does not estimate them, on the CLI, the JSON export and the report."""

from __future__ import annotations

from audit.outputs.export import export_json
from audit.review.reviews import add_review
from audit.review.sampling import _blocks_state, create_plan, estimate, kind_moves, load_plan, next_sample
from audit.store.database import open_db
from audit.views import as_view
from tests.conftest import copy_of

RUN = "demo-ideation-si2024-humans"


def test_a_plan_of_ratings_leaves_the_comparison_numbers_unestimated(tmp_path, demo_template):
    db = open_db(copy_of(demo_template, tmp_path / "d.db"))
    create_plan(db, RUN, kind="rating", seed=3)
    for _ in range(2):  # two rating blocks, through the queue
        pick = next_sample(db, RUN, kind="rating")
        for dec_id in pick["decisions"]:
            add_review(db, RUN, dec_id, "3", "ana", sampled=True)
    est = estimate(db, RUN, kind="rating")
    assert set(est) == {"summary/absolute/novelty", "summary/pairwise/novelty", "summary/consistency_rate",
                        "summary/rating_invalid_rate"}
    assert "not_estimated" not in est["summary/absolute/novelty"]  # the ratings' own number: estimated
    for key in ("summary/pairwise/novelty", "summary/consistency_rate"):
        e = est[key]
        assert e["estimate"] is None and e["ci"] is None and e["anytime"]["ci"] is None
        assert e["note"].startswith("not estimated by this plan: reviews of its rating decisions do not move")
        sample_only = {"coverage", "n_documents_sampled", "n_documents_known", "n_documents_planned", "strata"}
        assert set(est["summary/absolute/novelty"]) - sample_only == set(e) - {"not_estimated"}  # one entry shape
    exported = export_json(db, RUN, with_agreement=False)["sampling"]["rating"]["estimate"]
    assert exported["summary/consistency_rate"]["estimate"] is None


def test_kind_moves_marks_what_each_kind_can_move(tmp_path, demo_template):
    """The probe's two kinds move disjoint counts here, and an all-kinds plan marks nothing unestimated."""
    db = open_db(copy_of(demo_template, tmp_path / "d.db"))
    create_plan(db, RUN, seed=1)
    plan = load_plan(db, RUN)
    assert plan is not None
    est = estimate(db, RUN)
    assert not any("not_estimated" in e for e in est.values())
    paths = _blocks_state(as_view(db, RUN), plan).paths
    ratings, comparisons = (kind_moves(as_view(db, RUN), paths, k) for k in ("rating", "comparison"))
    assert ratings.any() and comparisons.any() and not (ratings & comparisons).any()
