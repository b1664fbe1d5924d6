"""Browser end-to-end fixtures: the app started as the README says, Debian's chromium driven by Playwright.

- `app_server` (session): `streamlit run app.py` from the repo root on a free local port, HOME in a temp dir and
  REJUDGE_DB pointing at a fresh temp database; its process group is stopped at the end.
- `demo_app` (session): the same server once a first visit has scored the demo run into the database.
- `browser` (session) and `new_page` (per test, one browser context = one Streamlit session per page).
- `shots` (session): where every visited page is saved as PNG (`$E2E_SHOTS` or a temp dir, printed at the end);
  with UPDATE_SCREENSHOTS=1 the main pages are also copied to docs/screenshots/ for the README.

No browser is downloaded: without /usr/bin/chromium the e2e tests are skipped (scripts/test.sh installs it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from audit.store.database import open_db
from tests.e2e.e2e_config import CHROMIUM, CHROMIUM_ARGS, DEMO, DOCS_SHOTS, HEALTH_TIMEOUT_S, VIEWPORT
from tests.e2e.e2e_server import AppServer, start_app, stop_app

try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # pragma: no cover - playwright is in requirements-dev.txt
    sync_playwright = None

HERE = Path(__file__).resolve().parent


def skip_reason() -> str | None:
    if sync_playwright is None:
        return "e2e: Python playwright is not installed (pip install -r requirements-dev.txt)"
    if not os.access(CHROMIUM, os.X_OK):
        return (f"e2e: {CHROMIUM} is missing: apt-get install chromium (scripts/test.sh does it when run as root); "
                "no downloaded browser builds are used")
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = skip_reason()
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    server = start_app(tmp_path_factory.mktemp("e2e-app"))
    yield server
    stop_app(server)


@pytest.fixture(scope="session")
def demo_app(app_server: AppServer, browser: Browser) -> AppServer:
    """The server after one visit to its root: the app scores the demo run into the database on its first run."""
    ctx = browser.new_context(viewport=VIEWPORT)
    try:
        page = ctx.new_page()
        page.goto(app_server.url)
        page.get_by_role("heading", name=re.compile(r"^Rejudge")).wait_for(timeout=HEALTH_TIMEOUT_S * 1000)
        page.get_by_test_id("stSidebar").get_by_role("textbox", name="Reviewer name").wait_for()
    finally:
        ctx.close()
    with closing(open_db(app_server.db).conn) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs WHERE name = ?", [DEMO]).fetchone()[0] == 1
    return app_server


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[[], Page]]:
    """A factory of pages, each in its own browser context (so its own Streamlit session)."""
    contexts = []

    def make() -> Page:
        ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        ctx.set_default_timeout(30_000)
        contexts.append(ctx)
        return ctx.new_page()

    yield make
    for ctx in contexts:
        ctx.close()


_SHOTS_DIRS: list[Path] = []


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The screenshot folder: $E2E_SHOTS, else a temp dir; printed now (with -s) and in the summary."""
    if os.environ.get("E2E_SHOTS"):
        folder = Path(os.environ["E2E_SHOTS"]).resolve()
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("e2e-shots")
    _SHOTS_DIRS.append(folder)
    print(f"\ne2e screenshots: {folder}")
    return folder


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for folder in _SHOTS_DIRS:
        n = len(list(folder.glob("*.png")))
        terminalreporter.write_line(f"e2e screenshots ({n} PNG): {folder}")
        if os.environ.get("UPDATE_SCREENSHOTS") == "1":
            terminalreporter.write_line(f"README screenshots copied to {DOCS_SHOTS}")
