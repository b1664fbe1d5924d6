"""Team mode in a real browser: Streamlit's st.login against oidc-provider-mock (a real OpenID Connect provider on a
loopback port, in a thread), Chromium filling in the provider's login form.

Cases: sign-in and sign-out; two people reviewing the same run at once; a reviewer trying adjudication, an owner's
path and a forged `?adj=1&reviewer=`; a blind reviewer trying to unblind; someone the roles file does not name; a
forged identity cookie; the provider unreachable.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sqlite_utils import Database

from audit.review.blind_assignments import EVERYONE, set_blind_assignment
from audit.store.database import open_db
from tests.e2e.e2e_config import DEMO, HEALTH_TIMEOUT_S, ROOT
from tests.e2e.e2e_helpers import wait_idle
from tests.e2e.e2e_server import AppServer, copy_db, free_port, stop_app, streamlit_command, wait_healthy

oidc_provider_mock = pytest.importorskip("oidc_provider_mock")
pytestmark = pytest.mark.xdist_group("auth-team")  # one team server for the module's tests

REVIEWER, ADJUDICATOR, OWNER, STRANGER = "rita@lab.org", "adam@lab.org", "olga@lab.org", "eve@evil.org"
ROLES = f"""[roles]
owners = ["{OWNER}"]
adjudicators = ["{ADJUDICATOR}"]
reviewers = ["@lab.org"]
"""
COOKIE_SECRET = "e2e-cookie-secret-that-is-long-enough-0123456789"
SIGNED_IN = re.compile(r"Signed in as")


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """The mock provider's discovery URL; every person of the tests is a predefined user with an e-mail claim."""
    users = [oidc_provider_mock.User(sub=f"sub-{who}", claims={"email": who, "name": who.split("@")[0]})
             for who in (REVIEWER, ADJUDICATOR, OWNER, STRANGER)]
    with oidc_provider_mock.run_server_in_thread(port=0, user_claims=users) as server:
        yield f"http://localhost:{server.server_port}/.well-known/openid-configuration"


def start_team_app(workdir: Path, metadata_url: str, demo_db: Path) -> AppServer:
    """`streamlit run app.py` with an [auth] section (in the temp HOME's secrets) and a roles file, on a copy of
    `demo_db` (the conftest fixture)."""
    home = workdir / "home"
    (home / ".streamlit").mkdir(parents=True, exist_ok=True)
    port = free_port()
    (home / ".streamlit" / "secrets.toml").write_text(
        f'[auth]\nredirect_uri = "http://127.0.0.1:{port}/oauth2callback"\ncookie_secret = "{COOKIE_SECRET}"\n'
        f'client_id = "rejudge"\nclient_secret = "rejudge-secret"\nserver_metadata_url = "{metadata_url}"\n')
    roles = workdir / "rejudge.toml"
    roles.write_text(ROLES)
    db, log = workdir / "rejudge.db", workdir / "streamlit.log"
    # in team mode only an owner's first visit loads the demo runs; the owner prepared this database beforehand, as
    # the README's team set-up does with `python -m audit demo` (which made `demo_db`)
    copy_db(demo_db, db)
    cmd = [*streamlit_command(), "run", "app.py", "--server.headless", "true", "--server.port", str(port),
           "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    env = {**os.environ, "HOME": str(home), "REJUDGE_DB": str(db), "REJUDGE_ROLES": str(roles),
           "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    server = AppServer(url=f"http://127.0.0.1:{port}", db=db, log=log, proc=proc)
    try:
        wait_healthy(server)
    except BaseException:
        stop_app(server)
        raise
    return server


@pytest.fixture(scope="module")
def team_app(provider: str, tmp_path_factory: pytest.TempPathFactory, demo_db: Path) -> Iterator[AppServer]:
    server = start_team_app(tmp_path_factory.mktemp("team-app"), provider, demo_db)
    yield server
    stop_app(server)


def sign_in(page: Page, app: AppServer, who: str, path: str = "") -> None:
    """Open the app, press Sign in, pick `who` on the provider's form; back in the app once signed in."""
    page.goto(app.url + path)
    page.get_by_role("button", name="Sign in").click()
    page.locator("input[name=sub]").fill(f"sub-{who}")
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(re.compile(re.escape(app.url)), timeout=HEALTH_TIMEOUT_S * 1000)


def sidebar(page: Page):  # noqa: ANN201 - a Playwright locator
    return page.get_by_test_id("stSidebar")


def as_shown(text: str) -> re.Pattern[str]:
    """`text` as the page shows it: `ui.text.md_literal` puts an invisible word joiner (U+2060) into addresses so
    that no link is made of them."""
    return re.compile("".join(re.escape(c) + "\u2060?" for c in text))


def signed_in_as(page: Page, who: str, role: str) -> None:
    expect(sidebar(page).get_by_text(as_shown(f"Signed in as {who} · {role}"))).to_be_visible(
        timeout=HEALTH_TIMEOUT_S * 1000)


def reviews(app: AppServer) -> list[tuple]:
    with closing(open_db(app.db).conn) as conn:
        return conn.execute("SELECT reviewer, role, auth_subject, auth_email, auth_mode FROM reviews "
                            "ORDER BY id").fetchall()


def label_in_queue(page: Page, app: AppServer, key: str, query: str = "") -> None:
    """Open the queue of the demo run and press `key` (a: confirm, o: overrule); wait for the stored strip."""
    page.goto(f"{app.url}/queue?run={DEMO}&card=classic{query}")
    page.locator(".st-key-queue-card button").first.wait_for(state="visible", timeout=HEALTH_TIMEOUT_S * 1000)
    wait_idle(page)  # a key pressed while the first run is still drawing the card reaches no shortcut (CI, stop 46)
    page.get_by_role("heading", name="Review queue").click()  # focus the page, not a text box
    page.keyboard.press(key)
    expect(page.get_by_text(re.compile(r"Stored #\d+")).first).to_be_visible(timeout=30_000)


def test_sign_in_review_as_yourself_and_sign_out(team_app: AppServer, new_page: Callable[[], Page]):
    page = new_page()
    sign_in(page, team_app, REVIEWER)
    signed_in_as(page, REVIEWER, "reviewer")
    expect(sidebar(page).get_by_role("textbox", name="Reviewer name")).to_have_count(0)
    label_in_queue(page, team_app, "o")
    assert reviews(team_app)[-1] == (REVIEWER, "reviewer", f"sub-{REVIEWER}", REVIEWER, "oidc")
    sidebar(page).get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="End session").click()  # the provider's own sign-out form (OIDC end_session)
    expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
    page.goto(f"{team_app.url}/queue?run={DEMO}&card=classic")
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    expect(sidebar(page)).to_have_count(0)


