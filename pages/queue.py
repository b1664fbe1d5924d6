"""Review queue: one decision at a time, keyboard first.

The card lives in a fragment (`st.fragment`): a key press stores the review and re-renders only the card, so the
next decision is on screen without re-running the page. Keys: the label keys of the card, n / → next, p / ← back,
Backspace undoes this session's last review (for adjudicators too). A strip under the card says what the last key
stored and what it changed.
"""

from __future__ import annotations

import streamlit as st

from audit.errors import AuditError
from audit.queue import (
    BLIND_QUEUES,
    QUEUES,
    decision_view,
    describe_change,
    labelled_count,
    queue_ids,
    reviewer_progress_db,
)
from audit.rescoring import audit_run
from audit.reviews import add_review, current_labels
from audit.store import run_row
from audit.views import document
from scoring.families import get_task
from ui.decisions import review_card, shortcut_hint
from ui.errata import errata_popover
from ui.families import doc_noun, view
from ui.state import blind, db, is_blind_reviewer, link_params, require_run, reviewer, role
from ui.text import md_literal, show_text

IDS, POS, KEY, HISTORY, STRIP = "queue.ids", "queue.pos", "queue.key", "queue.history", "queue.strip"
TIGHT = """<style>
.block-container {padding-top: 3.2rem !important;}
.st-key-queue-head h1 {font-size: 1.7rem; padding: 0 0 0.1rem 0;}
</style>"""

conn = db()
run = require_run(conn)
row = run_row(conn, run)
task = get_task(row["task"])
noun = doc_noun(task.name)
who = reviewer()
hidden = is_blind_reviewer()
st.html(TIGHT)
with st.container(key="queue-head"):
    st.title("Review queue")
if not who:
    st.warning("Enter your reviewer name in the sidebar: the queue is personal (what *you* have not labelled).")

queues = {k: v for k, v in QUEUES.items() if not hidden or k in BLIND_QUEUES}
if st.session_state.get("queue.mode") not in queues:
    st.session_state["queue.mode"] = next(iter(queues))
c1, c2, c3, c4 = st.columns([1.6, 1.5, 1, 1])
mode = c1.selectbox("Queue", list(queues), format_func=lambda q: f"{q} — {queues[q]}", key="queue.mode")
all_types = [r[0] for r in conn.execute("SELECT DISTINCT type FROM decisions WHERE run_id = ? ORDER BY type",
                                        [row["id"]])]
types = c2.multiselect("Type", all_types, key="queue.types")
labels: list[str] = []
if not hidden:  # a filter on the judge's label would tell a blind reviewer the judge's answer
    judge_labels = list(dict.fromkeys(lab for s in task.label_schemes.values() for lab in s.judge_labels))
    labels = c3.multiselect("Judge label", judge_labels, key="queue.labels")
doc_filter = c4.text_input(f"{noun.capitalize()} id contains", key="queue.doc").strip()

key = (run, who, mode, tuple(types), tuple(labels), doc_filter, role(), hidden)
if st.session_state.get(KEY) != key:  # a new queue: read its ids once; the fragment then walks through them
    st.session_state[KEY] = key
    st.session_state[IDS] = queue_ids(conn, run, who, mode, types=types, judge_labels=labels, doc=doc_filter)
    st.session_state[POS] = 0
    st.session_state[HISTORY] = []
    st.session_state.pop(STRIP, None)


def _previous_label(d: dict, as_role: str) -> str | None:
    """The label an undo must restore: this reviewer's current one, or (adjudicator) the current adjudication."""
    humans, adjudicated = current_labels(d["reviews"])
    return adjudicated if as_role == "adjudicator" else humans.get(who)


