"""Real-browser walks through the dashboard (Debian chromium + Playwright against `streamlit run app.py`).

The tests share one server and one database; each uses its own decisions so that the order does not matter.
"""

from __future__ import annotations

import json
import re
from contextlib import closing

import pytest

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import expect  # noqa: E402

from audit.store import open_db  # noqa: E402
from tests.e2e.e2e_config import DEMO  # noqa: E402
from tests.e2e.e2e_helpers import (  # noqa: E402
    RERUN_TIMEOUT,
    assert_no_exception,
    cell,
    metric,
    navigate,
    open_url,
    select,
    set_reviewer,
    set_toggle,
    shoot,
    wait_idle,
    widget,
)

pytestmark = pytest.mark.e2e

WALK_DOC = "2210.04932"  # partial: the gold entity "a Neural Radiance Field (NeRF)" is left unmatched
MISSED_GOLD = "a Neural Radiance Field (NeRF)"
BLIND_DOC = "2105.00944"  # partial, two decisions; used only by the two-reviewer test
RUNS_TITLE = re.compile(r"^Rejudge")
F1 = re.compile(r"(?P<value>\d\.\d{4}).*?(?P<delta>[+-]\d\.\d{4}) vs original (?P<original>\d\.\d{4})", re.S)


def query(db_path, sql: str, params: list) -> list[tuple]:
    """Rows from the app's database (SQLite in WAL mode: reading beside the running app is safe)."""
    with closing(open_db(db_path).conn) as conn:
        return conn.execute(sql, params).fetchall()


def decision_ids(db_path, doc: str) -> dict[str, int]:
    """The demo run's decisions of one abstract, as {gold span: decision id}."""
    rows = query(db_path, "SELECT d.right, d.id FROM decisions d JOIN runs r ON r.id = d.run_id "
                          "WHERE r.name = ? AND d.doc_id = ? ORDER BY d.id", [DEMO, doc])
    assert rows, f"no decisions for {doc} in {DEMO}"
    return dict(rows)


