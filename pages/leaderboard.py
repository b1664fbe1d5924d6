"""Leaderboard: the systems of a board side by side — judge-only vs audited scores, intervals, the judge's bias,
ranks and rank sets, pairwise differences, and in words which orders of the judge's ranking survive the audit
(issue 36 §2). Every number is `audit.board.table.board_table`'s (the `board show` JSON), formatted."""

import streamlit as st

from audit.board.report import board_points
from audit.board.store import list_boards
from audit.board.table import board_table
from audit.errors import AuditError
from audit.outputs.figures import board_intervals
from ui.entry import page_prologue
from ui.leaderboard import (
    board_sample,
    coverage_text,
    estimate_rows,
    full_height,
    label_of,
    manage_boards,
    metric_rows,
    no_interval_reasons,
    pair_rows,
    pick_board,
    ranked,
    settled_words,
    system_rows,
)
from ui.state import blind_guard, blind_on, current_run, policy_radio, run_names
from ui.text import md_literal, show_error, show_text

conn = page_prologue()
st.title("Leaderboard")
blind_guard("leaderboard")
st.markdown("A **board** compares systems scored on the same gold by the same judge: each system's judge-only and "
            "audited score, the judge's bias, and whether the judge's ranking survives the audit. A review of a "
            "question counts in every run that asks it, so one review can move several systems.")
boards = list_boards(conn)
if not boards:
    show_text("No board yet. Create one below from two or more runs of one family on the same gold (CLI: "
              "`python -m audit board create NAME --runs A,B`), or load the demo runs on the Runs page: the demo "
              "has a board per family.", "info")
else:
    run = current_run()
    name = pick_board([b["name"] for b in boards], holding=[b["name"] for b in boards if run in b["runs"]])
    board = next(b for b in boards if b["name"] == name)
    policy = policy_radio("leaderboard.policy")
    hidden = [r for r in board["runs"] if blind_on(conn, r)]
    if hidden:
        show_text(f"This board is hidden while you review run {hidden[0]} blind: its numbers derive from the "
                  "judge's and other reviewers' labels.", "info")
        st.stop()
    try:
        table = board_table(conn, name, policy=policy)
    except AuditError as e:
        show_error(str(e))
        st.stop()
    st.markdown(f"Board **{md_literal(table['board'])}** ({md_literal(table['family'])}, {len(table['systems'])} "
                f"systems) ranked by **{md_literal(label_of(table, table['metric']))}**.")
    st.caption(md_literal(coverage_text(table)))
    if table.get("waiting_note"):
        show_text(f"{table['waiting_note'][0].upper()}{table['waiting_note'][1:]}.", "caption")
    if table.get("judges_differ"):
        show_text(f"Judges differ: {table['judges_differ']}.", "warning")
    if table["interval"] == "none":
        why = str(table["interval_explained"]).removeprefix("none: ")
        show_text(f"No valid interval: {why}. Rank sets and intervals are left empty rather than guessed.",
                  "warning")
    else:
        st.caption(md_literal(f"Intervals: {table['interval_explained']}."))
    board_sample(conn, board)
    st.subheader("Does the judge's ranking survive the audit?")
    st.markdown("\n".join(f"- {md_literal(sentence)}" for sentence in settled_words(table)))
    st.subheader(f"Systems by {md_literal(label_of(table, table['metric']))}")
    st.dataframe(system_rows(table), hide_index=True, key="leaderboard.systems")
    if table["interval"] != "none":
        st.caption("Estimates (fixed-n and anytime 95% intervals) and the judge's bias (judge only − estimate).")
        st.dataframe(estimate_rows(table), hide_index=True, key="leaderboard.estimates")
        for why in no_interval_reasons(table):
            st.caption(md_literal(f"No interval yet {why}."))
    points = board_points({**table, "systems": ranked(table)})  # the report's chart, rows in the table's order
    if points:
        st.altair_chart(board_intervals(points, metric=label_of(table, table["metric"])), key="leaderboard.chart")
    st.subheader("Pairwise differences")
    st.caption("A − B on the primary metric; the simultaneous intervals (all pairs at once) decide the rank sets.")
    st.dataframe(pair_rows(table), hide_index=True, key="leaderboard.pairs")
    if table.get("pairs_explained"):
        show_text(table["pairs_explained"], "caption")
    with st.expander("Every headline metric: judge only and audited" if table["interval"] == "none" else
                     "Every headline metric: judge only, audited and estimated"):
        every = metric_rows(table)
        st.dataframe(every, hide_index=True, key="leaderboard.metrics", height=full_height(len(every)))
        for why in no_interval_reasons(table, every_metric=True):
            st.caption(md_literal(f"No interval yet {why}."))
manage_boards(conn, boards, run_names(conn), shown=name if boards else None)
