"""Issue 41 in the browser: a judged item of the demo run imported from a real Inspect log (data/verdicts/) is
reviewed on the review card by its key, and the label is stored against the grader's verdict."""

from __future__ import annotations

from contextlib import closing

from playwright.sync_api import expect

from audit.store.database import open_db
from scoring.families import TASKS
from tests.e2e.e2e_helpers import assert_no_exception, wait_idle

RUN = "demo-verdicts-inspect"


def test_a_judged_item_from_an_inspect_log_is_reviewed_in_the_browser(demo_app, new_page):
    page = new_page()
    page.goto(f"{demo_app.url}/queue?run={RUN}&reviewer=inspector")
    card = page.locator(".rjrc-card[data-decision]:not([data-decision=''])")
    card.wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    decision = int(card.get_attribute("data-decision") or 0)
    assert "model_graded_fact" in card.inner_text()  # the scorer, as Inspect named it
    page.get_by_role("heading", name="Review queue").click()  # keys go to the page, not to a text box
    key = TASKS["verdicts"].label_schemes["graded_cpi"].keys["C"]  # the family's key for "correct"
    page.keyboard.press(key)
    expect(page.locator(".rjrc-status")).to_contain_text("1 saved", timeout=30_000)
    with closing(open_db(demo_app.db).conn) as conn:
        rows = conn.execute("SELECT r.decision_id, r.label, d.kind, d.type FROM reviews r JOIN decisions d "
                            "ON d.id = r.decision_id WHERE r.reviewer = 'inspector'").fetchall()
    assert rows == [(decision, "C", "graded_cpi", "model_graded_fact")]
