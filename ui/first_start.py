"""The dashboard's start: the demo runs scored once into a new database (with progress on the page), and the
statistics stack imported in the background once per server."""

from __future__ import annotations

import threading

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from audit.demo import DemoProgress, is_seeded, load_demo, needs_seeding
from audit.store.database import Database
from ui import auth
from ui.text import show_text


@st.cache_resource
def _seeding_lock() -> threading.Lock:
    """One per server: two first sessions do not score the demo twice (the second waits, then finds it done)."""
    return threading.Lock()


def prepare_demo(conn: Database) -> None:
    """On a writable database that never had the demo runs, score them now, saying which one and n of N in the
    main area; otherwise (every later page view, a read-only database) only read one flag.

    The box is drawn before the families are imported (which alone takes seconds on a busy machine), so the page
    says what it does from the first second."""
    if getattr(conn, "read_only", False) or is_seeded(conn):
        return
    if not auth.may("load_runs"):  # team mode: loading runs is the owner's, on first start too
        show_text("This database has no runs yet, and loading the demo runs is the owner's (team mode): ask an owner "
                  "to open the dashboard once, or to score a run.", "info")
        return
    box = st.empty()
    with box.container():
        st.subheader("Preparing the demo runs (first start only)")
        st.caption("Every benchmark family's bundled demo run is scored once into this new database, with "
                   "offline judges; this takes about 5–15 s. Later starts open at once.")
        bar = st.progress(0.0, text="loading the benchmark families…")
    with _seeding_lock():
        if needs_seeding(conn):
            load_demo(conn, demo_progress(bar))
    box.empty()


def demo_progress(bar: DeltaGenerator) -> DemoProgress:
    """A `load_demo` progress callback that writes "n of N demo runs ready · preparing NAME" into a progress bar."""

    def progress(done: int, total: int, name: str) -> None:
        text = f"{done} of {total} demo runs ready" + (f" · preparing {name}" if name else "")
        bar.progress(done / total if total else 1.0, text=text)

    return progress


def _import_statistics() -> None:
    import scoring.stats.agreement  # noqa: F401


@st.cache_resource
def warm_statistics() -> threading.Thread:
    """Import scikit-learn & co. in the background once per server (~1.3 s), so the Agreement page opens fast."""
    t = threading.Thread(target=_import_statistics, daemon=True)
    t.start()
    return t
