"""The LitXBench document view renders a real paper (AppTest) and its review controls call ctx.review."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _app() -> None:
    import streamlit as st

    from scoring.families.base import Loaded
    from scoring.families.litxbench.family import LitXBenchTask
    from ui.families import DocumentContext
    from ui.families import litxbench as view

    task, d = LitXBenchTask(), "data/litxbench"
    loaded = task.load({"gold": f"{d}/gold", "pred": f"{d}/pred_process_perturb", "text": f"{d}/papers"})
    doc = next(x for x in loaded.docs if x["paper_id"] == "doi_10_3390__e18050189")
    decs, _ = task.decide(Loaded([doc]), task.make_judge("official"), None, None)
    counts = task.counts(doc, {(x.kind, x.type, x.left, x.right): x.judge for x in decs})
    rows = [{"id": k, "doc": x.doc, "kind": x.kind, "type": x.type, "left": x.left, "right": x.right,
             "judge": x.judge, "effective": x.judge, "detail": x.detail, "moot": False} for k, x in enumerate(decs)]
    st.session_state.setdefault("reviews", [])
    ctx = DocumentContext(run={}, doc={"doc_id": doc["paper_id"], "payload": doc, "counts": counts},
                          audited_counts=counts, decisions=rows,
                          review=lambda i, lab, note: st.session_state["reviews"].append((i, lab)))
    view.render_document(ctx)
    st.session_state["cards"] = [view.card_lines(r) for r in rows[:20]]


def test_document_view_renders_and_reviews():
    at = AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception
    assert len(at.dataframe) >= 3 and len(at.expander) == 1
    assert all(lines[0][0] == "question" for lines in at.session_state["cards"])
    labels = {b.label for b in at.button}  # the scheme's words, as the cards say them, not the stored labels
    assert {"match", "no match"} <= labels and "no-match" not in labels and "not-found" not in labels
    assert not any("[not-found]" in o or "[no-match]" in o for s in at.selectbox for o in s.options)
    at.button[0].click().run()
    assert not at.exception
    assert len(at.session_state["reviews"]) == 1
