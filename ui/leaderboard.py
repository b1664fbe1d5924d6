"""The Leaderboard page's parts: a board table (`audit.board.table.board_table`, the `board show` JSON) as tables
and sentences for people, and the owner's form to create or delete a board. Numbers are the table's, formatted,
never recomputed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd
import streamlit as st

from audit.board.export import board_rows, ranked_value_title
from audit.board.joint import board_plan, create_board_plan, next_board_document
from audit.board.one_run import create_one_run_plan, next_one_run_document, one_run_plan
from audit.board.store import create_board, delete_board
from audit.board.table import SAMPLED, conflicted_text
from audit.errors import AuditError
from audit.numbers import EMPTY, format_delta, format_value
from audit.store.database import Database
from ui import auth
from ui.owner_only import role_button, why_not
from ui.state import link_params
from ui.text import md_literal, show_text

ACTION = "edit_boards"
PLAN_ACTION = "edit_assignments"
"""Creating a run's own sampling plan: the Review queue's permission for the same act."""
PICK, PENDING = "leaderboard.board", "leaderboard.pending"
"""The board picker's key; a board just created, shown by the next rerun's picker."""


def unit_of(table: Mapping, key: str) -> str:
    return next((m["unit"] for m in table.get("metrics", ()) if m["key"] == key), "score")


def label_of(table: Mapping, key: str) -> str:
    return next((m["label"] for m in table.get("metrics", ()) if m["key"] == key), key)


def interval_text(ci: Sequence[float] | None, unit: str, *, delta: bool = False) -> str:
    """`[lo, hi]`; `(exact)` for a zero-width interval (a full review); EMPTY when there is no interval."""
    if not ci or ci[0] is None or ci[1] is None:
        return EMPTY
    if ci[0] == ci[1]:
        return "(exact)"
    fmt = (lambda v: format_delta(v, unit)) if delta else (lambda v: format_value(v, unit))
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]"


def _rank_set(rs: Sequence[int] | None) -> str:
    return EMPTY if not rs else f"[{rs[0]}, {rs[1]}]"


def _with_interval(value: str, ci: str) -> str:
    return value if ci == EMPTY else f"{value} {ci}"


def full_height(rows: int) -> int:
    """A dataframe's height in pixels that shows all `rows` without an inner scroll bar (Streamlit's default
    height cuts a table at about 10 rows)."""
    return 35 * (rows + 1) + 3


def ranked(table: Mapping) -> list[Mapping]:
    """The table's systems, best audited rank first, unranked last in the judge's order (a sample drawn but not yet
    reviewed ranks nobody: the rows kept the judge's order, not the order the systems were added in)."""
    return sorted(table["systems"], key=lambda s: (s["rank_audited"] is None, s["rank_audited"] or 0,
                                                   s["rank_judge"] is None, s["rank_judge"] or 0))


def _runs_differ(table: Mapping) -> bool:
    return any(s["system"] != s["run"] for s in table["systems"])  # systems inside one run


def system_rows(table: Mapping) -> pd.DataFrame:
    """The ranking, one row per system of the primary metric, best audited rank first: the rank set, both ranks,
    judge only and the value the second rank ranks (`ranked_value_title`: audited, estimated or reviewed so far),
    the export's row rule (`board_rows`)."""
    unit = unit_of(table, table["metric"])
    title = ranked_value_title(table)
    rows = {r["system"]: r for r in board_rows(table)}
    return pd.DataFrame([{
        "system": s["system"],
        **({"run": s["run"]} if _runs_differ(table) else {}),
        "rank set": _rank_set(s.get("rank_set")),
        f"rank: judge → {title}": f"{_rank(s['rank_judge'])} → {_rank(s['rank_audited'])}",
        "judge only": format_value(rows[s["system"]]["judge_only"], unit),
        title: format_value(rows[s["system"]]["value"], unit),
        # with a sample the ranked value is the estimate: the labels given so far still show (they vanished)
        **({"reviewed so far": format_value(s["audited"].get(table["metric"]), unit)}
           if table["interval"] in SAMPLED else {}),
    } for s in ranked(table)])


def estimate_rows(table: Mapping) -> pd.DataFrame:
    """The estimate of the primary metric with its fixed-n and anytime intervals, and the judge's bias (judge only
    − estimate) with its interval, one row per system in the ranking's order."""
    key = table["metric"]
    unit = unit_of(table, key)
    rows = []
    for s in ranked(table):
        est = (s.get("estimate") or {}).get(key) or {}
        bias = (s.get("bias") or {}).get(key) or {}
        rows.append({
            "system": s["system"],
            "estimate [95%]": estimate_text(est, unit),
            "anytime [95%]": interval_text((est.get("anytime") or {}).get("ci"), unit),
            # a bias with no interval says so, as the estimate beside it does (a bare "0" read as exact)
            "judge bias [95%]": EMPTY if bias.get("value") is None else
            _said_with_interval(format_delta(bias["value"], unit), bias.get("ci"),
                                interval_text(bias.get("ci"), unit, delta=True)),
        })
    return pd.DataFrame(rows)


def _rank(r: int | None) -> str:
    return EMPTY if r is None else str(r)


def estimate_text(est: Mapping | None, unit: str) -> str:
    """An estimate and its fixed-n interval; where the sample gives no estimate or no interval yet, it says so
    (the reasons are listed once under the table, `no_interval_reasons`: a number with no interval and no word
    reads as a certainty)."""
    if not est:
        return EMPTY
    if est.get("value") is None:
        return f"{EMPTY} (no estimate yet)" if est.get("note") else EMPTY
    return _said_with_interval(format_value(est["value"], unit), est.get("ci"), interval_text(est.get("ci"), unit))


def _said_with_interval(value: str, ci: object, ci_text: str) -> str:
    """A number with its interval, or with "(no interval yet)" where it has none: a bare number reads as exact."""
    return f"{value} (no interval yet)" if ci is None else _with_interval(value, ci_text)


def no_interval_reasons(table: Mapping, *, every_metric: bool = False) -> list[str]:
    """Why the board's estimates (the primary metric's, or `every_metric`) have no interval yet: each distinct
    reason once, with the systems it holds for (`for A, B: insufficient reviews: …`; the reasons differ by system,
    and a caption that named none could not be read)."""
    keys = [m["key"] for m in table.get("metrics", ())] if every_metric else [table["metric"]]
    out: dict[str, dict[str, None]] = {}
    for s in table["systems"]:
        for k in keys:
            est = (s.get("estimate") or {}).get(k) or {}
            if est and est.get("ci") is None and est.get("note"):
                out.setdefault(str(est["note"]), {})[s["system"]] = None
    return [f"for {', '.join(systems)}: {note}" for note, systems in out.items()]


def metric_rows(table: Mapping) -> pd.DataFrame:
    """Every headline metric of every system (one row each, so any number of metrics fits the page): judge only,
    audited, and with a sample (or a full review) the estimate with its fixed-n and anytime intervals (a median,
    e.g. retrieval's median rank, as the single-run plan estimates it)."""
    sampled = table["interval"] != "none"
    return pd.DataFrame([{"system": s["system"], "metric": m["label"],
                          "judge only": format_value(s["judge_only"].get(m["key"]), m["unit"]),
                          "audited": format_value(s["audited"].get(m["key"]), m["unit"]),
                          **({"estimate [95%]": estimate_text((s.get("estimate") or {}).get(m["key"]), m["unit"]),
                              "anytime [95%]": interval_text(
                                  (((s.get("estimate") or {}).get(m["key"]) or {}).get("anytime") or {}).get("ci"),
                                  m["unit"])} if sampled else {})}
                         for s in ranked(table) for m in table.get("metrics", ())])


def pair_rows(table: Mapping) -> pd.DataFrame:
    unit = unit_of(table, table["metric"])
    return pd.DataFrame([{"A": p["a"], "B": p["b"],
                          "A − B": EMPTY if p["difference"] is None else format_delta(p["difference"], unit),
                          "95% interval": interval_text(p.get("ci"), unit, delta=True),
                          "simultaneous interval": interval_text(p.get("ci_simultaneous"), unit, delta=True)}
                         for p in table["pairs"]])


def settled_words(table: Mapping) -> list[str]:
    """The table's sentences on which orders hold; an unsettled one says how many more documents the board's plan
    needs to settle the ranking, when it says."""
    more = table.get("more_documents")
    out = []
    for s in table.get("settled", ()):
        if more and s.endswith("is not settled"):
            s += f": review about {more} more document{'s' if more != 1 else ''}"
        out.append(s)
    return out


def coverage_text(table: Mapping) -> str:
    """What the reviews cover, in words; the questions the runs share only where the board has two runs or more
    (the systems of one run share its questions by construction)."""
    r = table["reviewed"]
    shared = (f" · {table['shared_questions']:,} questions shared by two or more runs (one review settles each in "
              "all of them)" if len(table["runs"]) > 1 else "")
    return (f"{r['decisions']:,} of {r['of_decisions']:,} distinct questions reviewed{conflicted_text(r)} · "
            f"{r['documents']:,} of "
            f"{r['of_documents']:,} documents complete{shared} · effective labels: {table['policy']} policy")


def pick_board(names: Sequence[str], holding: Sequence[str] = ()) -> str:
    """The board picker: a board just created, else `?board=` on a first visit, else the session's, else the
    newest board holding the current run (`holding`, newest first), else the newest (names come newest first)."""
    pending = st.session_state.pop(PENDING, None)
    if pending in names:
        st.session_state[PICK] = pending
    elif st.session_state.get(PICK) not in names:
        wanted = st.query_params.get("board")
        st.session_state[PICK] = wanted if wanted in names else next((h for h in holding if h in names), names[0])
    name = st.selectbox("Board", list(names), key=PICK)
    st.query_params["board"] = name
    return name


def manage_boards(conn: Database, boards: Sequence[Mapping], runs: Sequence[str], shown: str | None = None) -> None:
    """Create a board over runs of one family and gold, or delete one (owner only in team mode): the board on screen
    (`shown`) unless another is chosen, and only once the deletion is confirmed (it drops the board's sample)."""
    why = why_not(ACTION)
    with st.expander("Create or delete a board", expanded=not boards):
        with st.form("leaderboard.create", border=False):
            name = st.text_input("Board name", key="leaderboard.new_name")
            chosen = st.multiselect("Runs (of one family, scored on the same gold)", list(runs),
                                    key="leaderboard.new_runs")
            sent = st.form_submit_button("Create board", disabled=why is not None, help=why)
        if why is not None:
            show_text(why, "caption")
        if sent:
            auth.guard(ACTION)
            try:
                made = create_board(conn, name.strip(), list(chosen))
            except AuditError as e:
                show_text(str(e), "error")
            else:
                st.session_state[PENDING] = made["name"]  # the picker's own key is drawn already
                st.rerun()
        if boards:
            names = [b["name"] for b in boards]  # the board on screen first: each board shown has its own box
            gone = st.selectbox("Board to delete", names, key=f"leaderboard.delete_name.{shown}",
                                index=names.index(shown) if shown in names else 0)
            sure = st.checkbox(f"Yes, delete board {md_literal(gone)} and its drawn sample (its runs and reviews "
                               "stay)", key=f"leaderboard.delete_sure.{gone}")
            if role_button("Delete board (its runs and reviews stay)", action=ACTION, key="leaderboard.delete",
                           disabled=not sure):
                auth.guard(ACTION)
                try:
                    delete_board(conn, gone)
                except AuditError as e:
                    show_text(str(e), "error")
                else:
                    st.rerun()


SERVED = "leaderboard.served"
"""Session key: (board, the document the board's queue served) shown until the next one is asked for."""


def board_sample(conn: Database, board: Mapping) -> None:
    """The board's one sample (issue 36 §3): draw it (owner only in team mode), then serve the document whose review
    does most for the table, with a link to review it and how many more documents settle the ranking. Serving is a
    button, not a page view: the queue records what it served."""
    name, runs = board["name"], list(board["runs"])
    if board["systems"] is not None:
        run_sample(conn, board)
        return
    if board_plan(conn, name) is None:
        show_text("Draw one sample of documents for every system of the board: a sampled document is reviewed for "
                  "every question any system asked about it, so one review serves them all.", "caption")
        _draw_button("Draw the board's sample", ACTION, "leaderboard.plan", lambda: create_board_plan(conn, name, runs))
        return
    served = _serve_button(SERVED, name, lambda: next_board_document(conn, name, runs))
    if served is None:
        return
    nxt = served[1]
    if nxt is None:
        show_text("Every document of the board's sample is reviewed.", "success")
        return
    show_text(f"Next: document {nxt['doc']} ({nxt['why']}); {nxt['more_text']}.", "info")
    for part in nxt["review_in"]:
        doc = part["documents"][0] if part["documents"] else nxt["doc"]
        st.page_link("pages/document.py", label=md_literal(f"Review it in run {part['run']} ›"),
                     query_params=link_params(run=part["run"], doc=doc))


RUN_SERVED = "leaderboard.run_served"
"""Session key: (board, what the run's sample queue serves next) for a board of one run's systems."""


def run_sample(conn: Database, board: Mapping) -> None:
    """A board of one run's systems (ideation) samples through the run's own plan: draw it (the Review queue's
    permission), then name what the run's sample queue serves next, with a link to that queue: only a review made
    there counts as a sample draw, for the run's Scores page and the board alike."""
    name, run, systems = board["name"], board["runs"][0], list(board["systems"])
    if one_run_plan(conn, run) is None:
        show_text(f"This board's systems are compared inside run {run}, so its sample is the run's own: draw it, "
                  "then review the documents the run's sample queue serves. Each sampled document is reviewed for "
                  "every system at once.", "caption")
        _draw_button("Draw the run's sample", PLAN_ACTION, "leaderboard.run_plan",
                     lambda: create_one_run_plan(conn, name, run))
        return
    served = _serve_button(RUN_SERVED, name, lambda: next_one_run_document(conn, name, run, systems))
    if served is None:
        return
    nxt = served[1]
    if nxt is None:
        show_text("Every document of the run's sample is reviewed.", "success")
        return
    show_text(f"Next: {nxt['doc']} ({nxt['why']}); {nxt['more_text']}. Review it in the run's sample queue: only a "
              "review made there counts as a sample draw.", "info")
    st.page_link("pages/queue.py", label=md_literal(f"Open run {run}'s sample queue ›"),
                 query_params=link_params(run=run))


def _draw_button(label: str, action: str, key: str, draw: Callable[[], object]) -> None:
    """A sample-drawing button (its action's role only): draw, then rerun to show the plan; a refusal in words."""
    if role_button(label, action=action, key=key):
        auth.guard(action)
        try:
            draw()
        except AuditError as e:
            show_text(str(e), "error")
        else:
            st.rerun()


def _serve_button(state_key: str, board: str, serve: Callable[[], object]) -> tuple | None:
    """"Serve the next document": what `serve` returned, kept in the session for this board (a button, not a page
    view, since the queue records what it served); None before the first serve or for another board."""
    if st.button("Serve the next document to review", key="leaderboard.next"):
        try:
            st.session_state[state_key] = (board, serve())
        except AuditError as e:
            show_text(str(e), "error")
    served = st.session_state.get(state_key)
    return served if served and served[0] == board else None
