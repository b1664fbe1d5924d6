"""A deep link opened as the very first visit after the server starts (a bookmark, a link in a review note)."""

from __future__ import annotations

import re
from contextlib import closing

import pytest

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import expect  # noqa: E402

from audit.demo import demo_runs  # noqa: E402
from audit.store.database import open_db  # noqa: E402
from tests.e2e.e2e_config import DEMO  # noqa: E402
from tests.e2e.e2e_helpers import open_url, shoot, widget  # noqa: E402
from tests.e2e.e2e_server import seeded, start_app, stop_app  # noqa: E402

pytestmark = pytest.mark.e2e


@pytest.fixture
def fresh_server(tmp_path):
    server = start_app(tmp_path)
    yield server
    stop_app(server)


def test_first_visit_deep_link_runs_the_whole_app(fresh_server, new_page, shots):
    """The very first request after the server starts is a deep link to an abstract with a reviewer name: the page
    has the app's navigation (page titles, not file names), the sidebar with the run and the reviewer from the URL,
    the demo runs scored, and the abstract's content."""
    page = new_page()
    open_url(page, fresh_server.url + f"/document?run={DEMO}&doc=2210.04932&reviewer=first-visitor",
             "Abstract review")
    page.wait_for_timeout(1000)  # a modal, if any, follows the first rerun
    expect(page.get_by_role("dialog")).to_have_count(0)
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link", name="Review queue", exact=True)).to_be_visible()
    expect(nav.get_by_role("link", name="queue", exact=True)).to_have_count(0)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_role("textbox", name="Reviewer name")).to_have_value("first-visitor")
    expect(widget(page, "sidebar.run").get_by_role("combobox")).to_have_value(DEMO)
    expect(widget(page, "document.doc").get_by_role("combobox")).to_have_value("2210.04932")
    expect(page.get_by_text("a Neural Radiance Field (NeRF)").first).to_be_visible()
    expect(page.get_by_text("No runs in this database")).to_have_count(0)
    expect(page.locator(".rj-card").first).to_be_visible()
    shoot(page, shots, "first-visit-deep-link")


def test_first_start_shows_which_demo_run_it_prepares(tmp_path, new_page, shots):
    """On a new database the main area says what the first start is doing, n of N, from the first second; then the
    Runs page opens with every demo run."""
    server = start_app(tmp_path)
    try:
        page = new_page()
        page.goto(server.url)
        expect(page.get_by_text("Preparing the demo runs")).to_be_visible(timeout=15_000)
        expect(page.get_by_text(re.compile(r"\d+ of \d+ demo runs ready"))).to_be_visible(timeout=30_000)
        shoot(page, shots, "first-start-progress", idle=False)  # taken while the first start runs
        open_url(page, server.url, "Rejudge — audit an LLM-judged evaluation")
        expect(page.get_by_text("Preparing the demo runs")).to_have_count(0)
        with closing(open_db(server.db).conn) as conn:  # the other browser tests start from a copy made by the CLI
            assert {r[0] for r in conn.execute("SELECT name FROM runs")} >= {d.name for _, d in demo_runs()}
    finally:
        stop_app(server)


def test_a_read_only_database_browses_in_the_browser(tmp_path, new_page, shots, demo_db):
    """A read-only database with the demo runs: the overview and scores open, nothing offers to write it."""
    seeded(tmp_path, demo_db)  # checkpointed, no side files
    (tmp_path / "rejudge.db").chmod(0o444)
    server = start_app(tmp_path)
    try:
        page = new_page()
        open_url(page, server.url + f"/overview?run={DEMO}", "Run overview")
        open_url(page, server.url + f"/scores?run={DEMO}", re.compile("^Scores"))
        expect(page.get_by_text("readonly")).to_have_count(0)
        shoot(page, shots, "read-only-scores")
    finally:
        stop_app(server)
        (tmp_path / "rejudge.db").chmod(0o644)