def test_walk_open_demo_overrule_see_audited_f1_and_export(demo_app, new_page, shots, tmp_path):
    page = new_page()
    # Runs: the demo run is listed (table and picker).
    open_url(page, demo_app.url, RUNS_TITLE)
    expect(cell(page, DEMO)).to_be_attached()
    expect(widget(page, "runs.pick").get_by_role("combobox")).to_have_value(DEMO)
    shoot(page, shots, "runs")

    # Run overview of the demo run, then only the "partial" abstracts.
    page.get_by_role("button", name="Open run", exact=True).click()
    expect(page.get_by_role("heading", name="Run overview", exact=True)).to_be_visible(timeout=RERUN_TIMEOUT)
    wait_idle(page)
    assert_no_exception(page)
    assert f"run={DEMO}" in page.url
    expect(metric(page, "Entity extraction F1")).to_be_visible()
    shoot(page, shots, "overview")
    outcomes = widget(page, "overview.outcomes")
    outcomes.get_by_role("button", name="Clear all").click()
    outcomes.get_by_role("combobox").fill("partial")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    expect(page.get_by_text(re.compile(r"^\d+ of 216 abstracts"))).to_be_visible(timeout=RERUN_TIMEOUT)
    wait_idle(page)
    expect(outcomes.get_by_text("partial", exact=True)).to_be_visible()
    expect(cell(page, "perfect")).to_have_count(0)  # the table holds partial abstracts only
    select(page, "overview.pick", WALK_DOC)  # offered only if it is "partial"
    shoot(page, shots, "overview-partial")

    # The abstract: its gold entity that no prediction matched is listed.
    page.get_by_role("button", name="Review this abstract").click()
    expect(page.get_by_role("heading", name="Abstract review", exact=True)).to_be_visible(timeout=RERUN_TIMEOUT)
    wait_idle(page)
    assert_no_exception(page)
    assert f"doc={WALK_DOC}" in page.url
    expect(page.get_by_text(MISSED_GOLD).first).to_be_visible()
    expect(page.get_by_text("Enter your reviewer name in the sidebar")).to_be_visible()
    shoot(page, shots, "document-unreviewed")

    # Overrule the judge's "no-match" between the prediction and the missed gold entity, as a named reviewer.
    set_reviewer(page, "e2e-walker")
    expect(page.get_by_text("Enter your reviewer name in the sidebar")).to_have_count(0)
    decision = decision_ids(demo_app.db, WALK_DOC)[MISSED_GOLD]
    card = widget(page, f"review.card.{decision}")
    expect(card).to_contain_text("effective no-match")
    entity_before = metric(page, "Entity extraction F1").inner_text()
    card.get_by_role("button", name=re.compile(r"^✗ Overrule → ")).click()
    expect(card).to_contain_text("e2e-walker", timeout=RERUN_TIMEOUT)
    wait_idle(page)
    assert_no_exception(page)
    expect(card).to_contain_text("effective match")
    expect(metric(page, "Entity extraction F1")).not_to_have_text(entity_before)
    expect(metric(page, "Entity extraction F1")).to_contain_text("vs original")
    shoot(page, shots, "document")

    # Scores, reached through the sidebar (a reload would start a new session without the reviewer name).
    navigate(page, "Scores", "Scores: original vs audited")
    entities = metric(page, "Entity extraction F1")
    expect(entities).to_contain_text("vs original")
    m = F1.search(entities.inner_text())
    assert m, entities.inner_text()
    assert m["value"] != m["original"] and float(m["delta"]) != 0
    assert abs(float(m["value"]) - float(m["original"]) - float(m["delta"])) < 2e-4
    expect(page.get_by_text(re.compile(r"\b1 overruled\b"))).to_be_visible()
    shoot(page, shots, "scores")

    # The other pages, for the record (and the README): they render without an exception.
    navigate(page, "Review queue", "Review queue")
    expect(page.get_by_text(re.compile(r"You have labelled 1 of \d+ decisions"))).to_be_visible()
    shoot(page, shots, "queue")
    navigate(page, "Agreement", "Agreement")
    expect(page.get_by_role("heading", name="Human vs judge")).to_be_visible()
    shoot(page, shots, "agreement")
    navigate(page, "Compare judges", "Compare judges")  # one run only: its empty state
    shoot(page, shots, "compare")

    # Export: JSON, downloaded through the browser.
    navigate(page, "Export", "Export")
    page.get_by_text("json", exact=True).click()
    expect(page.get_by_role("radio", name="json")).to_be_checked()
    page.get_by_role("button", name="Prepare export").click()
    download_button = page.get_by_role("button", name=re.compile(rf"^Download {re.escape(DEMO)}\.audited\.json$"))
    expect(download_button).to_be_visible(timeout=RERUN_TIMEOUT)
    wait_idle(page)
    with page.expect_download() as info:
        download_button.click()
    download = info.value
    assert download.suggested_filename == f"{DEMO}.audited.json"
    target = tmp_path / download.suggested_filename
    download.save_as(target)
    data = json.loads(target.read_text())
    assert data["run"] == DEMO
    assert data["audited"] != data["original"]
    assert data["audited"]["entities"]["avg"]["f1"] != data["original"]["entities"]["avg"]["f1"]
    assert data["reviews"]["overruled"] == 1
    assert "e2e-walker" in data["reviews"]["reviewers"]
    shoot(page, shots, "export", max_height=1700)  # the top of the JSON preview is enough for the README
    shoot(page, shots, "export-full")