def test_two_people_review_the_same_run_at_once(team_app: AppServer, new_page: Callable[[], Page]):
    rita, adam = new_page(), new_page()
    sign_in(rita, team_app, REVIEWER)
    sign_in(adam, team_app, ADJUDICATOR)
    signed_in_as(rita, REVIEWER, "reviewer")
    signed_in_as(adam, ADJUDICATOR, "adjudicator")
    before = len(reviews(team_app))
    label_in_queue(rita, team_app, "a")
    label_in_queue(adam, team_app, "a")
    assert {r[0] for r in reviews(team_app)[before:]} == {REVIEWER, ADJUDICATOR}


def test_a_reviewer_cannot_adjudicate_forge_the_url_or_export(team_app: AppServer, new_page: Callable[[], Page]):
    page = new_page()
    sign_in(page, team_app, REVIEWER)
    signed_in_as(page, REVIEWER, "reviewer")
    label_in_queue(page, team_app, "o", f"&adj=1&reviewer={OWNER}")
    signed_in_as(page, REVIEWER, "reviewer")
    expect(sidebar(page).get_by_text("Adjudicator")).to_have_count(0)
    expect(page).not_to_have_url(re.compile(r"reviewer=|adj=1"))
    assert reviews(team_app)[-1][:2] == (REVIEWER, "reviewer")
    page.goto(f"{team_app.url}/export?run={DEMO}")  # an owner's path: the reviews file
    # the refusal is drawn twice, in this order: beside the decisions CSV (which names each reviewer's label) and
    # under Reviews, after the slow LaTeX preview; a substring match passed only while the second was not yet drawn
    refusal = "Only an owner may export a run's reviews; your role is reviewer."
    expect(page.get_by_text(f"Decisions with every label (CSV): {refusal}", exact=True)).to_be_visible()
    expect(page.get_by_text(refusal, exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="This run's reviews (JSON lines)")).to_have_count(0)
    expect(page.get_by_role("button", name="Decisions with every label (CSV)")).to_have_count(0)


def test_a_blind_reviewer_cannot_unblind(team_app: AppServer, new_page: Callable[[], Page]):
    page = new_page()
    sign_in(page, team_app, REVIEWER)
    signed_in_as(page, REVIEWER, "reviewer")  # the demo runs exist once someone admitted has visited
    with closing(open_db(team_app.db).conn) as conn:
        set_blind_assignment(Database(conn), DEMO, EVERYONE, True, set_by=OWNER)
    try:
        page.goto(f"{team_app.url}/scores?run={DEMO}&blind=0")
        expect(page.get_by_text("hidden while you review blind")).to_be_visible()
        toggle = sidebar(page).get_by_role("switch", name="Blind review")
        expect(toggle).to_be_checked()
        expect(toggle).to_be_disabled()
        toggle.click(force=True)
        expect(toggle).to_be_checked()
        expect(page.get_by_text("hidden while you review blind")).to_be_visible()
    finally:
        with closing(open_db(team_app.db).conn) as conn:
            set_blind_assignment(Database(conn), DEMO, EVERYONE, None, set_by=OWNER)


def test_someone_not_in_the_roles_file_is_refused(team_app: AppServer, new_page: Callable[[], Page]):
    page = new_page()
    sign_in(page, team_app, STRANGER)
    expect(page.get_by_role("heading", name="Rejudge — no access")).to_be_visible(timeout=30_000)
    expect(page.get_by_text(as_shown(f"You are signed in as {STRANGER}"))).to_be_visible()
    expect(sidebar(page)).to_have_count(0)
    page.goto(f"{team_app.url}/export?run={DEMO}")
    expect(page.get_by_role("heading", name="Rejudge — no access")).to_be_visible()


