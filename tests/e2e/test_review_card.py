"""Issue 25: the review card in the browser. A burst of key presses stores every label once; a reload in the
middle of a burst loses no label the card showed as saved (and re-sends the others); every family's demo run shows
its card with labelled, keyed buttons above the fold at 1280x720; a blind card shows nothing of the judge."""

from __future__ import annotations

import re
import time
from contextlib import closing

import pytest
from playwright.sync_api import expect

from audit.store.database import open_db
from tests.e2e.e2e_config import DEMO
from tests.e2e.e2e_helpers import assert_above_the_fold, assert_no_exception, wait_idle

SMALL = {"width": 1280, "height": 720}


def _rows(db, reviewer: str) -> list[tuple]:
    with closing(open_db(db).conn) as conn:
        return conn.execute("SELECT decision_id, label, client_id FROM reviews WHERE reviewer = ? ORDER BY id",
                            [reviewer]).fetchall()


def _open_card(page, url: str) -> None:
    page.goto(url)
    page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    page.get_by_role("heading", name="Review queue").click()  # keys go to the page, not to a text box


def _saved(page) -> int:
    m = re.search(r"(\d+) saved", page.locator(".rjrc-status").inner_text())
    return int(m[1]) if m else 0


def _pos(page) -> int:
    return int(page.locator(".rjrc-card").get_attribute("data-pos") or -1)


@pytest.mark.alone  # a timing: the other xdist worker's browser and server would share the 2 cores
def test_ten_keys_within_a_second_store_ten_reviews_none_twice(demo_app, new_page):
    page = new_page()
    _open_card(page, f"{demo_app.url}/queue?run={DEMO}&reviewer=burst")
    t0 = time.perf_counter()
    for i in range(10):
        page.keyboard.press("a" if i % 2 == 0 else "o")
    assert time.perf_counter() - t0 < 1.0
    assert _pos(page) == 10  # the card moved on at every key, without waiting for the store
    expect(page.locator(".rjrc-status")).to_contain_text("10 saved", timeout=30_000)
    rows = _rows(demo_app.db, "burst")
    assert len(rows) == 10
    assert len({r[0] for r in rows}) == 10 and len({r[2] for r in rows}) == 10 and all(r[2] for r in rows)
    page.keyboard.press("Backspace")  # undo: back to the last card, its label withdrawn
    assert _pos(page) == 9
    expect(page.locator(".rjrc-status")).to_contain_text("11 saved", timeout=30_000)
    last = _rows(demo_app.db, "burst")[-1]
    assert last[0] == rows[-1][0] and last[1] is None


def test_the_progress_line_follows_the_labels_without_a_rerun(demo_app, new_page):
    """The card saves through its route, with no rerun of the page: the line above it is the route's answer, and
    the reviewer progress table under it is drawn again once the keys rest (one rerun of the card's fragment)."""
    page = new_page()
    _open_card(page, f"{demo_app.url}/queue?run={DEMO}&reviewer=counter")
    top = page.locator(".rjrc-top")
    expect(top).to_contain_text("You have labelled 0 of")
    for key in "aoa":
        page.keyboard.press(key)
    expect(page.locator(".rjrc-status")).to_contain_text("3 saved", timeout=30_000)
    expect(top).to_contain_text("You have labelled 3 of", timeout=30_000)
    table = page.locator('[data-testid="stDataFrame"]')  # its cells are in the DOM's text (reviewer, labelled, of…)
    expect(table).to_contain_text(re.compile(r"counter3\d"), timeout=30_000)
    page.keyboard.press("Backspace")  # the undo withdraws a label: the line counts current labels
    expect(page.locator(".rjrc-status")).to_contain_text("4 saved", timeout=30_000)
    expect(top).to_contain_text("You have labelled 2 of", timeout=30_000)
    expect(table).to_contain_text(re.compile(r"counter2\d"), timeout=30_000)
    assert len({r[0] for r in _rows(demo_app.db, "counter") if r[1] is not None}) == 3  # rows: one undo among them


def test_a_tab_closed_while_a_save_is_out_sends_the_labels_after_it(demo_app, new_page):
    """A retrieval run's save takes about a second: the labels given meanwhile wait for it. Closing the tab then
    must send them too (before, only the request already out arrived: 4 of 8 labels were lost)."""
    page = new_page()
    _open_card(page, f"{demo_app.url}/queue?run=demo-retrieval-bm25&reviewer=closer")
    page.keyboard.press("a")
    page.wait_for_timeout(150)  # its save is out (about a second on this run)
    for key in "oaa":
        page.keyboard.press(key)
    page.context.close()  # the window goes, its storage with it (a fresh profile): only what was sent counts
    deadline = time.monotonic() + 30
    while len(_rows(demo_app.db, "closer")) < 4 and time.monotonic() < deadline:
        time.sleep(0.25)
    rows = _rows(demo_app.db, "closer")
    assert len(rows) == 4 and len({r[2] for r in rows}) == 4  # each label once


def test_a_reload_in_a_burst_loses_no_label_shown_as_saved(demo_app, new_page):
    page = new_page()
    _open_card(page, f"{demo_app.url}/queue?run={DEMO}&reviewer=reloader&blind=1")
    keys = [b.get_attribute("aria-keyshortcuts") for b in page.locator(".rjrc-buttons button").all()]
    for i in range(8):
        page.keyboard.press(keys[i % len(keys)])
        if i == 4:
            page.wait_for_function("() => /[1-9]\\d* saved/.test(document.querySelector('.rjrc-status').innerText)",
                                   timeout=30_000)
    shown_saved = _saved(page)
    page.reload()  # some labels may still be on their way
    page.locator(".rjrc-card").first.wait_for(timeout=60_000)
    stored = _rows(demo_app.db, "reloader")
    assert len(stored) >= shown_saved >= 1
    # the labels not answered before the reload are re-sent from the tab's outbox, and stored once
    deadline = time.time() + 30
    while len(_rows(demo_app.db, "reloader")) < 8 and time.time() < deadline:
        time.sleep(0.5)
    rows = _rows(demo_app.db, "reloader")
    assert len(rows) == 8 and len({r[2] for r in rows}) == 8 and len({r[0] for r in rows}) == 8


def _runs(db) -> list[tuple[str, str]]:
    with closing(open_db(db).conn) as conn:
        return conn.execute("SELECT name, task FROM runs ORDER BY id").fetchall()


def test_every_familys_card_renders_above_the_fold_with_labelled_keys(demo_app, browser):
    runs = _runs(demo_app.db)
    assert len({task for _, task in runs}) >= 4
    ctx = browser.new_context(viewport=SMALL)
    try:
        for name, task in runs:
            for blind in (False, True):
                page = ctx.new_page()
                _open_card(page, f"{demo_app.url}/queue?run={name}&reviewer=looker{'&blind=1' if blind else ''}")
                buttons = page.locator(".rjrc-buttons button")
                assert buttons.count() >= 2, (name, blind)
                hint = page.locator(".rjrc-keys").inner_text()
                for b in buttons.all():
                    key = b.get_attribute("aria-keyshortcuts")
                    assert key and key in (b.get_attribute("aria-label") or "") and f"{key}:" in hint, (name, key)
                assert_above_the_fold(page, tuple(buttons.all()), SMALL["height"], (name, blind))
                card = page.locator(".rjrc-card").inner_html()
                if blind:
                    assert "judge label" not in card and "effective" not in card, (name, task)
                    assert "hidden until you label" in card
                buttons.first.focus()  # visible focus: the focused button draws an outline
                assert page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle") != "none"
                page.close()
    finally:
        ctx.close()
