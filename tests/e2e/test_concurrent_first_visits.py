"""Four deep links opened at once as the first visits of a freshly started server (issue 34): every one goes
through `app.py` (the sign-in gate in team mode; the sidebar with the URL's reviewer in local mode), none runs its
page on its own."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.e2e_config import DEMO, HEALTH_TIMEOUT_S
from tests.e2e.e2e_helpers import shoot, wait_idle
from tests.e2e.e2e_server import AppServer, seeded, start_app, stop_app
from tests.e2e.test_auth_team import provider, sign_in, start_team_app  # noqa: F401 - the module's provider fixture

pytestmark = pytest.mark.e2e
STARTS = 2  # server starts per mode: the race needs a fresh server, and one start may happen to be won
TEAM_LINKS = ("export", "queue", "scores", "document")
WAIT_MS = HEALTH_TIMEOUT_S * 1000


def open_at_once(new_page: Callable[[], Page], urls: list[str]) -> list[Page]:
    """One browser context per URL, all requested before any is waited for (four people following links)."""
    pages = [new_page() for _ in urls]
    for page, url in zip(pages, urls, strict=True):
        page.goto(url, wait_until="commit")
    return pages


@pytest.mark.parametrize("start", range(STARTS))
def test_team_mode_four_deep_links_at_once_all_get_the_sign_in_page(provider: str, tmp_path: Path,  # noqa: F811
                                                                    new_page: Callable[[], Page], shots: Path,
                                                                    start: int, demo_db: Path):
    server: AppServer = start_team_app(tmp_path, provider, demo_db)
    try:
        pages = open_at_once(new_page, [f"{server.url}/{p}?run={DEMO}" for p in TEAM_LINKS])
        for name, page in zip(TEAM_LINKS, pages, strict=True):
            expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=WAIT_MS)
            wait_idle(page, timeout=WAIT_MS)  # the run that drew it is over: a page running on its own would show
            expect(page.get_by_role("button", name="Decisions with every label (CSV)")).to_have_count(0)
            expect(page.get_by_role("heading", name="Export")).to_have_count(0)
            expect(page.get_by_test_id("stSidebar")).to_have_count(0)
            if start == 0:
                shoot(page, shots, f"concurrent-team-{name}")
    finally:
        stop_app(server)


@pytest.mark.parametrize("start", range(STARTS))
def test_local_mode_four_deep_links_at_once_all_get_their_sidebar(tmp_path: Path, new_page: Callable[[], Page],
                                                                  start: int, demo_db: Path):  # noqa: ARG001 - a repetition
    server = start_app(seeded(tmp_path, demo_db))
    try:
        names = [f"reviewer-{i}" for i in range(4)]
        pages = open_at_once(new_page, [f"{server.url}/queue?run={DEMO}&reviewer={n}" for n in names])
        for name, page in zip(names, pages, strict=True):
            sidebar = page.get_by_test_id("stSidebar")
            expect(sidebar.get_by_role("textbox", name="Reviewer name")).to_have_value(name, timeout=WAIT_MS)
            expect(page.get_by_test_id("stSidebarNav").get_by_role("link", name="Review queue",
                                                                   exact=True)).to_be_visible()
    finally:
        stop_app(server)


def test_a_broken_secrets_file_is_a_no_access_page_not_local_mode(tmp_path: Path, new_page: Callable[[], Page],
                                                                  shots: Path, demo_db: Path):
    """An unterminated string in `.streamlit/secrets.toml` made a team server a local one (everyone owner): now
    every page, deep links too, says the settings cannot be used, naming the file and line."""
    secrets = tmp_path / "home" / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir(parents=True)
    secrets.write_text('[auth]\nredirect_uri = "http://localhost:8501/oauth2callback"\ncookie_secret = "x\n')
    server = start_app(seeded(tmp_path, demo_db))
    try:
        pages = open_at_once(new_page, [f"{server.url}/{p}?run={DEMO}" for p in TEAM_LINKS])
        for name, page in zip(TEAM_LINKS, pages, strict=True):
            expect(page.get_by_role("heading", name="Rejudge — no access")).to_be_visible(timeout=WAIT_MS)
            expect(page.get_by_text("sign-in settings cannot be used")).to_be_visible()
            expect(page.get_by_text(re.compile(rf"{re.escape(str(secrets))}.*line 3"))).to_be_visible()
            expect(page.get_by_test_id("stSidebar")).to_have_count(0)
            expect(page.get_by_role("button", name="Decisions with every label (CSV)")).to_have_count(0)
            if name == "export":
                shoot(page, shots, "refused-broken-secrets")
    finally:
        stop_app(server)


def test_an_unverified_address_gets_a_page_that_says_so(tmp_path: Path, new_page: Callable[[], Page], shots: Path,
                                                        demo_db: Path):
    """The provider says `email_verified: "false"` (a string) for the owner's address: it counted as verified and
    the visitor became owner; now no role, and the page says why."""
    import oidc_provider_mock

    owner = "olga@lab.org"  # the owner of test_auth_team's roles file
    users = [oidc_provider_mock.User(sub=f"sub-{owner}", claims={"email": owner, "email_verified": "false"})]
    with oidc_provider_mock.run_server_in_thread(port=0, user_claims=users) as mock:
        server = start_team_app(tmp_path, f"http://localhost:{mock.server_port}/.well-known/openid-configuration",
                                demo_db)
        try:
            page = new_page()
            sign_in(page, server, owner)
            expect(page.get_by_role("heading", name="Rejudge — no access")).to_be_visible(timeout=WAIT_MS)
            expect(page.get_by_text("did not verify your e-mail address")).to_be_visible()
            expect(page.get_by_test_id("stSidebar")).to_have_count(0)
            shoot(page, shots, "refused-unverified-address")
        finally:
            stop_app(server)
