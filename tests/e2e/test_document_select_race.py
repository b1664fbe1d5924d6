"""Issue 25: the Document review page's document select (`ui.state.synced_select`) keeps its document when a
sidebar link is clicked as soon as the page is drawn and the reviewer comes back through the sidebar (a link
without `?doc=`): the chosen document, not the run's first, is shown again and written back to the URL.

Before the fix the select's value lived only in its widget state, which Streamlit drops on a page that does not
draw the widget (and which a click before the browser registered the widget does not carry), so the page came
back on the run's first document. Same pattern as `ui.state._persisted` (tests/e2e/test_auth_sidebar_race.py)."""

from __future__ import annotations

import re
from contextlib import closing

from playwright.sync_api import expect

from audit.store.database import open_db

RUN = "demo-chimera-mixed"
AWAY = {"Run overview": "overview", "Scores": "scores", "Review queue": "queue", "Agreement": "agreement"}
"""The page clicked at once (its URL path), then back."""


def _doc_ids(db: object) -> list[str]:
    with closing(open_db(db).conn) as conn:
        return [r[0] for r in conn.execute("SELECT d.doc_id FROM documents d JOIN runs r ON r.id = d.run_id "
                                           "WHERE r.name = ? ORDER BY d.idx", [RUN])]


def test_a_sidebar_round_trip_right_after_the_draw_keeps_the_document(demo_app, new_page):
    docs = _doc_ids(demo_app.db)
    page = new_page()
    side = page.get_by_test_id("stSidebar")
    main = page.get_by_test_id("stMain")
    doc = docs[3]  # not the first: a reset shows
    page.goto(f"{demo_app.url}/document?run={RUN}&reviewer=racer&doc={doc}")
    for away, path in AWAY.items():
        expect(main.get_by_role("combobox").first).to_have_value(doc, timeout=30_000)
        side.get_by_role("link", name=away).click()  # at once: the page may still be running
        expect(page).to_have_url(re.compile(rf"/{path}\?"), timeout=30_000)
        side.get_by_role("link", name="Document review").click()
        expect(page).to_have_url(re.compile(rf"/document\?(?=.*doc={re.escape(doc)})(?=.*run={RUN})"),
                                 timeout=30_000)
        expect(main.get_by_role("combobox").first).to_have_value(doc, timeout=30_000)
    # a document chosen in the select itself (its on_change), then away and back at once
    doc = docs[7]
    box = main.get_by_role("combobox").first
    box.click()
    box.fill(doc)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/document\?(?=.*doc={re.escape(doc)})"), timeout=30_000)
    side.get_by_role("link", name="Export").click()
    expect(page).to_have_url(re.compile(r"/export\?"), timeout=30_000)
    side.get_by_role("link", name="Document review").click()
    expect(page).to_have_url(re.compile(rf"/document\?(?=.*doc={re.escape(doc)})"), timeout=30_000)
    expect(main.get_by_role("combobox").first).to_have_value(doc, timeout=30_000)
