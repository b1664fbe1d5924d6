"""One undo, note, serving-order and current-labels rule for both review cards and every page (issue 35):
`audit.review.reviews.undo_label` / `UNDO_NOTE` / `review_note` / `reviewer_labels`,
`scoring.stats.sampling.Plan.serving_order`. The classic card on the Document page used to withdraw the label on
undo (the queue and the browser card restore the one before) and to store its note untrimmed."""

from __future__ import annotations

from audit.review.reviews import UNDO_NOTE, add_review, reviewer_labels, undo_label
from audit.store.database import open_db
from audit.views import load_view
from scoring.stats.sampling import Plan, PlanBlock
from tests.app.conftest import open_page

DEMO, OTHER = "demo-chimera-mixed", "demo-chimera-smollm2"


def _r(i: int, who: str, label: str | None, role: str = "reviewer") -> dict:
    return {"id": i, "reviewer": who, "label": label, "role": role}


def test_undo_restores_the_label_held_before_the_undone_review() -> None:
    revs = [_r(1, "ana", "match"), _r(2, "bo", "no-match"), _r(3, "ana", "no-match"),
            _r(4, "rita", "match", "adjudicator"), _r(5, "rita", "no-match", "adjudicator")]
    assert undo_label(revs, 3, who="ana", role="reviewer") == "match"
    assert undo_label(revs, 1, who="ana", role="reviewer") is None
    assert undo_label(revs, 5, who="rita", role="adjudicator") == "match"


def test_the_plan_serves_take_all_strata_first_then_by_rank() -> None:
    blocks = (PlanBlock("a", "low", ("1",), 0), PlanBlock("b", "invalid", ("2",), 1), PlanBlock("c", "low", ("3",), 2),
              PlanBlock("d", "invalid", ("4",), 3))
    plan = Plan(0, blocks, frozenset({"invalid"}))
    assert [b.id for b in plan.serving_order()] == ["b", "d", "a", "c"]


def test_a_reviewers_current_labels_come_from_every_run_asking_the_question(app_db) -> None:
    db = open_db(app_db)
    a, b, c = [d["id"] for d in load_view(db, DEMO).decisions()[:3]]
    add_review(db, DEMO, a, "match", "ana")
    add_review(db, DEMO, b, "match", "ana")
    add_review(db, DEMO, b, None, "ana")  # withdrawn
    add_review(db, DEMO, c, "no-match", "bo")
    got = reviewer_labels(db, DEMO, "ana")
    assert got == {a: "match"}
    shared = reviewer_labels(db, OTHER, "ana")  # the same question, asked in the other run
    assert list(shared.values()) == ["match"] and set(shared) != {a}


def test_the_classic_cards_undo_and_note_follow_the_cards_rules(app, app_db) -> None:
    db = open_db(app_db)
    d = load_view(db, DEMO).decisions()[0]
    at = open_page(app, "document", reviewer="ana", run=DEMO, doc=d["doc"])
    at.text_input(key=f"review.note.{d['id']}").set_value("  both name one method  ")
    at.button(key=f"review.overrule.{d['id']}").click().run()
    overruled = reviewer_labels(db, DEMO, "ana")[d["id"]]
    at.button(key=f"review.confirm.{d['id']}").click().run()
    at.button(key=f"review.undo.{d['id']}").click().run()
    assert not at.exception and not at.error
    rows = [(r["label"], r["note"]) for r in load_view(db, DEMO).decision(d["id"])["reviews"] if r["reviewer"] == "ana"]
    assert rows[0] == (overruled, "both name one method")  # trimmed, as both cards store notes (review_note)
    assert rows[-1] == (overruled, UNDO_NOTE)  # back to the label before the undone one, not withdrawn
    assert reviewer_labels(db, DEMO, "ana") == {d["id"]: overruled}


def test_clicking_the_label_held_already_stores_nothing_unless_a_note_comes_with_it(app, app_db) -> None:
    # "✓ Confirm match (yours)" stayed clickable and each click stored one more identical row (31 rows of one
    # decision, counted as review rows on the Scores page)
    db = open_db(app_db)
    d = load_view(db, DEMO).decisions()[0]
    at = open_page(app, "document", reviewer="ana", run=DEMO, doc=d["doc"])

    def rows() -> list:
        return [(r["label"], r["note"]) for r in load_view(db, DEMO).decision(d["id"])["reviews"]
                if r["reviewer"] == "ana"]

    at.button(key=f"review.confirm.{d['id']}").click().run()
    assert len(rows()) == 1
    at.button(key=f"review.confirm.{d['id']}").click().run()
    at.button(key=f"review.confirm.{d['id']}").click().run()
    assert not at.exception and len(rows()) == 1
    assert any("You hold this label already" in c.value for c in at.caption), [c.value for c in at.caption]
    at.text_input(key=f"review.note.{d['id']}").set_value("checked the abstract again")
    at.button(key=f"review.confirm.{d['id']}").click().run()
    assert rows()[-1] == (d["judge"], "checked the abstract again") and len(rows()) == 2  # a note is worth a row
