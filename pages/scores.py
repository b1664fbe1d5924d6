"""Scores: original vs audited metrics side by side, with the reviews behind the change, per type."""

import pandas as pd
import streamlit as st

from audit.rescoring import audit_run
from audit.store import run_row
from audit.views import review_counts_by_type
from ui.charts import original_vs_audited
from ui.metrics import SECTION_TITLES, headline
from ui.state import db, require_run

conn = db()
st.title("Scores: original vs audited")
run = require_run(conn, "scores.run")
row = run_row(conn, run)
audit = audit_run(conn, run)
headline(row["original_metrics"], audit.metrics)
rc = audit.review_counts
st.caption(f"{rc['reviewed']} of {row['n_decisions']} decisions reviewed · {rc['overruled']} overruled · "
           f"{rc['confirmed']} confirmed · {rc['conflicted']} conflicted · {rc['adjudicated']} adjudicated · "
           f"{rc['reviews']} review rows by {len(rc['reviewers'])} reviewer(s)")
if rc["reviewed"] == 0:
    st.info("No decision has been reviewed yet: audited = original. Review decisions on the Review queue or "
            "Abstract review pages.")

for section, title in SECTION_TITLES.items():
    o, a = row["original_metrics"][section], audit.metrics[section]
    table = pd.DataFrame([{
        "type": t, "P": o[t]["precision"], "P audited": a[t]["precision"], "R": o[t]["recall"],
        "R audited": a[t]["recall"], "F1": o[t]["f1"], "F1 audited": a[t]["f1"], "ΔF1": a[t]["f1"] - o[t]["f1"],
        "tp/fp/fn": f"{o[t]['tp']}/{o[t]['fp']}/{o[t]['fn']}" if "tp" in o[t] else "",
        "tp/fp/fn audited": f"{a[t]['tp']}/{a[t]['fp']}/{a[t]['fn']}" if "tp" in a[t] else "",
    } for t in o])
    st.markdown(f"**{title}**")
    st.dataframe(table, hide_index=True, key=f"scores.{section}", column_config={
        c: st.column_config.NumberColumn(c, format="%.4f", help="P = tp/(tp+fp), R = tp/(tp+fn), F1 = 2PR/(P+R); "
                                         "avg = unweighted mean over types (F1 mean of per-type F1s).")
        for c in ("P", "P audited", "R", "R audited", "F1", "F1 audited", "ΔF1")})

st.subheader("Reviews per decision type")
by_type = review_counts_by_type(conn, run, audit)
if by_type:
    st.dataframe(by_type, hide_index=True, key="scores.by_type")
else:
    st.info("This run has no decisions.")
st.subheader("F1 per type, original vs audited")
for col, (section, title) in zip(st.columns(len(SECTION_TITLES)), SECTION_TITLES.items(), strict=True):
    col.markdown(f"**{title}**")
    col.altair_chart(original_vs_audited(row["original_metrics"], audit.metrics, section),
                     key=f"scores.chart.{section}")
