"""Per-rerun access to the database, the selected run and the reviewer's name."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from sqlite_utils import Database

from audit.store import default_db_path, list_runs, open_db
from ui.text import show_text

REVIEWER_KEY = "reviewer"


def db() -> Database:
    """A new connection (call once per rerun): SQLite objects must not be shared across sessions' threads."""
    return open_db(default_db_path())


def require_run(conn: Database, key: str) -> str:
    """The selected run; on an empty database, say where to start and stop the page."""
    run = selected_run(conn, key)
    if run is None:
        st.info("No runs in this database yet. Score one on the Runs page.")
        st.stop()
    return run


def synced_select(label: str, options: list[str], key: str, param: str, **kwargs: object) -> str:
    """A select box kept in step with the query parameter `param`, both ways.

    A changed URL (deep link, page switch with query params) wins over the widget's old state; a change in the
    widget is written back to the URL so the view can be shared.
    """
    wanted = st.query_params.get(param)
    seen_key = f"{key}.synced"
    if wanted in options and st.session_state.get(seen_key) != wanted:
        st.session_state[key] = wanted
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]
    value = st.selectbox(label, options, key=key, **kwargs)  # type: ignore[arg-type]
    st.session_state[seen_key] = value
    if st.query_params.get(param) != value:
        st.query_params[param] = value
    return value


CURRENT_RUN = "current_run"


def selected_run(conn: Database, key: str) -> str | None:
    """The session's current run: `?run=` when it names a run, else the run picked last on any page, else the
    newest. Every page shares it (and writes it back to `?run=`), so switching pages never switches runs."""
    names = [r["name"] for r in list_runs(conn)]
    if not names:
        return None
    wanted = st.query_params.get("run")
    if wanted and wanted not in names:
        show_text(f"Run {wanted!r} is not in this database; showing the current run instead.", "warning")
    current = st.session_state.get(CURRENT_RUN)
    if (not wanted or wanted not in names) and current in names:
        st.query_params["run"] = current
    value = synced_select("Run", names, key, "run", help="Runs stored in " + default_db_path())
    st.session_state[CURRENT_RUN] = value
    return value


def blind_guard(page: str) -> None:
    """Pages whose numbers derive from the judge's or other reviewers' labels are hidden while reviewing blind."""
    if blind() and role() == "reviewer":
        st.info(f"The {page} page is hidden while you review blind: its numbers are derived from the judge's and "
                "other reviewers' labels. Switch blind review off in the sidebar (or review as adjudicator) to "
                "see it.")
        st.stop()


NAME_KEY = "reviewer_name"  # plain keys survive pages where the widget is not drawn
BLIND_KEY = "blind_mode"
ADJUDICATOR_KEY = "adjudicator_mode"


def _persisted(widget_key: str, store_key: str, default: object) -> None:
    if widget_key not in st.session_state:
        st.session_state[widget_key] = st.session_state.get(store_key, default)


def _copy(widget_key: str, store_key: str) -> None:
    st.session_state[store_key] = st.session_state.get(widget_key)


def sidebar_controls() -> None:
    """Reviewer name, blind mode and adjudicator mode; all persist across pages and reruns."""
    adopt_url_settings()
    _persisted(REVIEWER_KEY, NAME_KEY, "")
    st.text_input("Reviewer name", key=REVIEWER_KEY, placeholder="your name", on_change=_copy,
                  args=(REVIEWER_KEY, NAME_KEY),
                  help="Reviews are stored under this name (append-only, with time and note).")
    _persisted("blind", BLIND_KEY, False)
    st.toggle("Blind review", key="blind", on_change=_copy, args=("blind", BLIND_KEY),
              help="Hide the judge's answer and other reviewers' labels on a decision until you label it. "
                   "Each review records whether it was made blind.")
    _persisted("adjudicator", ADJUDICATOR_KEY, False)
    st.toggle("Adjudicator", key="adjudicator", on_change=_copy, args=("adjudicator", ADJUDICATOR_KEY),
              help="Your labels settle conflicts: an adjudicated label overrides reviewers and judge.")


def link(page: str, **params: object) -> str:
    """A relative URL to `page` with `params`, carrying the reviewer name and blind mode: links in tables open a
    new tab, which is a new session."""
    extra = {"reviewer": reviewer(), "blind": "1" if blind() else ""}
    query = {k: str(v) for k, v in {**params, **extra}.items() if v not in (None, "")}
    return f"{page}?{urlencode(query)}"


def adopt_url_settings() -> None:
    """A new session opened from a link takes the reviewer name and blind mode from the URL (once)."""
    if "_url_settings_adopted" in st.session_state:
        return
    st.session_state["_url_settings_adopted"] = True
    name = st.query_params.get("reviewer")
    if name and not st.session_state.get(NAME_KEY):
        st.session_state[NAME_KEY] = name
    if st.query_params.get("blind") == "1" and BLIND_KEY not in st.session_state:
        st.session_state[BLIND_KEY] = True


def short_spec(spec: str) -> str:
    """A judge spec for display: paths inside the project or the working directory shown relative."""
    from audit.demo import ROOT

    for base in (str(ROOT) + "/", str(Path.cwd()) + "/"):
        spec = spec.replace(base, "")
    return spec


def reviewer() -> str:
    return (st.session_state.get(NAME_KEY) or st.session_state.get(REVIEWER_KEY) or "").strip()


def blind() -> bool:
    return bool(st.session_state.get(BLIND_KEY, st.session_state.get("blind", False)))


def role() -> str:
    adj = st.session_state.get(ADJUDICATOR_KEY, st.session_state.get("adjudicator", False))
    return "adjudicator" if adj else "reviewer"