def test_two_blind_reviewers_at_once_are_both_kept_and_conflict(demo_app, new_page, shots):
    decision = next(iter(decision_ids(demo_app.db, BLIND_DOC).values()))
    url = demo_app.url + f"/document?run={DEMO}&doc={BLIND_DOC}&decision={decision}"
    pages = {}
    for name in ("ana", "bo"):  # two browser contexts = two Streamlit sessions, both on the same abstract
        page = new_page()
        open_url(page, url, "Abstract review")
        set_reviewer(page, name)
        set_toggle(page, "Blind review", on=True)
        card = widget(page, f"review.card.{decision}")
        expect(card).to_contain_text("hidden until you commit")
        expect(card).not_to_contain_text("judge: pred→gold")
        expect(card.get_by_role("button", name="Label: match")).to_be_visible()
        pages[name] = page
    shoot(pages["ana"], shots, "blind-before")

    # Both label at the same time, differently: neither waits for the other's rerun.
    widget(pages["ana"], f"review.card.{decision}").get_by_role("button", name="Label: match").click()
    widget(pages["bo"], f"review.card.{decision}").get_by_role("button", name="Label: no-match").click()
    for name, label in (("ana", "match"), ("bo", "no-match")):
        card = widget(pages[name], f"review.card.{decision}")
        expect(card).to_contain_text(f"{name}: {label}", timeout=RERUN_TIMEOUT)  # revealed once committed
        expect(card).to_contain_text("judge: pred→gold")
        assert_no_exception(pages[name])

    rows = query(demo_app.db, "SELECT reviewer, label, blind FROM reviews WHERE decision_id = ? ORDER BY reviewer",
                 [decision])
    assert rows == [("ana", "match", 1), ("bo", "no-match", 1)]

    # Each session sees the conflict: on the Scores page, and on the decision's card.
    navigate(pages["bo"], "Scores", "Scores: original vs audited")
    caption = pages["bo"].get_by_text(re.compile(r"\d+ conflicted"))
    expect(caption).to_be_visible()
    assert int(re.search(r"(\d+) conflicted", caption.inner_text())[1]) >= 1
    page = pages["ana"]
    open_url(page, url, "Abstract review")  # a fresh session: not blind, shows everyone's labels
    card = widget(page, f"review.card.{decision}")
    expect(card).to_contain_text("conflicted")
    expect(card).to_contain_text("ana: match")
    expect(card).to_contain_text("bo: no-match")
    shoot(page, shots, "conflicted")


def test_malformed_upload_names_file_and_line_and_stores_nothing(demo_app, new_page, shots):
    runs_before = query(demo_app.db, "SELECT COUNT(*) FROM runs", [])
    page = new_page()
    open_url(page, demo_app.url, RUNS_TITLE)
    page.locator("summary").filter(has_text="Score a new run").click()
    select(page, "newrun.pred.choice", "Upload a file…")
    upload = widget(page, "newrun.pred.upload")
    expect(upload).to_be_visible(timeout=RERUN_TIMEOUT)
    bad = (b'{"paper_id": "2105.13065", "relations": {}}\n'
           b'{"paper_id": "2210.04932", "relations": {"combination": [\n')
    upload.locator("input[type=file]").set_input_files(
        files=[{"name": "bad-preds.jsonl", "mimeType": "application/json", "buffer": bad}])
    expect(upload).to_contain_text("bad-preds.jsonl", timeout=RERUN_TIMEOUT)
    wait_idle(page)
    widget(page, "newrun.name").get_by_role("textbox").fill("e2e-bad-upload")
    page.get_by_role("button", name="Score", exact=True).click()
    error = page.get_by_test_id("stAlertContentError").filter(has_text="bad-preds.jsonl")
    expect(error).to_be_visible(timeout=RERUN_TIMEOUT)
    wait_idle(page)
    text = error.inner_text()
    assert "bad-preds.jsonl:2:" in text, text
    assert "Nothing was stored" in text, text
    assert "JSON" in text, text
    shoot(page, shots, "runs-bad-upload")
    assert query(demo_app.db, "SELECT COUNT(*) FROM runs", []) == runs_before
    assert query(demo_app.db, "SELECT 1 FROM runs WHERE name = ?", ["e2e-bad-upload"]) == []


def test_deep_link_to_a_decision(demo_app, new_page, shots):
    ids = decision_ids(demo_app.db, WALK_DOC)
    decision = max(ids.values())  # not the first card on the page
    page = new_page()
    open_url(page, demo_app.url + f"/document?run={DEMO}&doc={WALK_DOC}&decision={decision}", "Abstract review")
    expect(widget(page, "document.doc").get_by_role("combobox")).to_have_value(WALK_DOC)
    linked = page.get_by_text("linked decision")
    expect(linked).to_have_count(1)
    expect(widget(page, f"review.card.{decision}").get_by_text("linked decision")).to_be_visible()
    for other in set(ids.values()) - {decision}:
        expect(widget(page, f"review.card.{other}").get_by_text("linked decision")).to_have_count(0)
    shoot(page, shots, "deep-link")