@st.fragment
def review_panel() -> None:
    """The current decision's card, its keys, the progress line and the last-change strip (rerun on its own)."""
    fconn = db()
    ids: list[int] = st.session_state[IDS]
    pos = min(st.session_state.get(POS, 0), len(ids))
    as_role = role()
    total = row["n_decisions"]
    done = labelled_count(fconn, row["id"], who) if who else 0
    st.progress(done / total if total else 1.0,
                text=f"You have labelled {done} of {total} decisions · {len(ids)} in this queue")
    strip = st.session_state.get(STRIP)
    if strip:
        show_text(strip, "caption")
    if pos >= len(ids):
        st.success("Nothing left in this queue. Pick another queue or filter, or look at the Scores page."
                   if not ids else "You reached the end of this queue. Back (p) shows the decisions you labelled.")
        if ids and st.button("‹ back", key="queue.prev", shortcut="p"):
            st.session_state[POS] = len(ids) - 1
            st.rerun(scope="fragment")
        fconn.conn.close()
        return
    d = decision_view(fconn, row["id"], ids[pos])
    scheme = task.label_schemes[d["kind"]]
    st.markdown(f"**{md_literal(noun.capitalize())} {md_literal(d['doc'])}** · decision #{d['id']} · "
                f"{pos + 1} of {len(ids)}")

    def store(decision_id: int, label: str | None, note: str) -> None:
        before = audit_run(fconn, run).metrics
        prev = _previous_label(d, as_role)
        add_review(fconn, run, decision_id, label, who, note=note or None, blind=hidden and who not in d["human"],
                   role=as_role)
        after = audit_run(fconn, run).metrics
        title = scheme.title(label) if label is not None else None
        st.session_state[HISTORY].append({"id": decision_id, "kind": d["kind"], "pos": pos, "prev": prev,
                                          "role": as_role})
        # Blind: what a label changed would tell the reviewer what the judge and the others had said.
        st.session_state[STRIP] = (f"Stored #{decision_id} → {title or 'label withdrawn'}" if hidden else
                                   "Stored " + describe_change(task, decision_id, title, before, after))
        st.session_state[POS] = pos + 1

    if review_card(fconn, run, task.name, d, scheme, who, blind=blind(), role=as_role, shortcuts=True, store=store):
        fconn.conn.close()
        st.rerun(scope="fragment")
    nav = st.columns([1, 1, 1.4, 3])
    if nav[0].button("‹ back", key="queue.prev", shortcut="p", disabled=pos == 0,
                     help="The previous decision of this queue (also one you just labelled)."):
        st.session_state[POS] = pos - 1
        st.rerun(scope="fragment")
    if nav[1].button("next ›", key="queue.next", shortcut="n", help="Skip to the next decision without labelling."):
        st.session_state[POS] = pos + 1
        st.rerun(scope="fragment")
    history = st.session_state[HISTORY]
    if nav[2].button("↶ undo last", key="queue.undo", shortcut="backspace", disabled=not history,
                     help="Undo your last review in this queue (Backspace): restores the label you had before."):
        last = history.pop()
        try:
            before = audit_run(fconn, run).metrics
            add_review(fconn, run, last["id"], last["prev"], who, role=last["role"],
                       note="undo of the previous review")
            after = audit_run(fconn, run).metrics
            prev = task.label_schemes[last["kind"]].title(last["prev"]) if last["prev"] is not None else None
            st.session_state[STRIP] = (f"Undone: #{last['id']} → {prev or 'no label of yours'}" if hidden else
                                       "Undone: " + describe_change(task, last["id"], prev, before, after))
            st.session_state[POS] = last["pos"]
        except AuditError as e:
            show_text(str(e), "error")
        fconn.conn.close()
        st.rerun(scope="fragment")
    hide = hidden and who not in d["human"]
    with nav[3]:
        show_text("Keyboard: " + shortcut_hint(scheme, hide=hide) + " · n: next · p: back · Backspace: undo",
                  "caption")
    links = st.columns([1, 1, 1.5], vertical_alignment="center")
    links[0].page_link("pages/document.py", label=f"Open the whole {noun}", icon=":material/article:",
                       query_params=link_params(doc=d["doc"], decision=str(d["id"])))
    with links[1]:
        errata_popover(fconn, run, task.name, d["doc"], who, decision=d)
    preview = getattr(view(task.name), "preview", None)
    if preview is not None:
        preview(document(fconn, run, d["doc"])["payload"], d)
    fconn.conn.close()


review_panel()

if not hidden:  # labels per reviewer and their agreement with the judge would unblind a reviewer
    st.subheader("Reviewer progress")
    prog = reviewer_progress_db(conn, run)
    if prog:
        st.dataframe(prog, hide_index=True, key="queue.progress")
    else:
        st.info("Nobody has reviewed this run yet.")
