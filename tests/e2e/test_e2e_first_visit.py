"""A deep link opened as the very first visit after the server starts (a bookmark, a link in a review note)."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import expect  # noqa: E402

from tests.e2e.e2e_config import DEMO  # noqa: E402
from tests.e2e.e2e_helpers import open_url, shoot, widget  # noqa: E402
from tests.e2e.e2e_server import start_app, stop_app  # noqa: E402

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
