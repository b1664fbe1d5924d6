"""Runs: what Rejudge is, the runs in the database, and the form to score a new one."""

import pandas as pd
import streamlit as st

from audit.demo import DEMO_RUN
from audit.store import list_runs
from ui.newrun import new_run_form
from ui.state import db, link, short_spec

conn = db()
st.title("Rejudge — audit an LLM-judged evaluation")
st.markdown(
    "A **run** is one system's predictions scored against gold by a **judge**. Every atomic judgement the "
    "scorer relied on is a **decision** (CHIMERA: *does this predicted span mean the same as that gold span?*). "
    "Confirm or overrule decisions; the **audited** score (your labels where given, the judge's elsewhere) is "
    "recomputed at once beside the **original** one. Start with the demo run: open it, pick an abstract marked "
    "*partial* or *missed recombination*, and check the judge.")

with st.container(border=True):
    st.markdown("**Start here** — the demo run scores 216 CHIMERA test abstracts with a replayed LLM judge.")
    c1, c2, c3 = st.columns(3)
    c1.page_link("pages/overview.py", label="1 · See the run and its scores", icon=":material/dashboard:",
                 query_params={"run": DEMO_RUN})
    c2.page_link("pages/queue.py", label="2 · Review decisions one by one", icon=":material/checklist:",
                 query_params={"run": DEMO_RUN})
    c3.page_link("pages/agreement.py", label="3 · Check human–judge agreement", icon=":material/handshake:",
                 query_params={"run": DEMO_RUN})
    st.caption("Enter your name in the sidebar before reviewing. To audit your own run, use *Score a new run* "
               "below, or the CLI (`python -m audit score …`, see the README).")

runs = pd.DataFrame([{"run": r["name"], "task": r["task"], "judge": short_spec(r["judge_spec"]),
                      "abstracts": r["n_docs"], "decisions": r["n_decisions"], "created": r["created"][:19]}
                     for r in list_runs(conn)])
st.subheader("Runs")
if runs.empty:
    st.info("No runs yet: score one below.")
else:
    runs["open"] = [link("overview", run=r) for r in runs["run"]]
    st.dataframe(runs, hide_index=True, key="runs.table",
                 column_config={"open": st.column_config.LinkColumn("open", display_text="open ›")})
    pick = st.selectbox("Open a run", runs["run"].tolist(), key="runs.pick")
    if st.button("Open run", key="runs.open"):
        st.switch_page("pages/overview.py", query_params={"run": pick})

with st.expander("Score a new run", expanded=runs.empty):
    new = new_run_form(conn)
    if new:
        st.page_link("pages/overview.py", label=f"Open {new} ›", query_params={"run": new})
