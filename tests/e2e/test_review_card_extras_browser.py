"""Issue 25: the browser review card's note box, errata form and whole-document link, on CHIMERA and two other
families. A note typed on a card is stored with that card's label (keys typed in the note are note text, Esc gives
the review keys back); a flag is stored once in the errata table with the decision's document; the link opens the
Document page of that decision in the same session; all of it above the fold at 1280x720 with visible focus."""

from __future__ import annotations

import re
import time
from contextlib import closing
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from audit.store.database import open_db
from tests.e2e.e2e_config import DEMO
from tests.e2e.e2e_helpers import assert_above_the_fold, assert_no_exception, heading, wait_idle

SMALL = {"width": 1280, "height": 720}
NOTE = "Both spans <b>name</b> the same thing & \"more\"; a o n p"  # review keys and markup, typed as note text


def _query(db: Path, sql: str, args: list) -> list[tuple]:
    with closing(open_db(db).conn) as conn:
        return conn.execute(sql, args).fetchall()


def _wait_rows(db: Path, sql: str, args: list, n: int, timeout: float = 30) -> list[tuple]:
    deadline = time.time() + timeout
    rows = _query(db, sql, args)
    while len(rows) < n and time.time() < deadline:
        time.sleep(0.3)
        rows = _query(db, sql, args)
    return rows


def _open_card(page: Page, url: str) -> None:
    page.goto(url)
    page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)


def _card(page: Page) -> tuple[int, int]:
    card = page.locator(".rjrc-card")
    return int(card.get_attribute("data-pos") or -1), int(card.get_attribute("data-decision") or -1)


def _runs(db: Path) -> list[tuple[str, str]]:
    """The demo CHIMERA run and the first run of two other families."""
    runs = _query(db, "SELECT name, task FROM runs ORDER BY id", [])
    chosen = {DEMO: "chimera"}
    for name, task in runs:
        if task not in chosen.values() and task in ("litxbench", "ideation"):
            chosen[name] = task
    assert len(set(chosen.values())) == 3, runs
    return list(chosen.items())


def _outlined(page: Page) -> bool:
    return page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle") != "none"


@pytest.mark.parametrize("blind", [False, True], ids=["sighted", "blind"])
def test_note_flag_and_document_link_on_three_families(demo_app, browser, shots, blind):
    ctx = browser.new_context(viewport=SMALL)
    ctx.set_default_timeout(30_000)
    try:
        for run, task in _runs(demo_app.db):
            who = f"extras-{task}-{'blind' if blind else 'sighted'}"
            page = ctx.new_page()
            _open_card(page, f"{demo_app.url}/queue?run={run}&reviewer={who}{'&blind=1' if blind else ''}")
            note = page.get_by_role("textbox", name="Note", exact=True)
            flag = page.get_by_role("button", name=re.compile(r"^Flag a gold error"))
            link = page.get_by_role("link", name=re.compile(r"^Open the whole"))
            labels = page.locator(".rjrc-buttons button")
            assert_above_the_fold(page, (note, flag, link, labels.first), SMALL["height"], run)  # card and extras
            page.screenshot(path=str(shots / f"review-card-extras-{task}{'-blind' if blind else ''}.png"))

            # the note: review keys typed in it are text; Esc leaves it; the next label stores it with the review
            pos, decision = _card(page)
            note.click()
            assert _outlined(page)
            page.keyboard.type(NOTE)
            page.keyboard.press("Backspace")
            expect(note).to_have_value(NOTE[:-1])
            assert _card(page) == (pos, decision)  # no key of the note reached the card
            page.keyboard.press("Escape")
            expect(note).not_to_be_focused()
            key = labels.first.get_attribute("aria-keyshortcuts")
            page.keyboard.press(key)
            assert _card(page)[0] == pos + 1
            expect(note).to_have_value("")  # the next card has its own (empty) note
            rows = _wait_rows(demo_app.db, "SELECT decision_id, note FROM reviews WHERE reviewer = ?", [who], 1)
            assert rows == [(decision, NOTE[:-1].strip())], run
            page.keyboard.press("n")  # a label without a note stores none
            _, unnoted = _card(page)
            page.keyboard.press(key)
            rows = _wait_rows(demo_app.db, "SELECT decision_id, note FROM reviews WHERE reviewer = ?", [who], 2)
            assert rows[1:] == [(unnoted, None)], run

            # the errata form: flag the current decision's gold, stored once with the decision's document
            _, flagged = _card(page)
            flag.click()
            form = page.get_by_role("form", name=re.compile("Flag a gold error"))
            expect(form).to_be_visible()
            if form.get_by_role("combobox", name="Gold item").count():  # a family that lists its gold items
                form.get_by_role("combobox", name="Gold item").select_option(index=0)
            else:
                form.get_by_role("textbox", name="Gold item").fill("<i>gold</i> item")
            form.get_by_role("combobox", name="Problem").select_option("wrong value")
            form.get_by_role("textbox", name="Proposed correction").fill("the <right> one")
            form.get_by_role("textbox", name="Note", exact=True).fill("seen on the card")
            form.get_by_role("button", name="Flag gold item").click()
            expect(form).to_be_hidden()
            expect(page.locator(".rjrc-flag-status")).to_contain_text("Flagged", timeout=30_000)
            errata = _wait_rows(demo_app.db, "SELECT e.decision_id, e.doc_id, e.problem, e.correction, e.note, "
                                "e.item, d.doc_id FROM errata e JOIN decisions d ON d.id = e.decision_id "
                                "WHERE e.reviewer = ?", [who], 1)
            assert len(errata) == 1, run
            dec, doc, problem, correction, why, item, decision_doc = errata[0]
            assert (dec, problem, correction, why) == (flagged, "wrong value", "the <right> one", "seen on the card")
            assert doc == decision_doc and item
            assert page.locator(".rjrc b, .rjrc i").filter(has_text=re.compile("^(name|gold)$")).count() == 0

            # the whole-document link: the Document page of this decision, in this session (reviewer kept)
            _, here = _card(page)
            doc_of = _query(demo_app.db, "SELECT doc_id FROM decisions WHERE id = ?", [here])[0][0]
            link.focus()
            assert _outlined(page)
            link.click()
            page.wait_for_url(re.compile(r"/document\?"), timeout=30_000)
            expect(heading(page, re.compile(r"review$"))).to_be_visible(timeout=30_000)
            wait_idle(page)
            assert_no_exception(page)
            url = page.url
            number = _query(demo_app.db, "SELECT COUNT(*) FROM decisions WHERE run_id = (SELECT run_id FROM "
                            "decisions WHERE id = ?) AND id <= ?", [here, here])[0][0]  # as the card shows it
            assert f"decision_no={number}" in url and f"reviewer={who}" in url, url
            assert ("blind=1" in url) == blind, url
            assert parse_qs(urlsplit(url).query)["doc"] == [doc_of], url
            page.close()
    finally:
        ctx.close()
