"""Issue 26, measured in the browser at 1280 px with the sidebar open, on every family's demo runs: no headline
card on the Scores page and no review button in the queue (classic card and browser card) is cut with an
ellipsis, and every table of the Agreement page fits the window without scrolling sideways.

Which runs: each family's first demo run, and the other demo runs whose pages can differ from it: the run of an
improved judge (its "learnt from" lines) and the run with the longest predicted text. The other
demo runs of a family draw the same cards, buttons and tables with other numbers (RUNS says which and why; a new
family's demo run is measured without a change here).

The app runs on a database of its own (reviews are added to it so each family's Agreement page has tables), so the
other browser tests' counts are untouched. The module is one xdist group (tests/conftest.py groups the tests that
share a module-scoped fixture): one worker starts the server and reviews the runs once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from audit.demo import demo_runs
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import load_view
from tests.e2e.e2e_config import VIEWPORT
from tests.e2e.e2e_helpers import _DRAWN_JS, assert_no_exception, heading, wait_idle
from tests.e2e.e2e_server import AppServer, seeded, start_app, stop_app

WINDOW = {"width": 1280, "height": 900}
_SAME_LAYOUT = {
    # the same family, cards, label scheme and tables as the run measured: only the numbers and the spans differ
    "demo-chimera-smollm2": "demo-chimera-mixed",  # the same predictions, another replayed LLM judge
    "demo-chimera-fuzzy-mixed": "demo-chimera-fuzzy-verbose",  # the fuzzy judge, the same predictions shorter
    "demo-chimera-fuzzy-terse": "demo-chimera-fuzzy-verbose",  # the fuzzy judge, the shortest predictions
    "demo-retrieval-bm25": "demo-retrieval-wordllama",  # another retriever, the same queries
    "demo-litxbench-process-perturb": "demo-litxbench-drop-meas30",  # another perturbation of the same papers
}
RUNS = [d.name for _, d in demo_runs() if d.name not in _SAME_LAYOUT]

# Elements that clip their text (overflow hidden or an ellipsis) and hold more than they show.
_CUT_JS = """(selector) => [...document.querySelectorAll(selector)]
  .flatMap((root) => [root, ...root.querySelectorAll('*')])
  .filter((el) => {
    const s = getComputedStyle(el);
    const clips = s.textOverflow === 'ellipsis' || ['hidden', 'clip'].includes(s.overflowX);
    return clips && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && el.innerText.trim();
  })
  .map((el) => `${el.innerText.trim()} (${el.scrollWidth} > ${el.clientWidth} px)`)"""

# Every table: inside the window, and its grid does not scroll sideways.
# (A grid's border makes its scroller 2 px wider than its box: up to 4 px is no scrolling.)
_TABLES_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map((t, i) => {
  const box = t.getBoundingClientRect();
  const scrollers = [...t.querySelectorAll('*')].filter((el) => el.scrollWidth > el.clientWidth + 4
    && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX));
  const heads = [...document.querySelectorAll('h1, h2, h3')]
    .filter((h) => h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
  return {table: `#${i} under ${heads.at(-1)?.innerText}`, right: Math.round(box.right),
          scrolls: scrollers.map((el) => `${el.scrollWidth} > ${el.clientWidth}`)};
})"""


def _coverage_faults(same_layout: dict[str, str], family: dict[str, str]) -> list[str]:
    """What is wrong with leaving out `same_layout`'s runs: a name that is no demo run, a stand-in of another family
    or itself left out, a family with no run measured."""
    measured = [r for r in family if r not in same_layout]
    faults = [f"{left}: no demo run" for left in same_layout if left not in family]
    faults += [f"{left} -> {kept}: not a measured run of its family" for left, kept in same_layout.items()
               if left in family and (kept not in measured or family[kept] != family[left])]
    faults += [f"{f}: no run measured" for f in sorted(set(family.values()) - {family[r] for r in measured})]
    return faults


def test_every_run_left_out_has_a_measured_run_of_its_family():
    family = {d.name: task for task, d in demo_runs()}
    assert _coverage_faults(_SAME_LAYOUT, family) == []
    assert RUNS == [r for r in family if r not in _SAME_LAYOUT]


@pytest.mark.parametrize("plant", [
    {"demo-retrieval-bm25": "demo-chimera-mixed"},  # a stand-in of another family
    {"demo-chimera-fuzzy-terse": "demo-chimera-fuzzy-mixed"},  # a stand-in that is itself left out
    {"demo-verdicts-inspect": "demo-verdicts-inspect"},  # a family's only run left out, standing in for itself
    {"demo-chimera-typo": "demo-chimera-mixed"},  # no such run
])
def test_the_coverage_check_refuses_a_left_out_run_without_a_measured_stand_in(plant):
    family = {d.name: task for task, d in demo_runs()}
    assert _coverage_faults({**_SAME_LAYOUT, **plant}, family)


