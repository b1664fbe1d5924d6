"""A sampling plan made with `plan --kind` on the pages: the Scores page estimated nothing ("create a sampling
plan") and the sample queue offered to create a plan of every kind (refused: one scope per run, and its error was
lost to the rerun), while the CLI, the export and the report showed the plan's estimate. A plan with fewer documents
than an interval needs says so when it is in use."""

from __future__ import annotations

from audit.review.sampling import create_plan, estimate
from tests.app.conftest import open_page, plain, table

IDEATION = "demo-ideation-si2024-humans"
LITX = "demo-litxbench-drop-meas30"


def _texts(at) -> str:
    return " ".join(plain(x.value) for kind in (at.info, at.caption, at.warning, at.error, at.markdown) for x in kind)


def test_the_scores_page_shows_the_estimate_of_a_plan_of_one_kind(app, conn):
    create_plan(conn, IDEATION, kind="rating", seed=3)
    at = open_page(app, "scores", run=IDEATION)
    assert not at.exception
    shown = _texts(at)
    assert "sampling plan of rating decisions only" in shown and "Create a sampling plan" not in shown
    est = estimate(conn, IDEATION, kind="rating")
    rows = table(at, "note")
    notes = dict(zip(rows["metric"], rows["note"], strict=True))
    for e in est.values():  # the same entries as the CLI's estimate
        assert notes[e["label"]] == e["note"]
    assert any(n.startswith("not estimated by this plan") for n in notes.values())


def test_the_sample_queue_names_a_plan_of_one_kind_instead_of_offering_another(app, conn):
    create_plan(conn, IDEATION, kind="rating", seed=3)
    at = open_page(app, "queue", reviewer="ana", run=IDEATION)
    at.selectbox(key="queue.mode").set_value("sample").run()
    assert not at.exception
    shown = _texts(at)
    assert "sampling plan is for rating decisions only" in shown and "has no sampling plan yet" not in shown
    assert not [b for b in at.button if b.key == "queue.create_plan"]


def test_a_plan_too_small_for_an_interval_says_so_in_the_queue(app, conn):
    create_plan(conn, LITX, seed=1)
    at = open_page(app, "queue", reviewer="ana", run=LITX)
    assert not at.exception
    shown = _texts(at)
    assert "This plan has 19 documents to sample" in shown
    assert "fewer than the 30 sampled documents an interval needs" in shown
