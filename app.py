"""Rejudge dashboard: `streamlit run app.py` opens on the bundled CHIMERA demo run.

`streamlit run app.py` finds the `st.App` below and imports this file once to serve it: Streamlit with the review
card's save route (`ui/review_card/route.py`); nothing of the page script runs then. Each session's script run
runs this file as `__main__`: navigation, the gate, the sidebar, the page.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

if __name__ != "__main__":  # imported to be served (before Streamlit's runtime exists: no page module yet)
    # Sessions that start together run their page scripts in parallel threads, and a deep link runs its page file
    # first; two threads importing altair at once can meet narwhals' circular imports and fail with Python's
    # _DeadlockError (four deep links to /scores on a fresh server, under load). Imported here once, before any
    # session, those imports find the modules loaded.
    import altair  # noqa: F401
    import pandas  # noqa: F401
    from streamlit import config

    from ui.review_card.route import routes

    app = st.App(__file__, routes=routes(config.get_option("server.baseUrlPath")))
else:
    from streamlit.navigation.page import StreamlitPage

    from audit.stale import rebuild_stale_runs
    from ui import auth
    from ui.after_sign_in.component import remembered_page
    from ui.entry import through_app
    from ui.first_start import prepare_demo, warm_statistics
    from ui.rerun_timing import timed_rerun
    from ui.state import adopt_url_settings, db, forget_url_settings, sidebar_controls

    # A bundled icon: the Material icon font would be fetched from the internet (console errors offline)
    st.set_page_config(page_title="Rejudge", page_icon=str(Path(__file__).parent / "ui" / "favicon.png"),
                       layout="wide")

RUNS_PATH = "runs"


def runs_path() -> None:
    """`/runs`, the Runs page's own path: Streamlit serves the default page at the root only, so this hidden page
    sends the visitor there with the URL's settings (run, reviewer, modes) kept."""
    st.switch_page(pages[0], query_params=st.query_params.to_dict())


def follow_deep_link() -> None:
    """The page and settings a signed-out visitor opened, once they are signed in (Streamlit's sign-in ends at the
    root in a new session): the page's own role checks apply there, as on any visit."""
    found = remembered_page(pages)
    if found:
        forget_url_settings()  # the session adopts the link's run and modes, as a first visit to the link would
        st.switch_page(found[0], query_params=found[1])


if __name__ == "__main__":
    pages = [
        # the default page's url_path is never served (the root is); `runs_path` answers /runs
        st.Page("pages/runs.py", title="Runs", icon=":material/folder_open:", url_path="start", default=True),
        st.Page("pages/overview.py", title="Run overview", icon=":material/dashboard:", url_path="overview"),
        st.Page("pages/document.py", title="Document review", icon=":material/article:", url_path="document"),
        st.Page("pages/queue.py", title="Review queue", icon=":material/checklist:", url_path="queue"),
        st.Page("pages/scores.py", title="Scores", icon=":material/leaderboard:", url_path="scores"),
        st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/trophy:", url_path="leaderboard"),
        st.Page("pages/agreement.py", title="Agreement", icon=":material/handshake:", url_path="agreement"),
        st.Page("pages/compare.py", title="Compare judges", icon=":material/compare_arrows:", url_path="compare"),
        st.Page("pages/improve_judge.py", title="Improve the judge", icon=":material/tune:", url_path="improve_judge"),
        st.Page("pages/errata.py", title="Gold errata", icon=":material/flag:", url_path="errata"),
        st.Page("pages/export.py", title="Export", icon=":material/download:", url_path="export"),
        st.Page("pages/report.py", title="Report", icon=":material/summarize:", url_path="report"),
        st.Page(runs_path, title="Runs", url_path=RUNS_PATH, visibility="hidden"),
    ]


def preamble() -> StreamlitPage:
    """What every rerun runs before the page: the URL's settings, navigation, the gate, the database, the sidebar."""
    adopt_url_settings()  # before st.navigation draws a link: a click during this run must not lose the URL's settings
    admitted = auth.admitted()  # team mode: signed in and named in the roles file; local mode: always
    # before any slow work, so a deep link's page is known on a fresh server's first run
    nav = st.navigation(pages, position="sidebar" if admitted else "hidden")
    auth.gate()  # team mode, not admitted: a page that says why (sign in, provider unreachable, no role), then stop
    if nav.url_path == "" and auth.team_mode():  # sign-in ends at the root: open the deep link it started from
        follow_deep_link()
    conn = db()
    rebuild_stale_runs(conn)  # once after a migration marked a run's audited state stale; a query otherwise
    prepare_demo(conn)  # scores the demo runs once into a new database; a page view never writes
    # after the demo runs: on a first start its import would hold the GIL and a core the scoring waits for
    warm_statistics()
    with st.sidebar:
        sidebar_controls(conn)  # the current run and the reviewer's settings, on every page (also a first deep link)
    return nav


if __name__ == "__main__":
    with through_app():  # the page's prologue reruns any run that did not come through here (ui/entry.py)
        timed_rerun(preamble, lambda nav: nav.run())  # REJUDGE_RERUN_LOG: bench/ui_latency.py's split of a page switch
