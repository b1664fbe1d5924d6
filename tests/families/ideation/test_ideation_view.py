"""The ideation document view and review card: ideas side by side, ratings and both ordered verdicts, review
buttons, blind mode, user text kept literal."""

from streamlit.testing.v1 import AppTest


def _page(blind: bool) -> None:
    import streamlit as st

    from scoring.families.ideation.family import IdeationTask
    from tests.conftest import FIXTURES
    from ui.families import DocumentContext
    from ui.families.ideation import render_document

    fix = FIXTURES / "ideation"
    task = IdeationTask()
    loaded = task.load({"ideas": str(fix / "ideas.jsonl"), "absolute": str(fix / "absolute.jsonl"),
                        "pairwise": str(fix / "pairwise.jsonl")})
    decisions, _ = task.decide(loaded, task.make_judge("file"), None, None)
    doc = loaded.docs[0]  # q1: three ideas
    rows = [{"id": n, "doc": d.doc, "kind": d.kind, "type": d.type, "left": d.left, "right": d.right,
             "judge": d.judge, "effective": d.judge, "detail": d.detail}
            for n, d in enumerate(decisions, 1) if d.doc == "q1"]
    payload = task.payload(doc)
    st.session_state.setdefault("reviews", [])
    ctx = DocumentContext(run={}, doc={"doc": "q1", "payload": payload, "counts": task.counts(payload, {})},
                          audited_counts=task.counts(payload, {}), decisions=rows,
                          review=lambda i, label, note: st.session_state["reviews"].append((i, label, note)),
                          blind=blind, extra={"hide_derived": blind})  # the page's blind rule: hidden
    render_document(ctx)


def _run(blind=False) -> AppTest:
    at = AppTest.from_function(_page, args=(blind,), default_timeout=30).run()
    assert not at.exception
    return at


def test_ratings_and_both_verdicts_are_shown():
    at = _run()
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "novelty · judge 5 · now 5" in shown
    assert "other shown first → other won" in shown and "ours shown first → ours won" in shown
    # 3 ideas x 2 criteria x 5 rating buttons + 3 pairs x 2 criteria x 3 verdict buttons
    assert len(at.button) == 30 + 18


def test_buttons_store_reviews_with_the_note():
    at = _run()
    at.text_input[0].input("clearly better").run()
    at.button(key="ide-1-4").click().run()
    assert at.session_state["reviews"] == [(1, "4", "clearly better")]
    comparison = next(b for b in at.button if b.key.endswith("-tie"))
    comparison.click().run()
    assert at.session_state["reviews"][-1][1] == "tie"


def test_blind_review_hides_the_judge():
    at = _run(blind=True)
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "judge" not in shown and "won" not in shown
    assert not at.expander


def test_idea_text_is_rendered_literally():
    at = _run()
    shown = [m.value for m in at.markdown]
    assert any(r"\<b\>curated\<\/b\> data \& \*markdown\* \[link\]\(x\)" in v for v in shown)
    assert not any("[link](x)" in v for v in shown)


def test_card_lines():
    from ui.families.ideation import card_lines

    rating = {"kind": "rating", "type": "novelty", "left": "ours", "right": "",
              "detail": {"score": 4, "status": "ok", "rationale": "new"}}
    assert card_lines(rating) == [("criterion", "novelty"), ("system", "ours"), ("judge", "4"), ("rationale", "new")]
    assert card_lines(rating, blind=True) == [("criterion", "novelty"), ("system", "ours")]
    comp = {"kind": "comparison", "type": "novelty", "left": "base", "right": "ours",
            "detail": {"calls": [{"first": "base", "second": "ours", "verdict": "second", "rationale": "r1"},
                                 {"first": "ours", "second": "base", "verdict": "missing"}]}}
    assert card_lines(comp) == [("criterion", "novelty"), ("idea a", "base"), ("idea b", "ours"),
                                ("call 1", "base shown first → ours won"), ("call 1 rationale", "r1"),
                                ("call 2", "ours shown first → not asked")]
