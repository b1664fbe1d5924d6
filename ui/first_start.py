"""The dashboard's first start on a new database: the demo runs are scored once, with progress on the page."""

from __future__ import annotations

import threading

import streamlit as st
from sqlite_utils import Database

from audit.demo import load_demo, needs_seeding


@st.cache_resource
def _seeding_lock() -> threading.Lock:
    """One per server: two first sessions do not score the demo twice (the second waits, then finds it done)."""
    return threading.Lock()


def prepare_demo(conn: Database) -> None:
    """On a writable database that never had the demo runs, score them now, saying which one and n of N in the
    main area; otherwise (every later page view, a read-only database) only read one flag."""
    if not needs_seeding(conn):
        return
    box = st.empty()
    with _seeding_lock():
        if not needs_seeding(conn):
            return
        with box.container():
            st.subheader("Preparing the demo runs (first start only)")
            st.caption("Every benchmark family's bundled demo run is scored once into this new database, with "
                       "offline judges; this takes about 10–20 s. Later starts open at once.")
            bar = st.progress(0.0, text="starting…")

            def progress(done: int, total: int, name: str) -> None:
                text = f"{done} of {total} demo runs ready" + (f" · preparing {name}" if name else "")
                bar.progress(done / total if total else 1.0, text=text)

            load_demo(conn, progress)
    box.empty()
