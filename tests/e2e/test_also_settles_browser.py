"""Issue 36 §1 in the browser: the review card says which other runs a review settles its question in ("also
settles this question in runs demo-chimera-smollm2, demo-chimera-fuzzy-mixed"), blind and sighted, and a label
given on the card is then read by that other run (through the shared question)."""

from __future__ import annotations

import re
import time
from contextlib import closing

import pytest
from playwright.sync_api import Page, expect

from audit.store.database import open_db
from audit.views import load_view
from tests.e2e.e2e_config import DEMO
from tests.e2e.e2e_helpers import assert_no_exception, wait_idle

OTHER = "demo-chimera-smollm2"
SMALL = {"width": 1280, "height": 720}


def _open_card(page: Page, url: str) -> None:
    page.goto(url)
    page.locator(".rjrc-card[data-decision]:not([data-decision=''])").wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    page.get_by_role("heading", name="Review queue").click()  # keys go to the page, not to a text box


def _reviews_in(path, run: str, who: str) -> list[str]:
    db = open_db(path)
    with closing(db.conn):
        return [r["label"] for d in load_view(db, run).decisions() for r in d["reviews"] if r["reviewer"] == who]


@pytest.mark.parametrize("blind", [False, True], ids=["sighted", "blind"])
def test_the_card_names_the_other_runs_it_settles(demo_app, new_page, shots, blind: bool) -> None:
    page = new_page()
    page.set_viewport_size(SMALL)
    who = f"sharer-{'blind' if blind else 'sighted'}"
    _open_card(page, f"{demo_app.url}/queue?run={DEMO}&reviewer={who}{'&blind=1' if blind else ''}")
    card = page.locator(".rjrc-card")
    # the twin run with the same predictions asks every question; the demo board's run of them may too
    expect(card).to_contain_text(re.compile(rf"Also settles this question in runs? [^\n]*{re.escape(OTHER)}"),
                                 timeout=30_000)
    page.screenshot(path=str(shots / f"also-settles-{'blind' if blind else 'sighted'}.png"))
    if blind:
        expect(card).not_to_contain_text("judge label")
        return
    page.keyboard.press("a")  # confirm the judge's label on the first card
    deadline = time.time() + 30
    while not _reviews_in(demo_app.db, OTHER, who) and time.time() < deadline:
        time.sleep(0.3)
    assert _reviews_in(demo_app.db, OTHER, who) == _reviews_in(demo_app.db, DEMO, who) != []
