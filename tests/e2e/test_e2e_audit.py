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

from audit.store.database import open_db  # noqa: E402
from tests.e2e.e2e_config import DEMO  # noqa: E402
from tests.e2e.e2e_helpers import (  # noqa: E402
    RERUN_TIMEOUT,
    assert_no_exception,
    cell,
    enter_text,
    heading,
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
ENTITY_F1 = "entity F1 (macro avg)"
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
    expect(metric(page, ENTITY_F1)).to_be_visible()
    shoot(page, shots, "overview")
    outcomes = widget(page, "overview.outcomes")
    outcomes.get_by_role("button", name="Clear all").click()
    outcomes.get_by_role("combobox").fill("partial")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    expect(page.get_by_text(re.compile(r"^\d+ of 216 abstracts\. Counts"))).to_be_visible(timeout=RERUN_TIMEOUT)
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
    expect(card).to_contain_text("effective no match")
    entity_before = metric(page, ENTITY_F1).inner_text()
    card.get_by_role("button", name=re.compile(r"^✗ Overrule → ")).click()
    expect(card).to_contain_text("e2e-walker", timeout=RERUN_TIMEOUT)
    wait_idle(page)
    assert_no_exception(page)
    expect(card).to_contain_text("effective match")
    expect(metric(page, ENTITY_F1)).not_to_have_text(entity_before)
    expect(metric(page, ENTITY_F1)).to_contain_text("vs original")
    expect(page.get_by_text("This abstract's counts")).to_be_visible()
    shoot(page, shots, "document")

    # Scores, reached through the sidebar (a reload would start a new session without the reviewer name).
    navigate(page, "Scores", "Scores: original vs audited")
    entities = metric(page, ENTITY_F1)
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

    # Export: JSON, one click, downloaded through the browser.
    navigate(page, "Export", "Export")
    download_button = page.get_by_role("button", name=re.compile(r"Audited scores \(JSON\)"))
    expect(download_button).to_be_visible(timeout=RERUN_TIMEOUT)
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
        expect(card).to_contain_text("hidden until you label")
        expect(card).not_to_contain_text("first span first")
        expect(card.get_by_role("button", name="match", exact=True)).to_be_visible()
        pages[name] = page
    shoot(pages["ana"], shots, "blind-before")

    # Both label at the same time, differently: neither waits for the other's rerun.
    widget(pages["ana"], f"review.card.{decision}").get_by_role("button", name="match", exact=True).click()
    widget(pages["bo"], f"review.card.{decision}").get_by_role("button", name="no match", exact=True).click()
    for name, label in (("ana", "match"), ("bo", "no match")):
        card = widget(pages[name], f"review.card.{decision}")
        expect(card).to_contain_text(f"{name}: {label}", timeout=RERUN_TIMEOUT)  # revealed once labelled
        expect(card).to_contain_text("first span first")
        assert_no_exception(pages[name])

    rows = query(demo_app.db, "SELECT reviewer, label, blind FROM reviews WHERE decision_id = ? ORDER BY reviewer",
                 [decision])
    assert rows == [("ana", "match", 1), ("bo", "no-match", 1)]

    # While blind the Scores page is hidden; with blind off it shows the conflict, as does the decision's card.
    navigate(pages["bo"], "Scores", "Scores: original vs audited")
    expect(pages["bo"].get_by_text("hidden while you review blind")).to_be_visible()
    set_toggle(pages["bo"], "Blind review", on=False)
    caption = pages["bo"].get_by_text(re.compile(r"\d+ conflicted"))
    try:
        expect(caption).to_be_visible(timeout=RERUN_TIMEOUT)
    except AssertionError:
        print(pages["bo"].url, pages["bo"].inner_text("body")[-1500:])
        raise
    assert int(re.search(r"(\d+) conflicted", caption.inner_text())[1]) >= 1
    page = pages["ana"]
    open_url(page, url, "Abstract review")  # a fresh session: not blind, shows everyone's labels
    card = widget(page, f"review.card.{decision}")
    expect(card).to_contain_text("conflicted")
    expect(card).to_contain_text("ana: match")
    expect(card).to_contain_text("bo: no match")
    shoot(page, shots, "conflicted")


def test_malformed_upload_names_file_and_line_and_stores_nothing(demo_app, new_page, shots):
    runs_before = query(demo_app.db, "SELECT COUNT(*) FROM runs", [])
    page = new_page()
    open_url(page, demo_app.url, RUNS_TITLE)
    page.locator("summary").filter(has_text="Score a new run").click()
    select(page, "newrun.chimera.pred.choice", "Upload…")
    upload = widget(page, "newrun.chimera.pred.upload")
    expect(upload).to_be_visible(timeout=RERUN_TIMEOUT)
    bad = (b'{"paper_id": "2105.13065", "relations": {}}\n'
           b'{"paper_id": "2210.04932", "relations": {"combination": [\n')
    upload.locator("input[type=file]").set_input_files(
        files=[{"name": "bad-preds.jsonl", "mimeType": "application/json", "buffer": bad}])
    # the size shows once the file is uploaded; the uploader then hands it to the app in a rerun of its own
    expect(upload).to_contain_text("102.0B", timeout=RERUN_TIMEOUT)
    wait_idle(page)
    enter_text(page, "newrun.name", "e2e-bad-upload")
    score = page.get_by_role("button", name="Score", exact=True)
    error = page.get_by_test_id("stAlertContentError").filter(has_text="bad-preds.jsonl")
    score.click()
    try:
        expect(error).to_be_visible(timeout=15_000)
    except AssertionError:
        # Seen twice in CI on a loaded machine (not here): 30 s after the click, no error and no progress bar, as if a
        # rerun still to come (the uploader's) cut short the one run that saw the click. A user clicks again.
        wait_idle(page)
        score.click()
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
    from devtools.judge_server import JudgeServer

    with JudgeServer(delay=0.1) as srv:  # slow enough that the cancel lands half-way on a busy machine
        page = new_page()
        open_url(page, demo_app.url, RUNS_TITLE)
        page.locator("summary").filter(has_text="Score a new run").click()
        wait_idle(page)
        expect(widget(page, "newrun.chimera.pred.choice")).to_be_visible()
        select(page, "newrun.chimera.pred.choice", "chimera/pred_perfect.jsonl")
        select(page, "newrun.chimera.judge", "openai:MODEL — any OpenAI-compatible endpoint")
        enter_text(page, "newrun.model", "e2e-slow-model")
        enter_text(page, "newrun.base_url", srv.base_url)
        enter_text(page, "newrun.concurrency", "1", role="spinbutton")
        enter_text(page, "newrun.name", "e2e-cancelled")
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
        srv.delay = 0.0  # the rest need not be slow: 400 more answers at 0.1 s were 40 s of waiting
        page.get_by_role("button", name="Score", exact=True).click()
        expect(page.get_by_text("Scored and stored run")).to_be_visible(timeout=120_000)
        wait_idle(page)
        assert srv.answered == 444 - cached[0][0]


HEAD = re.compile(r"decision #\d+ \(id (\d+)\) · (\d+) of")


def _head(page) -> tuple[int, int]:
    m = HEAD.search(page.get_by_text(HEAD).first.inner_text())
    return int(m[1]), int(m[2])


def _press(page, key: str, before: tuple[int, int]) -> tuple[int, int]:
    page.keyboard.press(key)
    page.wait_for_function("(old) => { const m = document.body.innerText"
                           ".match(/decision #\\d+ \\(id (\\d+)\\) · (\\d+) of/);"
                           " return !!m && (m[1] + '/' + m[2]) !== old; }", arg=f"{before[0]}/{before[1]}",
                           timeout=RERUN_TIMEOUT)
    wait_idle(page)
    return _head(page)


def test_review_queue_keyboard_shortcuts_undo_back_and_reload(demo_app, new_page, shots):
    """In the queue, `a` confirms the judge, `o` overrules it, `n` skips, `p` goes back, Backspace undoes; the card
    and its buttons are above the fold at 1280x720; a reload keeps the reviewer, the run and blind mode."""
    page = new_page()
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url(page, demo_app.url + f"/queue?run={DEMO}&reviewer=e2e-keys&card=classic", "Review queue")
    expect(page.get_by_test_id("stSidebar").get_by_role("textbox", name="Reviewer name")).to_have_value("e2e-keys")
    first = _head(page)
    page.locator(".st-key-queue-card button").first.wait_for(state="visible", timeout=RERUN_TIMEOUT)
    bottom = page.evaluate("""() => Math.max(...[...document.querySelectorAll('.st-key-queue-card button')]
                                        .map(b => b.getBoundingClientRect().bottom))""")
    assert 0 < bottom <= 720, bottom
    page.screenshot(path=str(shots / "queue-above-the-fold.png"))
    page.get_by_role("heading", name="Review queue").click()  # focus the page, not a text box
    second = _press(page, "a", first)
    assert second[1] == first[1] + 1
    expect(page.get_by_text(re.compile(rf"Stored #{first[0]} → "))).to_be_visible()
    third = _press(page, "o", second)
    skipped = _press(page, "n", third)
    assert skipped[1] == third[1] + 1
    rows = dict(query(demo_app.db, "SELECT r.decision_id, r.label = d.judge_label FROM reviews r JOIN decisions d "
                                   "ON d.id = r.decision_id WHERE r.reviewer = 'e2e-keys'", []))
    assert rows == {first[0]: 1, second[0]: 0}  # confirmed, then overruled; the skipped one has no review
    assert _press(page, "p", skipped) == third
    assert _press(page, "Backspace", third) == second  # undo of the overrule: back on that decision
    expect(page.get_by_text(re.compile(rf"Undone: #{second[0]} → "))).to_be_visible()
    assert query(demo_app.db, "SELECT label FROM reviews WHERE reviewer = 'e2e-keys' AND decision_id = ? "
                              "ORDER BY id DESC LIMIT 1", [second[0]]) == [(None,)]
    shoot(page, shots, "queue-keys")

    set_toggle(page, "Blind review", on=True)
    expect(page.get_by_text(re.compile(r"a: match · o: no match"))).to_be_visible()
    assert "blind=1" in page.url and "reviewer=e2e-keys" in page.url and f"run={DEMO}" in page.url
    page.reload()
    expect(heading(page, "Review queue")).to_be_visible(timeout=60_000)
    wait_idle(page)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_role("textbox", name="Reviewer name")).to_have_value("e2e-keys")
    expect(page.get_by_role("switch", name="Blind review").or_(page.get_by_role("checkbox", name="Blind review"))
           .first).to_be_checked()
    expect(page.get_by_text("Reviewer progress")).to_have_count(0)
    shoot(page, shots, "queue-blind")


def test_current_run_is_kept_from_page_to_page(demo_app, new_page):
    runs = [r[0] for r in query(demo_app.db, "SELECT name FROM runs WHERE task = 'chimera' ORDER BY id", [])]
    if len(runs) < 2:
        from audit.runs import score_run
        from tests.conftest import GOLD, PRED_MIXED
        score_run(open_db(demo_app.db), "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact",
                  run="e2e-exact")
    page = new_page()
    open_url(page, demo_app.url + f"/overview?run={DEMO}", "Run overview")
    select(page, "sidebar.run", DEMO)
    for link, title in (("Review queue", "Review queue"), ("Scores", "Scores: original vs audited"),
                        ("Agreement", "Agreement"), ("Export", "Export"), ("Document review", "Abstract review"),
                        ("Gold errata", "Gold errata")):
        navigate(page, link, title)
        expect(widget(page, "sidebar.run").get_by_role("combobox")).to_have_value(DEMO)
        assert f"run={DEMO}" in page.url, (link, page.url)
