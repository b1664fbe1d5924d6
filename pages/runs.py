"""Runs: what Rejudge is, the runs in the database, and the form to score a new one."""

import pandas as pd
import streamlit as st

from audit.demo import demo_runs, first_demo_run, load_demo
from audit.store import list_runs
from scoring.families import TASKS
from ui.newrun import new_run_form
from ui.state import current_run, db, is_blind_reviewer, link, link_params, short_spec
from ui.text import md_literal, show_text

conn = db()
st.title("Rejudge — audit an LLM-judged evaluation")
st.markdown(
    "A **run** is one system's outputs scored against gold by a **judge**. Every atomic judgement the scorer relied "
    "on is a **decision** (one judge question, e.g. *does this predicted span mean the same as that gold span?*). "
    "Confirm or overrule decisions; the **audited** score (your labels where given, the judge's elsewhere) is "
    "recomputed at once beside the **original** one.")

with st.container(border=True):
    first = first_demo_run()
    st.markdown("**Start here** — the bundled demo runs, scored on first start:")
    for task_name, demo in demo_runs():
        st.markdown(f"- **{md_literal(demo.name)}** ({md_literal(TASKS[task_name].title)}): {md_literal(demo.note)}")
    c1, c2, c3 = st.columns(3)
    c1.page_link("pages/overview.py", label="1 · See the first demo run and its scores", icon=":material/dashboard:",
                 query_params=link_params(run=first))
    c2.page_link("pages/queue.py", label="2 · Review decisions one by one", icon=":material/checklist:",
                 query_params=link_params(run=first))
    c3.page_link("pages/agreement.py", label="3 · Check human–judge agreement", icon=":material/handshake:",
                 query_params=link_params(run=first))
    st.caption("Enter your name in the sidebar before reviewing. To audit your own run, use *Score a new run* "
               "below, or the CLI (`python -m audit score …`, see the README).")
    have = {r["name"] for r in list_runs(conn)}
    missing = [d.name for _, d in demo_runs() if d.name not in have]
    if missing and getattr(conn, "read_only", False):
        st.caption("This database is read-only: it can be browsed and exported; the demo runs cannot be added.")
    elif missing:
        st.caption(f"Not in this database: {', '.join(missing)}.")
        if st.button("Load the demo runs", key="runs.load_demo", help="Score the bundled demo runs this database "
                     "lacks (offline judges, about 10–20 s); `python -m audit demo` does the same"):
            bar = st.progress(0.0, text="starting…")
            load_demo(conn, lambda done, total, name: bar.progress(
                done / total, text=f"{done} of {total} demo runs ready" + (f" · preparing {name}" if name else "")))
            st.rerun()



def headline_value(r: dict) -> str:
    """The family's headline numbers of a run (original, i.e. as the judge scored it), 4 decimals."""
    task = TASKS.get(r["task"])
    if task is None:
        return ""
    vals = [(cell.label, cell.value(r["original_metrics"])) for cell in task.headline]
    return " · ".join(f"{label} {'—' if v is None else format(v, '.4f')}" for label, v in vals)


hidden = is_blind_reviewer()  # the scores derive from the judge's labels
runs = pd.DataFrame([{"run": r["name"], "benchmark": TASKS[r["task"]].title if r["task"] in TASKS else r["task"],
                      "judge": short_spec(r["judge_spec"]),
                      **({} if hidden else {"scores (original)": headline_value(r)}), "documents": r["n_docs"],
                      "decisions": r["n_decisions"], "created": r["created"][:19].replace("T", " ")}
                     for r in list_runs(conn)])
just = st.session_state.pop("runs.just_scored", None)
if just:
    show_text(f"Scored and stored run {just}.", "success")
    st.page_link("pages/overview.py", label=f"Open {just} ›", query_params=link_params(run=just))
st.subheader("Runs")
if runs.empty:
    st.info("No runs yet: score one below.")
else:
    runs["open"] = [link("overview", run=r) for r in runs["run"]]
    st.dataframe(runs, hide_index=True, key="runs.table",
                 column_config={"open": st.column_config.LinkColumn("open", display_text="open ›")})
    names = runs["run"].tolist()
    pick = st.selectbox("Open a run", names, key="runs.pick",
                        index=names.index(current_run()) if current_run() in names else 0)
    if st.button("Open run", key="runs.open"):
        st.switch_page("pages/overview.py", query_params=link_params(run=pick))

with st.expander("Score a new run", expanded=runs.empty):
    new = new_run_form(conn)
    if new:
        st.session_state["runs.just_scored"] = new
        st.query_params["run"] = new  # the new run becomes the session's current run
        st.rerun()
