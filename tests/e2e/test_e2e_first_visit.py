"""A deep link opened as the very first visit after the server starts (a bookmark, a link in a review note)."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import expect  # noqa: E402

from tests.e2e.e2e_config import DEMO  # noqa: E402
from tests.e2e.e2e_helpers import open_url, shoot  # noqa: E402
from tests.e2e.e2e_server import start_app, stop_app  # noqa: E402

pytestmark = pytest.mark.e2e


@pytest.fixture
def fresh_server(tmp_path):
    server = start_app(tmp_path)
    yield server
    stop_app(server)


def test_first_visit_deep_link_to_run_overview_has_no_page_not_found(fresh_server, new_page, shots):
    page = new_page()
    open_url(page, fresh_server.url + f"/overview?run={DEMO}", "Run overview")
    page.wait_for_timeout(1000)  # the modal, if any, follows the first rerun
    shoot(page, shots, "first-visit-run-link")
    expect(page.get_by_role("dialog")).to_have_count(0)
