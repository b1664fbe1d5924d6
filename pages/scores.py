"""Scores: original vs audited metrics side by side, with the reviews behind the change, per type."""

import streamlit as st

from audit.rescoring import audit_run
from audit.store import run_row
from audit.views import review_counts_by_type
from scoring.families import get_task
from ui.charts import original_vs_audited
from ui.families import kind_title
from ui.metrics import comparison_rows, headline, section_tables
from ui.state import blind_guard, db, require_run

conn = db()
st.title("Scores: original vs audited")
run = require_run(conn)
blind_guard("scores")
row = run_row(conn, run)
task = get_task(row["task"])
audit = audit_run(conn, run)
headline(task, row["original_metrics"], audit.metrics)
rc = audit.review_counts
st.caption(f"{rc['reviewed']} of {row['n_decisions']} decisions reviewed · {rc['overruled']} overruled · "
           f"{rc['confirmed']} confirmed · {rc['conflicted']} conflicted · {rc['adjudicated']} adjudicated · "
           f"{rc['reviews']} review rows by {len(rc['reviewers'])} reviewer(s)")
if rc["reviewed"] == 0:
    st.info("No decision has been reviewed yet: audited = original. Review decisions on the Review queue or "
            "the document review page.")
section_tables(task, row["original_metrics"], audit.metrics, key="scores")

st.subheader("Reviews per decision type")
by_type = [{"decision kind": kind_title(task.name, r.pop("kind")), **r}
           for r in review_counts_by_type(conn, run, audit)]
if by_type:
    st.dataframe(by_type, hide_index=True, key="scores.by_type")
else:
    st.info("This run has no decisions.")
rows = comparison_rows(task, row["original_metrics"], audit.metrics)
if "f1" in rows and "f1 audited" in rows:
    st.subheader("F1 per type, original vs audited")
    sections = list(dict.fromkeys(rows["section"]))
    for col, section in zip(st.columns(len(sections)), sections, strict=True):
        col.markdown(f"**{section}**")
        col.altair_chart(original_vs_audited(rows, section), key=f"scores.chart.{section}", width="stretch")
