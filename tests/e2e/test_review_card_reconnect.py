"""Issue 25: the browser review card across a lost connection. Labels given while the app's websocket is down are
shown as pending, are sent again once the app has reconnected, and are stored exactly once; a reload afterwards
shows what was stored.

Two ways to lose it: in the browser (every websocket of the page goes through a Playwright route, closed, and any
new socket refused, while the context is offline; the server keeps the session), and by stopping the server and
starting it again on the same port (the session, and what it had answered, is gone)."""

from __future__ import annotations

import re
import time
from contextlib import closing

from playwright.sync_api import BrowserContext, Page, WebSocketRoute, expect

from audit.store.database import open_db
from tests.e2e.e2e_config import DEMO
from tests.e2e.e2e_helpers import assert_no_exception, wait_idle
from tests.e2e.e2e_server import copy_db, start_app, stop_app

SMALL = {"width": 1280, "height": 720}
OFFLINE_LABELS = 3


class Link:
    """The page's websockets to the app, through routes this test can cut and restore."""

    def __init__(self, ctx: BrowserContext) -> None:
        self.ctx, self.up, self.routes = ctx, True, []
        ctx.route_web_socket(re.compile(r"/_stcore/stream"), self._route)

    def _route(self, ws: WebSocketRoute) -> None:
        if not self.up:  # the browser tries to reconnect while offline: refused
            ws.close()
            return
        ws.connect_to_server()
        self.routes.append(ws)

    def drop(self) -> None:
        self.up = False
        self.ctx.set_offline(True)  # the app's health pings before a reconnect fail too
        for ws in self.routes:
            ws.close()
        self.routes.clear()

    def restore(self) -> None:
        self.up = True
        self.ctx.set_offline(False)


def _rows(db, reviewer: str) -> list[tuple]:
    with closing(open_db(db).conn) as conn:
        return conn.execute("SELECT decision_id, label, client_id FROM reviews WHERE reviewer = ? ORDER BY id",
                            [reviewer]).fetchall()


def _open_card(page: Page, url: str) -> None:
    page.goto(url)
    page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    page.get_by_role("heading", name="Review queue").click()  # keys go to the page, not to a text box


def _decision(page: Page) -> int:
    return int(page.locator(".rjrc-card").get_attribute("data-decision") or -1)


def _connection(page: Page) -> str:
    return page.evaluate("() => document.querySelector('[data-testid=\"stApp\"]')"
                         ".getAttribute('data-test-connection-state')")


def test_labels_given_offline_are_pending_resent_after_the_reconnect_and_stored_once(demo_app, browser):
    who = f"offline-{int(time.time())}"
    ctx = browser.new_context(viewport=SMALL)
    try:
        link = Link(ctx)
        page = ctx.new_page()
        _open_card(page, f"{demo_app.url}/queue?run={DEMO}&reviewer={who}")
        page.keyboard.press("a")  # one label while connected: saved
        expect(page.locator(".rjrc-status")).to_contain_text("1 saved", timeout=30_000)
        assert len(_rows(demo_app.db, who)) == 1

        link.drop()
        page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                               ".getAttribute('data-test-connection-state') !== 'CONNECTED'", timeout=30_000)
        offline = []
        for i in range(OFFLINE_LABELS):
            offline.append(_decision(page))
            page.keyboard.press("o" if i % 2 == 0 else "a")
        assert len(set(offline)) == OFFLINE_LABELS  # the card moved on at every key, offline too
        status = page.locator(".rjrc-status")
        expect(status).to_contain_text(f"{OFFLINE_LABELS} pending")
        expect(status).to_contain_text("1 saved")
        page.keyboard.press("p")  # back to the last label given offline: marked pending on its card
        assert _decision(page) == offline[-1]
        expect(page.locator(".rjrc-mark .pending")).to_contain_text("pending")
        page.keyboard.press("n")
        page.wait_for_timeout(4_000)  # longer than the card's re-send interval: its re-sends go nowhere
        assert len(_rows(demo_app.db, who)) == 1 and _connection(page) != "CONNECTED"
        expect(status).to_contain_text(f"{OFFLINE_LABELS} pending")

        link.restore()
        expect(status).to_contain_text(f"{OFFLINE_LABELS + 1} saved", timeout=90_000)
        expect(status).not_to_contain_text("pending")
        page.wait_for_timeout(4_000)  # later re-sends (none should be left) store nothing more
        rows = _rows(demo_app.db, who)
        assert len(rows) == OFFLINE_LABELS + 1
        assert len({r[2] for r in rows}) == len(rows) and all(r[2] for r in rows)  # one row per client id
        assert [r[0] for r in rows[1:]] == offline  # in the order given
        assert _connection(page) == "CONNECTED"

        page.reload()  # the stored labels, as the store has them
        page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=60_000)
        wait_idle(page)
        assert_no_exception(page)
        expect(page.locator(".rjrc")).to_contain_text(f"You have labelled {OFFLINE_LABELS + 1} of")
        assert _decision(page) not in {r[0] for r in rows}  # the reviewer's queue skips what they labelled
        page.wait_for_timeout(4_000)  # nothing is re-sent after the reload: the tab's outbox is empty
        assert len(_rows(demo_app.db, who)) == OFFLINE_LABELS + 1
    finally:
        ctx.close()


def test_labels_given_while_the_server_is_down_are_stored_once_by_the_restarted_server(demo_app, browser,
                                                                                        tmp_path):
    copy_db(demo_app.db, tmp_path / "rejudge.db")  # a server of its own, to stop and start again
    server = start_app(tmp_path)
    who = f"restart-{int(time.time())}"
    ctx = browser.new_context(viewport=SMALL)
    try:
        page = ctx.new_page()
        _open_card(page, f"{server.url}/queue?run={DEMO}&reviewer={who}")
        page.keyboard.press("a")
        status = page.locator(".rjrc-status")
        expect(status).to_contain_text("1 saved", timeout=30_000)

        stop_app(server)
        page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                               ".getAttribute('data-test-connection-state') !== 'CONNECTED'", timeout=30_000)
        offline = []
        for _ in range(OFFLINE_LABELS):
            offline.append(_decision(page))
            page.keyboard.press("o")
        expect(status).to_contain_text(f"{OFFLINE_LABELS} pending")
        assert len(_rows(server.db, who)) == 1

        server = start_app(tmp_path, port=int(server.url.rsplit(":", 1)[1]))
        expect(status).to_contain_text(f"{OFFLINE_LABELS + 1} saved", timeout=120_000)
        expect(status).not_to_contain_text("pending")
        page.wait_for_timeout(4_000)
        rows = _rows(server.db, who)
        assert len(rows) == OFFLINE_LABELS + 1 and len({r[2] for r in rows}) == len(rows)
        assert [r[0] for r in rows[1:]] == offline

        page.reload()
        page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=60_000)
        wait_idle(page)
        expect(page.locator(".rjrc")).to_contain_text(f"You have labelled {OFFLINE_LABELS + 1} of")
        page.wait_for_timeout(4_000)
        assert len(_rows(server.db, who)) == OFFLINE_LABELS + 1
    finally:
        ctx.close()
        stop_app(server)