def test_cancel_a_running_llm_judge_keeps_the_answers_received(demo_app, new_page, shots):
    """Score with an OpenAI-compatible judge (a slow local server), cancel half-way: nothing is stored as a run,
    the answers already received are in the cache, and scoring again asks only the rest."""
    from tests.judge_server import JudgeServer

    with JudgeServer(delay=0.05) as srv:
        page = new_page()
        open_url(page, demo_app.url, RUNS_TITLE)
        page.locator("summary").filter(has_text="Score a new run").click()
        select(page, "newrun.pred.choice", "pred_perfect.jsonl (gold spans as predictions)")
        select(page, "newrun.judge", "openai:MODEL — any OpenAI-compatible endpoint")
        widget(page, "newrun.model").get_by_role("textbox").fill("e2e-slow-model")
        widget(page, "newrun.base_url").get_by_role("textbox").fill(srv.base_url)
        widget(page, "newrun.concurrency").get_by_role("spinbutton").fill("1")
        widget(page, "newrun.name").get_by_role("textbox").fill("e2e-cancelled")
        wait_idle(page)
        page.get_by_role("button", name="Score", exact=True).click()
        expect(page.get_by_text(re.compile(r"Judging: \d+ / 444"))).to_be_visible(timeout=RERUN_TIMEOUT)
        page.wait_for_function("() => /Judging: ([3-9]\\d|\\d{3}) \\//.test(document.body.innerText)",
                               timeout=RERUN_TIMEOUT)
        page.get_by_role("button", name="Cancel", exact=True).click()
        expect(page.get_by_text("Scoring was cancelled")).to_be_visible(timeout=RERUN_TIMEOUT)
        wait_idle(page)
        shoot(page, shots, "runs-cancelled")
        answered_before_cancel = srv.answered
        cached = query(demo_app.db, "SELECT COUNT(*) FROM judge_cache WHERE judge = 'openai:e2e-slow-model'", [])
        assert query(demo_app.db, "SELECT 1 FROM runs WHERE name = 'e2e-cancelled'", []) == []
        assert 30 <= cached[0][0] < 444
        assert answered_before_cancel - cached[0][0] <= 2  # at most the requests in flight at the click

        srv.reset_counts()
        page.get_by_role("button", name="Score", exact=True).click()
        expect(page.get_by_text("Scored and stored run")).to_be_visible(timeout=120_000)
        wait_idle(page)
        assert srv.answered == 444 - cached[0][0]


def test_review_queue_keyboard_shortcuts(demo_app, new_page, shots):
    """In the queue, `a` confirms the judge, `o` overrules it and `n` skips, without touching the mouse."""
    page = new_page()
    open_url(page, demo_app.url + f"/queue?run={DEMO}", "Review queue")
    set_reviewer(page, "e2e-keys")
    first = page.get_by_text(re.compile(r"decision #\d+ · 1 of")).inner_text()
    first_id = int(re.search(r"#(\d+)", first).group(1))
    page.get_by_role("heading", name="Review queue").click()  # focus the page, not a text box
    page.keyboard.press("a")
    expect(page.get_by_text(f"decision #{first_id} ·")).to_have_count(0, timeout=RERUN_TIMEOUT)
    wait_idle(page)
    second_id = int(re.search(r"#(\d+)", page.get_by_text(re.compile(r"decision #\d+ · 1 of")).inner_text()).group(1))
    page.keyboard.press("o")
    expect(page.get_by_text(f"decision #{second_id} ·")).to_have_count(0, timeout=RERUN_TIMEOUT)
    wait_idle(page)
    third = page.get_by_text(re.compile(r"decision #\d+ · 1 of")).inner_text()
    page.keyboard.press("n")
    expect(page.get_by_text(re.compile(r"decision #\d+ · 2 of"))).to_be_visible(timeout=RERUN_TIMEOUT)
    shoot(page, shots, "queue-keys")
    rows = dict(query(demo_app.db, "SELECT r.decision_id, r.label = d.judge_label FROM reviews r JOIN decisions d "
                                   "ON d.id = r.decision_id WHERE r.reviewer = 'e2e-keys'", []))
    assert rows == {first_id: 1, second_id: 0}  # confirmed, then overruled; the skipped one has no review
    assert int(re.search(r"#(\d+)", third).group(1)) not in (first_id, second_id)
