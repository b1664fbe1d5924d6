"""AppTest for the audit pages: review queue, scores, agreement (with heatmap cell selection), export."""

import json

import pytest

from audit.reviews import add_review
from audit.store import open_db
from tests.app.conftest import open_page, table

DEMO = "demo-chimera-mixed"


@pytest.fixture
def reviewed(app, app_db):
    db = open_db(app_db)
    for i in range(1, 41):
        add_review(db, DEMO, i, "no-match" if i % 5 == 0 else "match", "ana")
        if i <= 20:
            add_review(db, DEMO, i, "no-match" if i % 4 == 0 else "match", "bo")
    return app


def test_queue_labels_one_decision_and_moves_on(app, app_db):
    at = open_page(app, "queue", reviewer="ana", run=DEMO)
    assert not at.exception
    first = next(b.key for b in at.button if b.key.startswith("review.overrule."))
    at.button(key=first).click().run()
    assert not at.exception
    at = open_page(at, "queue", reviewer="ana", run=DEMO)
    assert first not in [b.key for b in at.button]  # the queue moved on to the next unreviewed decision
    row = open_db(app_db).execute("SELECT reviewer, label FROM reviews").fetchone()
    assert row[0] == "ana" and row[1] in ("match", "no-match")
    assert table(at, "reviewer", "labelled")["labelled"].tolist() == [1]


def test_queue_conflicted_and_empty_state(reviewed):
    at = reviewed
    at.session_state["queue.mode"] = "conflicted"
    at = open_page(at, "queue", reviewer="cy", run=DEMO)
    assert not at.exception
    conflicted = [b.key for b in at.button if b.key.startswith("review.")]
    assert conflicted  # ana and bo disagree on some decisions
    at.session_state["queue.mode"] = "invalid"
    at = open_page(at, "queue", reviewer="cy", run=DEMO)
    assert any("Nothing left in this queue" in s.value for s in at.success)


def test_scores_page_shows_change_and_counts(reviewed):
    at = open_page(reviewed, "scores", run=DEMO)
    assert not at.exception
    by_type = table(at, "reviewed", "conflicted")
    assert by_type["reviewed"].sum() == 40
    assert by_type["conflicted"].sum() > 0
    deltas = [df.value["ΔF1"] for df in at.dataframe if "ΔF1" in df.value.columns]
    assert len(deltas) == 3 and any((d != 0).any() for d in deltas)
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")


def test_agreement_page_tables_and_heatmap_cell(reviewed):
    at = open_page(reviewed, "agreement", run=DEMO)
    assert not at.exception
    hvj = at.dataframe[0].value
    assert hvj.loc[hvj["group"] == "all", "n"].item() == 60
    hvh = at.dataframe[1].value
    assert hvh.loc[hvh["group"] == "all", "n"].item() == 20
    all_rows = table(at, "decision", "reviewer", "human")
    assert len(all_rows) == 60
    at.session_state["agreement.heatmap"] = {"selection": {"cell": [{"human": "no-match", "judge": "match"}]}}
    at.run()
    picked = table(at, "decision", "reviewer", "human")
    assert 0 < len(picked) < 60
    assert set(picked["human"]) == {"no-match"} and set(picked["judge"]) == {"match"}


def test_agreement_empty_state(app):
    at = open_page(app, "agreement", run=DEMO)
    assert any("No reviews yet" in i.value for i in at.info)


def test_export_page_json(reviewed):
    at = open_page(reviewed, "export", run=DEMO)
    at.button(key="export.prepare").click().run()
    assert not at.exception
    data = json.loads(at.session_state["export.payload"][2])
    assert data["reviews"]["reviewed"] == 40 and "human_vs_judge" in data["agreement"]
    assert data["audited"] != data["original"]


def test_blind_mode_hides_judge_and_adjudicator_settles(reviewed, app_db):
    # decision 4: ana said match, bo said no-match -> conflicted
    at = reviewed
    at.session_state["blind_mode"] = True
    at = open_page(at, "document", reviewer="cy", run=DEMO, doc="2210.01357")
    cards = " ".join(h.proto.body for h in at.get("html"))
    assert "hidden until you commit" in cards
    db = open_db(app_db)
    doc_of_4 = db.execute("SELECT doc_id FROM decisions WHERE id = 4").fetchone()[0]
    at.session_state["blind_mode"] = False
    at.session_state["adjudicator_mode"] = True
    at = open_page(at, "document", reviewer="cy", run=DEMO, doc=doc_of_4)
    assert "conflicted" in " ".join(h.proto.body for h in at.get("html"))
    at.button(key="review.overrule.4").click().run()
    assert not at.exception and not at.error
    role, label = db.execute("SELECT role, label FROM reviews WHERE reviewer = 'cy'").fetchone()
    assert role == "adjudicator"
    from audit.views import decisions
    d4 = next(d for d in decisions(db, DEMO) if d["id"] == 4)
    assert d4["source"] == "adjudicated" and d4["effective"] == label


def test_compare_page_lists_differences(app, app_db):
    from audit.runs import score_run
    from tests.conftest import GOLD, PRED_MIXED
    score_run(open_db(app_db), "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="mixed-exact")
    at = open_page(app, "compare")
    at.selectbox(key="compare.a").set_value(DEMO)
    at.selectbox(key="compare.b").set_value("mixed-exact")
    at.run()
    assert not at.exception and not at.error
    shared = next(m for m in at.metric if m.label == "Shared decisions")
    differ = next(m for m in at.metric if m.label == "Labels differ")
    assert int(shared.value) > int(differ.value) > 0
    assert len(table(at, "doc", "type", "left", "right")) == int(differ.value)


def test_compare_page_needs_two_runs(app):
    at = open_page(app, "compare")
    assert any("needs two runs" in i.value for i in at.info)