def _review_every_run(db_path) -> None:
    """Two reviewers label the first decisions of every run, agreeing on some and overruling the judge on others,
    so each Agreement page has its human-vs-judge and human-vs-human tables."""
    with closing(open_db(db_path).conn) as conn:
        from sqlite_utils import Database

        db = Database(conn)
        for run in RUNS:
            view = load_view(db, run)
            for i, d in enumerate(view.decisions()[:24]):
                labels = view.task.label_schemes[d["kind"]].labels
                same = d["judge"] if d["judge"] in labels else labels[0]  # a judge's `split` is no human label
                other = next(lab for lab in labels if lab != same)
                add_review(db, run, d["id"], same if i % 3 else other, "fit-a")
                add_review(db, run, d["id"], same if i % 4 else other, "fit-b")


@pytest.fixture(scope="module")
def fit_app(tmp_path_factory: pytest.TempPathFactory, browser: Browser, demo_db: Path) -> Iterator[AppServer]:
    server = start_app(seeded(tmp_path_factory.mktemp("e2e-fit"), demo_db))
    try:
        ctx = browser.new_context(viewport=VIEWPORT)
        page = ctx.new_page()
        page.goto(server.url)  # a first visit, as before the reviews are added
        page.get_by_role("heading", name=re.compile(r"^Rejudge")).wait_for(timeout=120_000)
        wait_idle(page, timeout=120_000)
        ctx.close()
        _review_every_run(server.db)
        yield server
    finally:
        stop_app(server)


def _shot(page, shots, name: str) -> None:
    """The window as measured (1280 px wide; `e2e_helpers.shoot` widens it to the suite's viewport)."""
    page.screenshot(path=str(shots / f"{name}.png"), animations="disabled", caret="hide")


def _open(new_page, url: str, title: str | re.Pattern):
    page = new_page()
    page.set_viewport_size(WINDOW)
    page.goto(url)
    expect(heading(page, title)).to_be_visible(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    return page


@pytest.mark.parametrize("run", RUNS)
def test_headline_cards_are_never_cut(fit_app, new_page, shots, run):
    page = _open(new_page, f"{fit_app.url}/scores?run={run}&reviewer=fit-a", "Scores: original vs audited")
    page.get_by_test_id("stMetric").first.wait_for()
    cut = page.evaluate(_CUT_JS, '[data-testid="stMetric"]')
    _shot(page, shots, f"issue26-scores-{run}")
    assert cut == []


@pytest.mark.parametrize("run", RUNS)
def test_agreement_tables_fit_1280_px(fit_app, new_page, shots, run):
    page = _open(new_page, f"{fit_app.url}/agreement?run={run}&reviewer=fit-a", "Agreement")
    page.get_by_test_id("stDataFrame").first.wait_for()
    page.wait_for_function(_DRAWN_JS, timeout=30_000)
    tables = page.evaluate(_TABLES_JS)
    _shot(page, shots, f"issue26-agreement-{run}")
    # the agreement tables; the decision list under the confusion matrix (spans as text) may scroll
    tables = [t for t in tables if not t["table"].endswith("under Confusion matrix")]
    assert tables
    too_wide = [t for t in tables if t["right"] > WINDOW["width"] or t["scrolls"]]
    assert too_wide == [], too_wide


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("card", ["classic", "browser"])
def test_review_buttons_are_never_cut(fit_app, new_page, shots, run, card):
    query = "&card=classic" if card == "classic" else ""
    page = _open(new_page, f"{fit_app.url}/queue?run={run}&reviewer=fit-c{query}", "Review queue")
    selector = ".st-key-queue-card button" if card == "classic" else ".rjrc-buttons button"
    page.locator(selector).first.wait_for(timeout=60_000)
    cut = page.evaluate(_CUT_JS, selector)
    _shot(page, shots, f"issue26-queue-{card}-{run}")
    assert cut == []


@pytest.mark.parametrize("run", RUNS)
def test_document_page_buttons_are_never_cut(fit_app, new_page, shots, run):
    page = _open(new_page, f"{fit_app.url}/document?run={run}&reviewer=fit-c", re.compile(r".* review$"))
    page.locator('[data-testid="stMain"] button').first.wait_for(timeout=60_000)
    page.wait_for_function(_DRAWN_JS, timeout=30_000)
    cut = page.evaluate(_CUT_JS, '[data-testid="stMain"] button')
    _shot(page, shots, f"issue26-document-{run}")
    assert cut == []
