"""Runs: what Rejudge is, the runs in the database, and the form to score a new one."""

import streamlit as st

from audit.demo import demo_note, first_demo_run, load_demo
from ui import auth
from ui.assignments import blind_assignment_editor, review_assignment_editor
from ui.entry import page_prologue
from ui.first_start import demo_progress
from ui.framework_import import framework_import_form
from ui.newrun import new_run_form
from ui.owner_only import role_button
from ui.runs_table import demo_lines, runs_frame
from ui.state import blind_on, current_run, is_blind_reviewer, link_params, reviewer
from ui.text import md_literal, show_text

conn = page_prologue()
st.title("Rejudge — audit an LLM-judged evaluation")
st.markdown(
    "A **run** is one system's outputs scored against gold by a **judge**. Every atomic judgement the scorer relied "
    "on is a **decision** (one judge question, e.g. *does this predicted span mean the same as that gold span?*). "
    "Confirm or overrule decisions; the **audited** score (your labels where given, the judge's elsewhere) is "
    "recomputed at once beside the **original** one.")

hidden = is_blind_reviewer()  # the scores derive from the judge's labels
runs = runs_frame(conn, hide_scores=True if hidden else lambda name: blind_on(conn, name))  # blind runs too
with st.container(border=True):
    first = first_demo_run()
    st.markdown("**Start here** — the bundled demo runs, scored on first start:")
    for name, title, _ in demo_lines():
        note = demo_note(name, blind=hidden or blind_on(conn, name))  # no judge-derived F1 for a blind reviewer
        st.markdown(f"- **{md_literal(name)}** · {md_literal(title)}: {md_literal(note)}")  # the title has brackets
    # one link per line: side by side in three columns their labels were cut ("…and its scor")
    st.page_link("pages/overview.py", label="1 · See the first demo run and its scores", icon=":material/dashboard:",
                 query_params=link_params(run=first))
    st.page_link("pages/queue.py", label="2 · Review decisions one by one", icon=":material/checklist:",
                 query_params=link_params(run=first))
    st.page_link("pages/agreement.py", label="3 · Check human–judge agreement", icon=":material/handshake:",
                 query_params=link_params(run=first))
    who = reviewer()
    st.caption((f"You review as {md_literal(who)}. " if who else "Enter your name in the sidebar before reviewing. ")
               + "To audit your own run, use *Score a new run* below, or the CLI (`python -m audit score …`, see "
               "the README).")
    have = set(runs["run"]) if not runs.empty else set()
    missing = [name for name, _, _ in demo_lines() if name not in have]
    if missing and getattr(conn, "read_only", False):
        st.caption("This database is read-only: it can be browsed and exported; the demo runs cannot be added.")
    elif missing:
        st.caption(f"Not in this database: {md_literal(', '.join(missing))}.")
        if role_button("Load the demo runs", action="load_runs", key="runs.load_demo",
                       help="Score the bundled demo runs this database lacks (offline judges, about 5–15 s); "
                            "`python -m audit demo` does the same"):
            auth.guard("load_runs")
            load_demo(conn, demo_progress(st.progress(0.0, text="starting…")))
            st.rerun()

just = st.session_state.pop("runs.just_scored", None)
if just:
    for text, kind in just.messages:
        show_text(text, kind)
    st.page_link("pages/overview.py", label=f"Open {md_literal(just.name)} ›", query_params=link_params(run=just.name))
st.subheader("Runs")
if runs.empty:
    st.info("No runs yet: score one below.")
else:
    st.dataframe(runs, hide_index=True, key="runs.table",
                 column_config={"open": st.column_config.LinkColumn("open", display_text="open ›"),
                                "judge": st.column_config.TextColumn("judge", width=270)})  # never cut
    names = runs["run"].tolist()
    if st.session_state.get("runs.pick") not in names or st.session_state.get("runs.pick_follows") != current_run():
        # the session's run changed (a new run was scored, or the sidebar switched): the box follows it
        st.session_state["runs.pick"] = current_run() if current_run() in names else names[0]
        st.session_state["runs.pick_follows"] = current_run()
    pick = st.selectbox("Open a run", names, key="runs.pick")
    if st.button("Open run", key="runs.open"):
        st.switch_page("pages/overview.py", query_params=link_params(run=pick))

if current_run() in set(runs["run"] if not runs.empty else ()):
    with st.expander("Blind review assignments"):
        blind_assignment_editor(conn, current_run())
    with st.expander("Assigned review (who reviews which documents)"):
        review_assignment_editor(conn, current_run())

with st.expander("Score a new run", expanded=runs.empty):
    new = new_run_form(conn)
    if new:
        st.session_state["runs.just_scored"] = new
        st.query_params["run"] = new.name  # the new run becomes the session's current run
        st.rerun()

with st.expander("Import an eval framework's log (Inspect, lm-eval, promptfoo, DeepEval, Every Eval Ever)"):
    imported = framework_import_form(conn)
    if imported:
        st.query_params["run"] = imported  # the imported run becomes the session's current run
