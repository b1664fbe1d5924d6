"""Issue 38: the browser card's labels are saved by the save route (`ui/review_card/route.py`), not by a rerun,
and sessions labelling at once store every label once. Four sessions (one browser context each) label five
decisions each, interleaved; every label is posted to the route, shown as saved, and stored exactly once.
A request without the page's grant is refused and stores nothing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from contextlib import closing

from playwright.sync_api import expect

from audit.store.database import open_db
from tests.e2e.e2e_config import DEMO, VIEWPORT
from tests.e2e.e2e_helpers import assert_no_exception, wait_idle

SESSIONS, LABELS = 4, 5
ROUTE = "/api/review-card/events"


def _rows(db, prefix: str) -> list[tuple]:
    with closing(open_db(db).conn) as conn:
        return conn.execute("SELECT reviewer, decision_id, client_id FROM reviews WHERE reviewer LIKE ? ORDER BY id",
                            [prefix + "%"]).fetchall()


def test_four_sessions_labelling_at_once_store_every_label_once_through_the_route(demo_app, browser):
    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(SESSIONS)]
    try:
        pages, posted = [], []
        for n, ctx in enumerate(contexts):
            page = ctx.new_page()
            page.on("request", lambda r: posted.append(r.url) if r.method == "POST" and ROUTE in r.url else None)
            page.goto(f"{demo_app.url}/queue?run={DEMO}&reviewer=conc{n}")
            page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=60_000)
            wait_idle(page)
            assert_no_exception(page)
            page.get_by_role("heading", name="Review queue").click()
            pages.append(page)
        for i in range(LABELS):  # interleaved: each session's label lands while the others' are being stored
            for page in pages:
                page.keyboard.press("a" if i % 2 == 0 else "o")
        for page in pages:
            expect(page.locator(".rjrc-status")).to_contain_text(f"{LABELS} saved", timeout=30_000)
            expect(page.locator(".rjrc-status")).not_to_contain_text("pending")
        rows = _rows(demo_app.db, "conc")
        assert len(rows) == SESSIONS * LABELS
        assert len({r[2] for r in rows}) == len(rows) and all(r[2] for r in rows)  # no client id twice
        for n in range(SESSIONS):  # each session: its own reviewer, five different decisions
            assert len({r[1] for r in rows if r[0] == f"conc{n}"}) == LABELS
        assert posted, "the labels were not posted to the save route"
    finally:
        for ctx in contexts:
            ctx.close()


def test_a_post_without_the_pages_grant_is_refused(demo_app):
    events = [{"cid": "forged-1", "type": "label", "run": DEMO, "who": "intruder", "decision": 1, "label": "match"}]
    for body in ({"queue": "q", "events": events}, {"grant": "guessed", "queue": "q", "events": events}):
        req = urllib.request.Request(demo_app.url + ROUTE, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=10)
            raise AssertionError("the route stored without a grant")
        except urllib.error.HTTPError as e:
            assert e.code == 403
    assert _rows(demo_app.db, "intruder") == []
