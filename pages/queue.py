"""Review queue: one decision at a time, with keyboard shortcuts, filtered by queue, type, judge label, document."""

import streamlit as st

from audit.queue import BLIND_QUEUES, QUEUES, queue, reviewer_progress
from audit.store import run_row
from audit.views import decisions, document
from scoring.families import get_task
from ui.decisions import review_card, shortcut_hint
from ui.families import doc_noun, view
from ui.state import blind, db, require_run, reviewer, role
from ui.text import md_literal

conn = db()
st.title("Review queue")
run = require_run(conn, "queue.run")
row = run_row(conn, run)
task = get_task(row["task"])
noun = doc_noun(task.name)
who = reviewer()
is_blind = blind() and role() == "reviewer"
if not who:
    st.warning("Enter your reviewer name in the sidebar: the queue is personal (what *you* have not labelled).")

all_decs = list(decisions(conn, run))
queues = {k: v for k, v in QUEUES.items() if not is_blind or k in BLIND_QUEUES}
c1, c2, c3, c4 = st.columns([1.6, 1.5, 1, 1])
mode = c1.selectbox("Queue", list(queues), format_func=lambda q: f"{q} — {queues[q]}", key="queue.mode")
types = c2.multiselect("Type", sorted({d["type"] for d in all_decs}), key="queue.types")
labels: list[str] = []
if not is_blind:
    judge_labels = list(dict.fromkeys(lab for s in task.label_schemes.values() for lab in s.judge_labels))
    labels = c3.multiselect("Judge label", judge_labels, key="queue.labels")
doc_filter = c4.text_input(f"{noun.capitalize()} id contains", key="queue.doc")

items = queue(all_decs, who, mode, types=types, judge_labels=labels, doc=doc_filter.strip())
done = sum(1 for d in all_decs if who in d["human"]) if who else 0
st.progress(done / len(all_decs) if all_decs else 1.0,
            text=f"You have labelled {done} of {len(all_decs)} decisions · {len(items)} in this queue")
if not items:
    st.success("Nothing left in this queue. Pick another queue or filter, or look at the Scores page.")
else:
    skip = st.session_state.setdefault("queue.skip", 0) % len(items)
    d = items[skip]
    scheme = task.label_schemes[d["kind"]]
    st.markdown(f"**{md_literal(noun.capitalize())} {md_literal(d['doc'])}** · decision #{d['id']} · "
                f"{skip + 1} of {len(items)}")
    if review_card(conn, run, task.name, d, scheme, who, blind=blind(), role=role(), shortcuts=True):
        st.rerun()
    if st.button("Skip → next", key="queue.next", shortcut="n"):
        st.session_state["queue.skip"] = skip + 1
        st.rerun()
    hide = is_blind and who not in d["human"]
    st.caption("Keyboard: " + md_literal(shortcut_hint(scheme, hide=hide) + " · n: next"))
    st.page_link("pages/document.py", label=f"Open the whole {noun}", icon=":material/article:",
                 query_params={"run": run, "doc": d["doc"], "decision": str(d["id"])})
    preview = getattr(view(task.name), "preview", None)
    if preview is not None:
        preview(document(conn, run, d["doc"])["payload"], d)

if not is_blind:
    st.subheader("Reviewer progress")
    prog = reviewer_progress(all_decs)
    if prog:
        st.dataframe(prog, hide_index=True, key="queue.progress")
    else:
        st.info("Nobody has reviewed this run yet.")
