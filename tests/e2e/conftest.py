"""Browser end-to-end fixtures: the app started as the README says, Debian's chromium driven by Playwright.

- `demo_db` (session): a database with the demo runs scored once per run (`python -m audit demo`; one worker builds
  it, the others wait), the template that servers of the demo start from (`seeded`): scoring them takes 10-30 s, which
  every server would otherwise pay again.
- `app_server` (session): `streamlit run app.py` from the repo root on a free local port, HOME in a temp dir and
  REJUDGE_DB pointing at a copy of `demo_db`; its process group is stopped at the end. Tests of the dashboard's
  first start (scoring into a new database) start servers of their own.
- `demo_app` (session): the same server once a first visit has rendered the Runs page.
- `browser` (session) and `new_page` (per test, one browser context = one Streamlit session per page).
- `shots` (session): where every visited page is saved as PNG (`$E2E_SHOTS` or a temp dir, printed at the end;
  xdist workers share it);
  with UPDATE_SCREENSHOTS=1 the main pages are also copied to docs/screenshots/ for the README.

No browser is downloaded: without /usr/bin/chromium the e2e tests are skipped (scripts/test.sh installs it).

Under pytest-xdist (scripts/test.sh runs this suite on four workers with the real-LLM tests, `--dist loadgroup`)
every worker has its own session fixtures (but one demo template): its own demo server, browser; no two workers share
a server, a port or a database. A module whose tests share a module-scoped server is one `xdist_group`, so the server
is started once. A test marked `alone` (timing assertions) runs while no other worker runs a browser test
(`tests.conftest._alone_or_together`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from audit.store.database import open_db
from tests.conftest import run_temp, shared_template
from tests.e2e.e2e_config import CHROMIUM, CHROMIUM_ARGS, DEMO, DOCS_SHOTS, HEALTH_TIMEOUT_S, VIEWPORT
from tests.e2e.e2e_server import AppServer, build_demo_db, seeded, start_app, stop_app

try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
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
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The template: a database with the demo runs, scored once per test run (the first worker to ask builds it
    while the others wait: `tests.conftest.shared_template`); never served, only copied."""
    return shared_template(tmp_path_factory, "e2e-demo", build_demo_db)


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory, demo_db: Path) -> Iterator[AppServer]:
    server = start_app(seeded(tmp_path_factory.mktemp("e2e-app"), demo_db))
    yield server
    stop_app(server)


@pytest.fixture(scope="session")
def demo_app(app_server: AppServer, browser: Browser) -> AppServer:
    """The server after one visit to its root (the first page view imports the app's modules: no test pays it)."""
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


EXPECT_TIMEOUT_MS = 15_000
"""How long an `expect` without its own timeout waits (Playwright's default is 5 s): on two busy cores, with the
other worker's browser and server beside it, a rerun can take longer. An assertion that holds passes as soon as it
holds, so this only decides when one that does not is reported."""


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
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


def _shots_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("E2E_SHOTS"):
        return Path(os.environ["E2E_SHOTS"]).resolve()
    return run_temp(tmp_path_factory) / "e2e-shots"


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The screenshot folder: $E2E_SHOTS, else `e2e-shots` in the run's temp folder; printed now (with -s) and in the
    summary. Every test saves under names of its own, so xdist workers share the folder."""
    folder = _shots_folder(tmp_path_factory)
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\ne2e screenshots: {folder}")
    return folder


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """On the controller (no `shots` fixture ran there under xdist), from the folder's place."""
    factory = getattr(config, "_tmp_path_factory", None)  # pytest's tmp_path plugin; absent with -p no:tmpdir
    if factory is None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    folder = Path(os.environ["E2E_SHOTS"]).resolve() if os.environ.get("E2E_SHOTS") else \
        factory.getbasetemp() / "e2e-shots"
    if folder.is_dir():
        n = len(list(folder.glob("*.png")))
        terminalreporter.write_line(f"e2e screenshots ({n} PNG): {folder}")
        if os.environ.get("UPDATE_SCREENSHOTS") == "1":
            terminalreporter.write_line(f"README screenshots copied to {DOCS_SHOTS}")
