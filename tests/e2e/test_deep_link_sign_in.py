"""A deep link survives sign-in in team mode (issue 40 point 8): a signed-out visitor who opens `/queue?run=…`
signs in and lands on that page with those settings; a target planted in the tab's storage that is not a page of
this app (`//host`, an absolute URL) is never followed; a page the role does not allow still refuses after the
jump. Real browser against the OIDC mock, with test_auth_team's provider and server.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.e2e_config import DEMO, HEALTH_TIMEOUT_S
from tests.e2e.e2e_server import AppServer
from tests.e2e.test_auth_team import OWNER, REVIEWER, provider, sidebar, sign_in, signed_in_as, team_app

__all__ = ["provider", "team_app"]  # the module's fixtures, shared with test_auth_team
pytestmark = pytest.mark.xdist_group("deep-link-sign-in")  # one team server for the module's tests

STORE = "rejudge.after_sign_in"
WAIT_MS = HEALTH_TIMEOUT_S * 1000


def remembered(page: Page) -> None:
    """Wait until the sign-in page has put the tab's location into its storage."""
    page.get_by_role("button", name="Sign in").wait_for(state="visible", timeout=WAIT_MS)
    page.wait_for_function(f"() => sessionStorage.getItem({STORE!r}) !== null", timeout=WAIT_MS)


def authorize(page: Page, app: AppServer, who: str) -> None:
    page.get_by_role("button", name="Sign in").click(timeout=WAIT_MS)
    page.locator("input[name=sub]").fill(f"sub-{who}")
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(re.compile(re.escape(app.url)), timeout=WAIT_MS)


def test_a_deep_link_opened_signed_out_lands_there_after_sign_in(team_app: AppServer,
                                                                 new_page: Callable[[], Page], shots: Path):
    page = new_page()
    page.goto(f"{team_app.url}/queue?run={DEMO}&card=classic&blind=1")
    authorize(page, team_app, REVIEWER)
    page.wait_for_url(re.compile(re.escape(team_app.url) + r"/queue\?"), timeout=WAIT_MS)
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible(timeout=WAIT_MS)
    signed_in_as(page, REVIEWER, "reviewer")
    query = parse_qs(urlsplit(page.url).query)
    assert query["run"] == [DEMO] and query["card"] == ["classic"]
    expect(sidebar(page).get_by_role("switch", name="Blind review")).to_be_checked()
    page.locator(".st-key-queue-card").first.wait_for(state="visible", timeout=WAIT_MS)
    page.screenshot(path=str(shots / "deep-link-after-sign-in.png"), full_page=True)
    assert page.evaluate(f"sessionStorage.getItem({STORE!r})") is None  # followed once, then forgotten
    page.goto(team_app.url)  # the root again in the same tab: stays there
    expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=WAIT_MS)
    page.wait_for_timeout(1500)
    assert urlsplit(page.url).path in ("", "/")


@pytest.mark.parametrize("planted", ["//evil.example/queue?run=x", "https://evil.example/queue",
                                     "/\\evil.example/queue", "/not-a-page?run=x"])
def test_a_planted_target_that_is_not_a_page_of_this_app_is_refused(team_app: AppServer,
                                                                     new_page: Callable[[], Page], planted: str):
    page = new_page()
    page.goto(f"{team_app.url}/queue?run={DEMO}")
    remembered(page)
    page.evaluate("([k, p]) => sessionStorage.setItem(k, JSON.stringify({path: p, at: Date.now()}))",
                  [STORE, planted])
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    authorize(page, team_app, REVIEWER)
    signed_in_as(page, REVIEWER, "reviewer")
    expect(page.get_by_role("heading", name="Runs")).to_be_visible(timeout=WAIT_MS)
    # the root has taken the planted target back (on a busy machine that can take longer than the wait below, which
    # then passed before anything was decided); then time for a (wrong) jump to happen
    page.wait_for_function(f"() => sessionStorage.getItem({STORE!r}) === null", timeout=WAIT_MS)
    page.wait_for_timeout(2000)
    assert urlsplit(page.url).netloc == urlsplit(team_app.url).netloc
    assert urlsplit(page.url).path in ("", "/")
    assert not [u for u in requests if "evil.example" in u]
    assert page.evaluate(f"sessionStorage.getItem({STORE!r})") is None


def test_after_the_jump_the_page_still_checks_the_role(team_app: AppServer, new_page: Callable[[], Page]):
    page = new_page()
    page.goto(f"{team_app.url}/export?run={DEMO}")
    authorize(page, team_app, REVIEWER)
    page.wait_for_url(re.compile(re.escape(team_app.url) + r"/export\?"), timeout=WAIT_MS)
    expect(page.get_by_text("Only an owner may export a run's reviews; your role is reviewer.").first).to_be_visible(
        timeout=WAIT_MS)
    expect(page.get_by_role("button", name="This run's reviews (JSON lines)")).to_have_count(0)


def test_an_owner_signing_in_at_the_root_stays_on_the_runs_page(team_app: AppServer, new_page: Callable[[], Page]):
    page = new_page()
    sign_in(page, team_app, OWNER)
    signed_in_as(page, OWNER, "owner")
    page.wait_for_timeout(1500)
    assert urlsplit(page.url).path in ("", "/")
