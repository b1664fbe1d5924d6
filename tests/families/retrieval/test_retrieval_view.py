"""The retrieval document view and review card: ranks per tie policy, review buttons, user text kept literal."""

from streamlit.testing.v1 import AppTest

from tests.families.retrieval.rankings import line


def _page(rec: dict, accepted: list[str], blind: bool) -> None:
    import streamlit as st

    from scoring.families.retrieval.family import RetrievalTask
    from scoring.families.retrieval.judge import GoldOnlyJudge
    from scoring.families.retrieval.load import parse_line
    from scoring.families.retrieval.review import decide
    from ui.families import DocumentContext
    from ui.families.retrieval import render_document

    task = RetrievalTask()
    q, _ = parse_line("t.jsonl", 1, rec)
    decisions, _ = decide([q], GoldOnlyJudge())
    rows = [{"id": n, "doc": d.doc, "kind": d.kind, "type": d.type, "left": d.left, "right": d.right,
             "judge": d.judge, "effective": "acceptable" if d.left in accepted else d.judge, "detail": d.detail}
            for n, d in enumerate(decisions, 1)]
    payload = task.payload(q)
    labels = {(r["kind"], r["type"], r["left"], r["right"]): r["effective"] for r in rows}
    st.session_state.setdefault("reviews", [])
    ctx = DocumentContext(run={}, doc={"doc": q.id, "payload": payload, "counts": task.counts(payload, {})},
                          audited_counts=task.counts(payload, labels), decisions=rows,
                          review=lambda i, label, note: st.session_state["reviews"].append((i, label, note)),
                          blind=blind, extra={"hide_derived": blind})  # the page's blind rule: hidden
    render_document(ctx)


REC = line([0.9, 0.8, 0.8, 0.8, 0.5], 2, qid="q1", candidates_text=["**bold** [x](http://e.vil)", "b", "c", "d",
                                                                      "e"])


def _run(accepted=(), blind=False) -> AppTest:
    at = AppTest.from_function(_page, args=(REC, list(accepted), blind), default_timeout=30).run()
    assert not at.exception
    return at


def test_ranks_per_policy_original_and_audited():
    at = _run(accepted=["c0"])
    df = at.dataframe[0].value
    assert list(df["tie policy"]) == ["mean of tie block", "optimistic", "pessimistic"]
    assert list(df["rank (as ranked)"]) == ["3", "2", "4"]
    assert list(df["rank (audited)"]) == ["2", "1", "3"]


def test_blind_review_hides_the_audited_ranks():
    df = _run(blind=True).dataframe[0].value
    assert "rank (audited)" not in df.columns


def test_buttons_store_reviews_with_the_note():
    at = _run()
    assert len(at.button) == 6  # c0, c1, c3: acceptable / not acceptable
    assert [x.label for x in at.button[:2]] == ["acceptable", "not acceptable"]
    shown = [m.value for m in at.markdown]
    assert any(v.endswith("not acceptable") for v in shown) and not any("not\\-acceptable" in v for v in shown)
    at.text_input[0].input("same thing").run()
    at.button[0].click().run()
    assert at.session_state["reviews"] == [(1, "acceptable", "same thing")]


def test_candidate_text_is_rendered_literally():
    at = _run()
    shown = [m.value for m in at.markdown]
    # escaped, and the address broken by a word joiner so that no renderer links it (ui.text.md_literal)
    assert any("\\*\\*bold\\*\\* \\[x\\]\\(http\u2060\\:\\/\\/e\\.vil\\)" in v for v in shown)
    assert not any("[x](http" in v for v in shown)


def test_card_lines():
    from ui.families.retrieval import card_lines

    d = {"type": "combination", "left": "c0", "right": "c2",
         "detail": {"rank": 1, "text": "a", "tied_with_gold": False, "anchor": "x", "gold": "g", "gold_rank": 3,
                    "score": 0.9, "answer": {"value": "no", "rationale": "only the gold"}}}
    assert card_lines(d) == [("relation", "combination"), ("anchor", "x"), ("candidate", "a"),
                             ("candidate rank", "1"), ("score", "0.9"), ("gold", "g (rank 3)"),
                             ("judge", "only the gold")]
    assert ("judge", "only the gold") not in card_lines(d, blind=True)
    d["detail"]["gold_ranks"] = [3, 3]
    assert ("gold", "g (rank 3)") in card_lines(d)
    d["detail"] |= {"gold_rank": 378, "gold_ranks": [5, 573]}  # a tie: its place in the list is no rank
    assert ("gold", "g (tied at ranks 5–573; 378th in the list)") in card_lines(d)
