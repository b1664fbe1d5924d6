"""Issue #40 point 9 in a real browser: `/runs`, the Runs page's own path, opens the Runs page with the URL's
settings kept (it said "Page not found")."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.e2e_helpers import assert_no_exception, heading, wait_idle

RUN = "demo-chimera-smollm2"


def test_the_runs_path_opens_the_runs_page_with_its_settings(demo_app, new_page):
    page = new_page()
    page.goto(f"{demo_app.url}/runs?run={RUN}")
    expect(heading(page, "Rejudge — audit an LLM-judged evaluation")).to_be_visible(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert re.search(rf"[?&]run={RUN}(&|$)", page.url), page.url
    expect(page.get_by_test_id("stSidebarNav").get_by_role("link", name="Runs", exact=True)).to_have_count(1)
