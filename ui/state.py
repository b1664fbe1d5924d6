"""Per-rerun access to the database, the selected run and the reviewer's name."""

from __future__ import annotations

import streamlit as st
from sqlite_utils import Database

from audit.store import default_db_path, list_runs, open_db

REVIEWER_KEY = "reviewer"


def db() -> Database:
    """A new connection (call once per rerun): SQLite objects must not be shared across sessions' threads."""
    return open_db(default_db_path())


def selected_run(conn: Database, key: str) -> str | None:
    """The run named by `?run=`, else a select box over the runs in the database."""
    names = [r["name"] for r in list_runs(conn)]
    if not names:
        return None
    wanted = st.query_params.get("run")
    if wanted and wanted not in names:
        st.warning(f"Run {wanted!r} is not in this database; showing the newest run instead.")
        wanted = None
    index = names.index(wanted) if wanted else 0
    name = st.selectbox("Run", names, index=index, key=key, help="Runs stored in " + default_db_path())
    if name != st.query_params.get("run"):
        st.query_params["run"] = name
    return name


NAME_KEY = "reviewer_name"  # a plain key: survives pages where the widget is not drawn


def _keep_name() -> None:
    st.session_state[NAME_KEY] = st.session_state.get(REVIEWER_KEY, "")


def reviewer_input() -> None:
    """The reviewer-name box (sidebar); the name persists across pages and reruns."""
    if REVIEWER_KEY not in st.session_state:
        st.session_state[REVIEWER_KEY] = st.session_state.get(NAME_KEY, "")
    st.text_input("Reviewer name", key=REVIEWER_KEY, placeholder="your name", on_change=_keep_name,
                  help="Reviews are stored under this name (append-only, with time and note).")


def reviewer() -> str:
    return (st.session_state.get(NAME_KEY) or st.session_state.get(REVIEWER_KEY) or "").strip()
