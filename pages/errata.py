"""Gold errata: every gold item reviewers flagged as wrong or missing in the current run, with the proposed
corrections, the append-only history, and the errata file (JSON, CSV) for the benchmark's maintainers."""

import pandas as pd
import streamlit as st

from audit.errors import AuditError
from audit.outputs.errata_export import export_errata_csv, export_errata_json
from audit.review.errata import current_errata, history, withdraw_erratum
from ui import auth
from ui.decision_link import decision_param
from ui.entry import page_prologue
from ui.families import doc_id_title
from ui.state import current_view, link, reviewer
from ui.text import show_text

conn = page_prologue()
st.title("Gold errata")
run_view = current_view(conn)
run, task = run_view.name, run_view.task
st.markdown("Reviewers flag gold items that look wrong or missing (on the Document page, or with *Flag a gold "
            "error* in the review queue). Flags never change a score: they are collected here and exported for "
            "the benchmark's maintainers.")
flags = current_errata(conn, run_view)
if not flags:
    st.info("No gold item has been flagged in this run yet.")
    st.stop()
numbers = run_view.decision_numbers([f["decision_id"] for f in flags if f["decision_id"] is not None])
table = pd.DataFrame([{"id": f["id"], doc_id_title(task.name): f["doc_id"], "gold item": f["item"] or "(missing)",
                       "problem": f["problem"], "proposed correction": f["correction"] or "", "note": f["note"] or "",
                       "reviewer": f["reviewer"], "flagged (UTC)": f["created"][:19].replace("T", " "),
                       "open": link("document", doc=f["doc_id"], **decision_param(numbers[f["decision_id"]])
                                     if f["decision_id"] is not None else {})} for f in flags])
st.dataframe(table, hide_index=True, key="errata.table",
             column_config={"open": st.column_config.LinkColumn("open", display_text="review ›")})
c1, c2 = st.columns(2)
c1.download_button(f"Download the errata (JSON, {len(flags)})", export_errata_json(conn, run_view),
                   file_name=f"{run}.errata.json", mime="application/json", key="errata.json",
                   icon=":material/download:", on_click="ignore", width="stretch")
c2.download_button(f"Download the errata (CSV, {len(flags)})", export_errata_csv(conn, run_view),
                   file_name=f"{run}.errata.csv", mime="text/csv", key="errata.csv",
                   icon=":material/download:", on_click="ignore", width="stretch")

who = reviewer()
mine = [f for f in flags if f["reviewer"] == who]
if mine:
    with st.expander("Withdraw one of your flags"):
        pick = st.selectbox("Flag", [f["id"] for f in mine], key="errata.withdraw_pick",
                            format_func=lambda i: next(f"#{f['id']} · {f['doc_id']} · {f['item'] or '(missing)'}"
                                                       for f in mine if f["id"] == i))
        if st.button("Withdraw", key="errata.withdraw"):
            auth.guard("flag_erratum")
            try:
                withdraw_erratum(conn, run_view, pick, who, **auth.identity_columns())
                st.rerun()
            except AuditError as e:
                show_text(str(e), "error")
with st.expander("History (every flag and withdrawal, append-only)"):
    st.dataframe([{"id": h["id"], "document": h["doc_id"], "gold item": h["item"], "problem": h["problem"],
                   "correction": h["correction"] or "", "reviewer": h["reviewer"],
                   "when (UTC)": h["created"][:19].replace("T", " "), "withdrawal": bool(h["withdrawn"])}
                  for h in history(conn, run_view)], hide_index=True, key="errata.history")
