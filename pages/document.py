"""One document (abstract, paper, question, query): the family's view of it and every decision, reviewable."""

import streamlit as st

from audit.review.errata import current_errata
from audit.review.reviews import add_review, review_note
from ui import auth
from ui.blind import document_is_blind, is_blind
from ui.decision_link import LEGACY_URL_DECISION, URL_DECISION, linked_decision
from ui.decisions import review_card
from ui.entry import page_prologue
from ui.errata import errata_form
from ui.families import DocumentContext, doc_id_title, doc_noun, family_view
from ui.metrics import headline
from ui.paging import page_picker
from ui.state import blind, current_view, reviewer, role, synced_select
from ui.text import md_literal, show_text

conn = page_prologue()
page = current_view(conn)
run, task = page.name, page.task
noun = doc_noun(task.name)
st.title(f"{noun.capitalize()} review")
doc_ids = page.document_ids()
wanted = st.query_params.get("doc")
if wanted and wanted not in doc_ids:
    show_text(f"{noun.capitalize()} {wanted!r} is not in run {run!r}.", "error")
if not doc_ids:
    st.info(f"This run has no {noun.plural}.")
    st.stop()
doc_id = synced_select(f"{noun.capitalize()} ({doc_id_title(task.name)})", doc_ids, "document.doc", "doc")
pos = doc_ids.index(doc_id)
nav = st.columns([1, 1, 6])
if nav[0].button("‹ previous", key="document.prev", disabled=pos == 0):
    st.query_params["doc"] = doc_ids[pos - 1]  # the select follows the URL (ui.state.synced_select)
    st.rerun()
if nav[1].button("next ›", key="document.next", disabled=pos == len(doc_ids) - 1):
    st.query_params["doc"] = doc_ids[pos + 1]
    st.rerun()

info = page.document_review(doc_id)
decs = info["decisions"]
who = reviewer()
# Blind: anything derived from the judge's or others' labels stays hidden until this reviewer has labelled
# every decision of the document (outcome, matches and scores would give the answers away).
hide_derived = document_is_blind(decs, blind=blind(), role=role(), who=who)
if hide_derived:
    st.info(f"Blind review: the outcome, the matches and the scores are hidden until you have labelled every "
            f"decision on this {noun}.")
else:
    st.caption("Run-level scores (the whole run, audited, with the change from the original); this "
               f"{noun}'s own counts are below its text.")
    headline(task, page.original_metrics, page.audit.metrics)
    outcome = info["audited_outcome"]
    st.markdown(f"**Outcome:** {md_literal(outcome)}" +
                (f" (original: {md_literal(info['outcome'])})" if outcome != info["outcome"] else ""))


def store(decision_id: int, label: str, note: str = "") -> None:
    """A review from the family's own controls, recorded blind per decision (the blind rule), as the cards do."""
    auth.check(auth.review_action(role()))
    d = next(x for x in decs if x["id"] == decision_id)
    add_review(conn, run, decision_id, label, who, note=review_note(note),
               blind=is_blind(d, blind=blind(), role=role(), who=who), role=role(), **auth.identity_columns())


ctx = DocumentContext(page.row, info, info["audited_counts"], decs, store, who, blind(), role() == "adjudicator",
                      extra={"hide_derived": hide_derived, "original_counts": info["counts"]})
family_view(task.name).render_document(ctx)

flags = current_errata(conn, page, doc_id)
with st.expander(f"Flag a gold error on this {noun}" + (f" ({len(flags)} flagged)" if flags else ""),
                 expanded=False):
    if flags:
        st.dataframe([{"gold item": f["item"], "problem": f["problem"], "correction": f["correction"] or "",
                       "reviewer": f["reviewer"], "note": f["note"] or ""} for f in flags],
                     hide_index=True, key="document.errata")
    errata_form(conn, page, task.name, doc_id, who, key="document.errata")  # type: ignore[arg-type]

st.subheader(f"Decisions ({len(decs)})", help=family_view(task.name).DECISIONS_HELP)
if not decs:
    st.info(f"No decisions on this {noun}.")
if decs and not who:
    st.warning("Enter your reviewer name in the sidebar to confirm or overrule decisions.")
focus = linked_decision(page, st.query_params)
if focus is not None and LEGACY_URL_DECISION in st.query_params:  # an old link (the id): the URL shows the number
    del st.query_params[LEGACY_URL_DECISION]
    st.query_params[URL_DECISION] = str(page.decision_numbers([focus])[focus])
decs = sorted(decs, key=lambda d: d["id"] != focus)  # a linked decision comes first
start, stop = page_picker(len(decs), key=f"document.page.{doc_id}")
numbers = page.decision_numbers([d["id"] for d in decs[start:stop]])
stored = False
for d in decs[start:stop]:
    stored |= review_card(conn, run, task.name, d, task.label_schemes[d["kind"]], who, blind=blind(), role=role(),
                          focused=d["id"] == focus, number=numbers[d["id"]])
if stored:
    st.rerun()
