"""Issue 36, done-when: on the demo board, a decision shared by two runs is reviewed once, in one run, through the
browser review card; the Leaderboard then shows both systems' audited scores changed and the rank sets changed.

The board has no sampling plan here (the joint plan is another branch's), so rank sets exist only once every
question of the board is settled: the test settles all but the one shared question (agreeing with the judge,
through the store, as reviewer `tester`), sees "no valid interval" and empty rank sets, reviews the last one in the
card (overruling the judge), and sees exact values and one-rank rank sets. Own server: the other browser tests'
demo run shares questions with this board, and these reviews would move it.
"""

from __future__ import annotations

import re
from contextlib import closing

import pytest
from playwright.sync_api import expect

from audit.board.table import board_table
from audit.numbers import format_value
from audit.review.reviews import add_review
from audit.store.database import open_db
from tests.e2e.e2e_config import HEALTH_TIMEOUT_S
from tests.e2e.e2e_helpers import assert_no_exception, cell, wait_idle
from tests.e2e.e2e_server import seeded, start_app, stop_app

pytestmark = pytest.mark.xdist_group("leaderboard-board")  # one server of its own for the module's tests

BOARD = "demo-chimera"
VERBOSE, MIXED = "demo-chimera-fuzzy-verbose", "demo-chimera-fuzzy-mixed"
KEY = "entities/avg/f1"
WIDE = {"width": 1280, "height": 2400}
REVIEWER = "tester"


@pytest.fixture(scope="module")
def board_app(tmp_path_factory, browser, demo_db):
    server = start_app(seeded(tmp_path_factory.mktemp("e2e-board"), demo_db))  # the demo runs and demo boards
    ctx = browser.new_context(viewport=WIDE)
    try:
        page = ctx.new_page()
        page.goto(server.url)
        page.get_by_role("heading", name=re.compile(r"^Rejudge")).wait_for(timeout=HEALTH_TIMEOUT_S * 3000)
        page.get_by_test_id("stSidebar").get_by_role("textbox", name="Reviewer name").wait_for()
        ctx.close()
        yield server
    finally:
        stop_app(server)


def _target(conn) -> tuple[int, str]:
    """A question of the verbose run that the mixed run also asks (two different spans): (its id, judge label)."""
    return conn.execute(
        "SELECT d.id, d.judge_label FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? AND "
        "d.left != d.right AND EXISTS (SELECT 1 FROM decisions d2 JOIN runs r2 ON r2.id = d2.run_id WHERE "
        "r2.name = ? AND d2.qkey = d.qkey) ORDER BY d.id", [VERBOSE, MIXED]).fetchone()


def _settle_all_but(conn, target: int) -> None:
    """Agree with the judge on every other question of the board, once each, in a run that asks it (the verbose run
    first, so the tester's queue there holds only the target)."""
    skip = conn.execute("SELECT qkey FROM decisions WHERE id = ?", [target]).fetchone()[0]
    seen = {skip}
    for run in (VERBOSE, MIXED, "demo-chimera-fuzzy-terse"):
        rows = conn.execute("SELECT d.id, d.qkey, d.judge_label FROM decisions d JOIN runs r ON r.id = d.run_id "
                            "WHERE r.name = ? ORDER BY d.id", [run]).fetchall()
        for i, q, judge in rows:
            if q not in seen:
                seen.add(q)
                add_review(conn, run, i, judge, REVIEWER)


def _shot(page, path) -> None:
    """A screenshot once every table and chart is drawn (they show a skeleton first)."""
    wait_idle(page)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=30_000)
    page.wait_for_timeout(300)
    page.screenshot(path=str(path), full_page=True)


def _audited(conn) -> dict[str, str]:
    return {s["system"]: format_value(s["audited"][KEY]) for s in board_table(conn, BOARD)["systems"]}


def _open_leaderboard(page, url: str) -> None:
    page.goto(f"{url}/leaderboard?board={BOARD}&reviewer={REVIEWER}")
    expect(page.get_by_role("heading", name="Leaderboard", exact=True)).to_be_visible(timeout=60_000)
    wait_idle(page)
    page.wait_for_function("() => document.querySelector('[data-testid=\"stVegaLiteChart\"] canvas, "
                           "[data-testid=\"stVegaLiteChart\"] svg')", timeout=30_000)
    assert_no_exception(page)


def test_one_review_in_one_run_moves_two_systems_and_the_rank_sets(board_app, browser, shots):
    conn = open_db(board_app.db)
    with closing(conn.conn):
        target, judge = _target(conn)
        _settle_all_but(conn, target)
        before = _audited(conn)
        table = board_table(conn, BOARD)
    assert table["interval"] == "none" and all(s["rank_set"] is None for s in table["systems"])
    ctx = browser.new_context(viewport=WIDE)
    try:
        page = ctx.new_page()
        _open_leaderboard(page, board_app.url)
        expect(page.get_by_text("No valid interval", exact=False)).to_be_visible()
        for value in before.values():
            expect(cell(page, value).first).to_be_attached()
        _shot(page, shots / "leaderboard-before.png")

        # the review card of the verbose run: the one question left; overrule the judge
        page.goto(f"{board_app.url}/queue?run={VERBOSE}&reviewer={REVIEWER}")
        card = page.locator(".rjrc-card[data-decision]:not([data-decision=''])")
        card.wait_for(timeout=60_000)
        wait_idle(page)
        assert card.get_attribute("data-decision") == str(target)
        page.get_by_role("heading", name="Review queue").click()  # keys go to the page, not to a text box
        overrule = page.locator(".rjrc-buttons button").filter(has_text="Overrule")
        expect(overrule).to_contain_text("no match" if judge == "match" else "match")
        page.keyboard.press(overrule.get_attribute("aria-keyshortcuts"))
        expect(page.locator(".rjrc-status")).to_contain_text("1 saved", timeout=30_000)
        page.screenshot(path=str(shots / "leaderboard-card.png"), full_page=True)

        conn = open_db(board_app.db)
        with closing(conn.conn):
            after = _audited(conn)
            table = board_table(conn, BOARD)
        assert {s for s in after if after[s] != before[s]} >= {VERBOSE, MIXED}
        assert table["interval"] == "exact"
        _open_leaderboard(page, board_app.url)
        expect(page.get_by_text("No valid interval", exact=False)).to_have_count(0)
        for s in (VERBOSE, MIXED):
            expect(cell(page, after[s]).first).to_be_attached()
        _shot(page, shots / "leaderboard-after.png")
        for s in table["systems"]:
            rank = s["rank_audited"]
            assert s["rank_set"] == [rank, rank]
            expect(cell(page, f"[{rank}, {rank}]").first).to_be_attached()
    finally:
        ctx.close()


@pytest.mark.parametrize("board", ["demo-litxbench", "demo-retrieval", "demo-ideation"])
def test_every_demo_board_renders(board_app, browser, shots, board):
    ctx = browser.new_context(viewport=WIDE)
    try:
        page = ctx.new_page()
        page.goto(f"{board_app.url}/leaderboard?board={board}")
        expect(page.get_by_role("heading", name="Leaderboard", exact=True)).to_be_visible(timeout=60_000)
        wait_idle(page)
        expect(page.get_by_text("Does the judge's ranking survive the audit?")).to_be_visible()
        assert_no_exception(page)
        for expander in ("Every headline metric: judge only and audited", "Create or delete a board"):
            page.get_by_text(expander, exact=True).click()
        expect(page.get_by_role("button", name="Create board")).to_be_visible()
        _shot(page, shots / f"leaderboard-{board}.png")
    finally:
        ctx.close()
