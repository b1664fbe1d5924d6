"""The blind rule (ui/blind.py), one rule per decision on every surface: a blind reviewer sees a decision without
the judge's and others' answers until they hold a label on it, a review is recorded blind exactly then, and an
adjudicator sees everything. The Document page used to record blind per document (every review made while any
decision of the document was unlabelled); it records per decision now, as both cards do."""

from __future__ import annotations

import pytest

from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import load_view
from tests.app.conftest import open_page
from ui.blind import blind_decision, document_is_blind, is_blind

IDEATION = "demo-ideation-si2024-humans"


@pytest.mark.parametrize(("blind", "role", "labelled", "want"), [
    (True, "reviewer", False, True), (True, "reviewer", True, False), (True, "adjudicator", False, False),
    (False, "reviewer", False, False)])
def test_the_rule_per_decision(blind: bool, role: str, labelled: bool, want: bool) -> None:
    d = {"human": {"ana": "match"} if labelled else {"bo": "match"}}
    assert is_blind(d, blind=blind, role=role, who="ana") is want


def test_a_document_is_blind_while_any_decision_is() -> None:
    decs = [{"human": {"ana": "x"}}, {"human": {}}]
    assert document_is_blind(decs, blind=True, role="reviewer", who="ana")
    assert not document_is_blind(decs[:1], blind=True, role="reviewer", who="ana")


def test_the_blind_decision_keeps_only_the_question() -> None:
    d = {"id": 1, "kind": "k", "judge": "yes", "effective": "yes", "source": "judge", "human": {"bo": "no"},
         "reviews": [{"reviewer": "bo"}], "moot": False, "detail": {"sides": ["gold"], "pred_gold": {"value": "yes"}}}
    seen = blind_decision(d, ("sides",))
    assert seen["detail"] == {"sides": ["gold"]} and seen["human"] == {} and seen["judge"] == ""
    assert "moot" not in seen and seen["id"] == 1


def _blind_flags(db_path, run: str, who: str) -> dict[int, bool]:
    view = load_view(open_db(db_path), run)
    return {d["id"]: bool(r["blind"]) for d in view.decisions() for r in d["reviews"] if r["reviewer"] == who}


def test_the_document_page_records_blind_per_decision(app, app_db) -> None:
    db = open_db(app_db)
    view = load_view(db, IDEATION)
    doc = view.decisions()[0]["doc"]
    first, second = [d for d in view.decisions(doc) if d["kind"] == "rating"][:2]
    add_review(db, IDEATION, first["id"], "3", "blindy", blind=True)  # labelled already: its card shows the judge
    db.conn.close()
    app.session_state["blind_mode"] = True
    at = open_page(app, "document", reviewer="blindy", run=IDEATION, doc=doc)
    at.button(key=f"ide-{first['id']}-4").click().run()
    at.button(key=f"ide-{second['id']}-2").click().run()
    assert not at.exception
    rows = load_view(open_db(app_db), IDEATION).decision(first["id"])["reviews"]
    assert [(r["label"], bool(r["blind"])) for r in rows if r["reviewer"] == "blindy"] == [("3", True), ("4", False)]
    assert _blind_flags(app_db, IDEATION, "blindy")[second["id"]] is True
