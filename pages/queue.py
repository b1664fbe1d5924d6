"""Review queue: one decision at a time, with keyboard shortcuts, filtered by queue, type, judge label, document."""

import html

import streamlit as st

from audit.queue import QUEUES, queue, reviewer_progress
from audit.rescoring import audit_run
from audit.store import run_row
from audit.views import decisions, document
from scoring.families.chimera.scorer import ENTITY_TYPES
from ui.decisions import review_card
from ui.highlight import highlight_html, locate
from ui.metrics import headline
from ui.state import blind, db, require_run, reviewer, role

conn = db()
st.title("Review queue")
run = require_run(conn, "queue.run")
who = reviewer()
if not who:
    st.warning("Enter your reviewer name in the sidebar: the queue is personal (what *you* have not labelled).")

c1, c2, c3, c4 = st.columns([1.6, 1.5, 1, 1])
mode = c1.selectbox("Queue", list(QUEUES), format_func=lambda q: f"{q} — {QUEUES[q]}", key="queue.mode")
types = c2.multiselect("Entity type", ENTITY_TYPES, key="queue.types")
labels = c3.multiselect("Judge label", ["match", "no-match", "invalid"], key="queue.labels")
doc_filter = c4.text_input("Paper id contains", key="queue.doc")

all_decs = list(decisions(conn, run))
items = queue(all_decs, who, mode, types=types, judge_labels=labels, doc=doc_filter.strip())
row = run_row(conn, run)
done = sum(1 for d in all_decs if who in d["human"]) if who else 0
st.progress(done / row["n_decisions"] if row["n_decisions"] else 1.0,
            text=f"You have labelled {done} of {row['n_decisions']} decisions · {len(items)} in this queue")
if not items:
    st.success("Nothing left in this queue. Pick another queue or filter, or look at the Scores page.")
else:
    skip = st.session_state.setdefault("queue.skip", 0) % len(items)
    d = items[skip]
    info = document(conn, run, d["doc"])
    text = info["payload"]["text"]
    st.markdown(f"**Paper {html.escape(d['doc'])}** · decision #{d['id']} · {skip + 1} of {len(items)}")
    st.page_link("pages/document.py", label="Open the whole abstract", icon=":material/article:",
                 query_params={"run": run, "doc": d["doc"], "decision": str(d["id"])})
    gold = [(s, e, "gold") for s, e in locate(text, d["right"])]
    pred = [(s, e, "predicted") for s, e in locate(text, d["left"])]
    st.html(highlight_html(text, gold, pred))
    if review_card(conn, run, d, ("match", "no-match"), who, blind=blind(), role=role(), shortcuts=True):
        st.rerun()
    if st.button("Skip → next", key="queue.next", shortcut="n", help="Keyboard: a agree (confirm), o overrule, n next"):
        st.session_state["queue.skip"] = skip + 1
        st.rerun()
    st.caption("Keyboard: **a** agree with the judge (confirm) · **o** overrule · **n** next")

audit = audit_run(conn, run)
with st.expander("Scores so far (original vs audited)"):
    headline(row["original_metrics"], audit.metrics)
st.subheader("Reviewer progress")
prog = reviewer_progress(all_decs)
if prog:
    st.dataframe(prog, hide_index=True, key="queue.progress")
else:
    st.info("Nobody has reviewed this run yet.")