def test_a_forged_identity_cookie_signs_nobody_in(team_app: AppServer, new_page: Callable[[], Page]):
    from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

    page = new_page()
    forged = json.dumps({"sub": f"sub-{OWNER}", "email": OWNER, "is_logged_in": True, "provider": "default",
                         "origin": team_app.url})
    for secret in ("not-the-server-secret", None):  # signed with another secret; unsigned
        value = create_signed_value(secret, "_streamlit_user", forged).decode() if secret else forged
        page.context.clear_cookies()
        page.context.add_cookies([{"name": "_streamlit_user", "value": value, "url": team_app.url}])
        page.goto(f"{team_app.url}/runs")
        expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
        expect(page.get_by_text(SIGNED_IN)).to_have_count(0)


def test_unreachable_provider_is_a_clear_page(new_page: Callable[[], Page], tmp_path: Path, demo_db: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    server = start_team_app(tmp_path, f"http://127.0.0.1:{dead}/.well-known/openid-configuration", demo_db)
    try:
        page = new_page()
        page.goto(server.url)
        expect(page.get_by_text("The sign-in provider cannot be reached")).to_be_visible(timeout=30_000)
        expect(page.get_by_role("button", name="Sign in")).to_have_count(0)
        assert "Traceback" not in page.content()
        assert "Traceback" not in server.log.read_text(errors="replace")
    finally:
        stop_app(server)


def test_the_owner_assigns_review_and_each_reviewer_sees_their_share(team_app: AppServer,
                                                                     new_page: Callable[[], Page]):
    from audit.review.assigned_review import clear_review_assignment, share_of

    owner = new_page()
    sign_in(owner, team_app, OWNER)
    signed_in_as(owner, OWNER, "owner")
    owner.goto(f"{team_app.url}/?run={DEMO}")
    expect(owner.get_by_role("button", name="Open run")).to_be_visible(timeout=HEALTH_TIMEOUT_S * 1000)  # demo loaded
    wait_idle(owner)  # a form submitted while the page's first run still draws is lost (this session's CI, 09:04)
    owner.get_by_text("Assigned review (who reviews which documents)").click()
    owner.get_by_role("textbox", name=re.compile("Reviewers")).fill(f"{REVIEWER}\n{ADJUDICATOR}")
    owner.get_by_role("button", name="Save review assignment").click()
    expect(owner.get_by_text(re.compile(r"shared by 2 reviewers"))).to_be_visible(timeout=30_000)
    try:
        with closing(open_db(team_app.db).conn) as conn:
            mine = share_of(Database(conn), DEMO, REVIEWER)
        assert mine
        rita = new_page()
        sign_in(rita, team_app, REVIEWER)
        signed_in_as(rita, REVIEWER, "reviewer")
        rita.goto(f"{team_app.url}/queue?run={DEMO}&card=classic")
        expect(rita.get_by_text(re.compile(rf"Your share: \d+ of {len(mine)} decisions"))).to_be_visible(
            timeout=30_000)
        rita.goto(f"{team_app.url}/?run={DEMO}")
        rita.get_by_text("Assigned review (who reviews which documents)").click()
        expect(rita.get_by_text("Only an owner may change a run's review assignments").last).to_be_visible()
        expect(rita.get_by_role("button", name="Save review assignment")).to_have_count(0)
    finally:
        with closing(open_db(team_app.db).conn) as conn:
            clear_review_assignment(Database(conn), DEMO)


def test_the_browser_card_stops_storing_once_the_browser_signed_out_in_another_tab(team_app: AppServer,
                                                                                     new_page: Callable[[], Page]):
    """One tab signed out (the browser's cookie gone); the other tab's card kept storing labels as the person who
    left, marked signed in. Its save route now reads the cookie at each save: the card says so and stores nothing."""
    page = new_page()
    sign_in(page, team_app, REVIEWER)
    signed_in_as(page, REVIEWER, "reviewer")
    page.goto(f"{team_app.url}/queue?run={DEMO}")
    page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=60_000)
    wait_idle(page)
    page.get_by_role("heading", name="Review queue").click()
    before = len(reviews(team_app))
    page.keyboard.press("a")
    expect(page.locator(".rjrc-status")).to_contain_text("1 saved", timeout=30_000)
    assert reviews(team_app)[before:] == [(REVIEWER, "reviewer", f"sub-{REVIEWER}", REVIEWER, "oidc")]
    other = page.context.new_page()  # the same browser: one cookie jar
    other.goto(team_app.url)
    sidebar(other).get_by_role("button", name="Sign out").click()
    other.get_by_role("button", name="End session").click()
    expect(other.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
    page.bring_to_front()
    page.get_by_role("heading", name="Review queue").click()
    page.keyboard.press("a")
    expect(page.locator(".rjrc-mark .error")).to_contain_text(f"no longer signed in as {REVIEWER}", timeout=30_000)
    assert len(reviews(team_app)) == before + 1  # nothing more stored as the person who left
