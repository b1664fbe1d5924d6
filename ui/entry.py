"""How every page starts: through `app.py` (navigation, the sign-in gate, the sidebar), in every session.

Streamlit decides per server whether the app is an old-style multipage app (a `pages/` folder beside `app.py`);
until `app.py` has called `st.navigation` once, a deep link such as `/export?run=...` on a freshly started server
runs `pages/export.py` on its own, without `app.py`'s gate. That switch is server-wide: a session whose page
started before another session flipped it must notice by itself (issue 34: 9 of 12 concurrent first visits ran
the page alone). So `app.py` marks its own run (`through_app`), and `page_prologue`, the first call of every
page, reruns a page run without that mark through `app.py`, and runs the gate again in any case.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from audit.store.database import Database
from ui import auth
from ui.state import db

_run = threading.local()  # a session's script runs on its own thread, one run at a time


@contextmanager
def through_app() -> Iterator[None]:
    """`app.py` runs its preamble and the page inside this: the page then knows it was entered through `app.py`."""
    _run.through_app = True
    try:
        yield
    finally:
        _run.through_app = False


def entered_through_app() -> bool:
    return bool(getattr(_run, "through_app", False))


def page_prologue() -> Database:
    """The first call of every page: rerun through `app.py` unless this run came from it; then the sign-in gate
    (team mode: stop unless signed in with a role); then the render's database connection."""
    if not entered_through_app():
        from streamlit.runtime.pages_manager import PagesManager

        PagesManager.uses_pages_directory = False  # from now on every run of every session starts at app.py
        st.rerun()
    auth.gate()
    return db()
