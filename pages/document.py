"""One abstract: highlighted text, gold vs predicted relation, and every judge decision, reviewable."""

import html

import streamlit as st

from audit.rescoring import audit_run
from audit.store import run_row
from audit.views import decisions, document, document_ids
from scoring.families.chimera.scorer import doc_from_json, match_summary
from ui.decisions import review_card
from ui.highlight import LEGEND, highlight_html, locate
from ui.metrics import headline
from ui.state import blind, db, require_run, reviewer, role, synced_select

conn = db()
st.title("Abstract review")
run = require_run(conn, "document.run")
row = run_row(conn, run)
audit = audit_run(conn, run)
doc_ids = document_ids(conn, run)
wanted = st.query_params.get("doc")
if wanted and wanted not in doc_ids:
    st.error(f"Abstract {wanted!r} is not in run {run!r}.")
    wanted = None
if not doc_ids:
    st.info("This run has no abstracts.")
    st.stop()
doc_id = synced_select("Abstract (paper id)", doc_ids, "document.doc", "doc")

info = document(conn, run, doc_id)
doc, pred = doc_from_json(info["payload"])
decs = list(decisions(conn, run, doc_id))
who = reviewer()
# Blind: anything derived from the judge's or others' labels stays hidden until this reviewer has labelled
# every decision of the abstract (outcome, matches and scores would give the answers away).
hide_derived = blind() and role() == "reviewer" and any(who not in d["human"] for d in decs)
if hide_derived:
    st.info("Blind review: the outcome, the matches and the scores are hidden until you have labelled every "
            "decision on this abstract.")
else:
    headline(row["original_metrics"], audit.metrics)
    outcome = audit.changed_docs.get(doc_id, info["outcome"])
    st.markdown(f"**Outcome:** {outcome}" + (f" (original: {info['outcome']})" if outcome != info["outcome"] else "")
                + f" · gold class `{html.escape(doc.document_class or '?')}`")


def relation_html(rels: tuple, empty: str) -> str:
    if not rels:
        return f"<i>{empty}</i>"
    out = []
    for r in rels:
        items = "".join(f"<li><small>{html.escape(t)}</small>: {html.escape(v)}</li>" for t, v in r.entities)
        out.append(f"<b>{html.escape(r.type)}</b><ul>{items}</ul>")
    return "".join(out)


c1, c2 = st.columns(2)
with c1:
    st.markdown("**Gold relation**")
    st.html(relation_html(doc.gold, "no recombination"))
with c2:
    st.markdown("**Predicted relation**")
    st.html(relation_html(pred.relations, "no recombination" + (" (no prediction in the file)"
                                                                 if pred.line is None else "")))

gold_ranges = [(s.start, s.end, s.type) for s in doc.gold_spans]
pred_ranges, not_found = [], []
for t, v in dict.fromkeys(e for r in pred.relations for e in r.entities):
    hits = locate(doc.text, v)
    pred_ranges += [(s, e, t) for s, e in hits]
    if not hits:
        not_found.append(v)
st.html(LEGEND)
st.html(highlight_html(doc.text, gold_ranges, pred_ranges))
if not_found:
    st.caption("Predicted spans not found verbatim in the text: " + "; ".join(html.escape(v) for v in not_found))



def entity_list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{x}</li>" for x in items) + "</ul>" if items else "<i>none</i>"


if not hide_derived:
    summary = match_summary(doc, pred, {(d["type"], d["left"], d["right"]): d["effective"] for d in decs})
    e = html.escape
    c1, c2, c3 = st.columns(3)
    c1.markdown("**Matched pairs** (effective)")
    c1.html(entity_list([f"{e(p)} ⇄ {e(g)} <small>({e(t)})</small>" for t, p, g in summary["matched"]]))
    c2.markdown("**Unmatched predicted entities**")
    c2.html(entity_list([f"{e(v)} <small>({e(t)})</small>" for t, v in summary["unmatched_pred"]]))
    c3.markdown("**Unmatched gold entities**")
    c3.html(entity_list([f"{e(v)} <small>({e(t)})</small>" for t, v in summary["unmatched_gold"]]))

st.subheader(f"Judge decisions ({len(decs)})")
if not decs:
    st.info("No decisions: the judge is only asked about same-type (predicted, gold) span pairs, and this abstract "
            "has none.")
if decs and not who:
    st.warning("Enter your reviewer name in the sidebar to confirm or overrule decisions.")
focus = st.query_params.get("decision")
decs.sort(key=lambda d: str(d["id"]) != focus)  # a linked decision comes first
stored = False
for d in decs:
    stored |= review_card(conn, run, d, ("match", "no-match"), who, blind=blind(), role=role(),
                          focused=str(d["id"]) == focus)
if stored:
    st.rerun()
