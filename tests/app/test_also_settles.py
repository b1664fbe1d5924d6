"""Issue 36 §1: the card says when a review settles its question in other runs too ("also settles this question in
runs B, C"). One function (`audit.review.sharing.other_runs_asking`) gives the runs, checked against an oracle that
keys CHIMERA questions itself (same abstract, entity type and unordered span pair on the same gold); both cards (the
classic card on the Document and Queue pages, the browser card's buffer) show the sentence, blind ones too, and it
names runs only."""

from __future__ import annotations

import os

import pytest

from audit.demo import DATA
from audit.review.sharing import also_settles_text, other_runs_asking
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import load_view
from scoring.families import TASKS
from tests.app.conftest import open_page
from tests.conftest import GOLD, PRED_PERFECT, copy_of
from ui.blind import JUDGE_DERIVED
from ui.review_card.buffer import build_buffer

MIXED, SMOL, PERFECT = "demo-chimera-mixed", "demo-chimera-smollm2", "perfect"


@pytest.fixture(scope="module")
def conn(tmp_path_factory, demo_template):
    """Every demo run, and a third CHIMERA run on the same gold with other predictions (some of its questions are
    asked by the demo runs, some by it alone)."""
    db = open_db(copy_of(demo_template, tmp_path_factory.mktemp("shared") / "demo.db"))
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_PERFECT)}, "exact", run=PERFECT)
    return db


def _chimera_runs(conn) -> list[str]:
    """Every CHIMERA run in the database, in the order the sentence names them (the demo's board runs included)."""
    return [r[0] for r in conn.execute("SELECT name FROM runs WHERE task = 'chimera' ORDER BY id").fetchall()]


def _sentence(conn, decision_id: int) -> str:
    text = also_settles_text(other_runs_asking(conn, [decision_id])[decision_id])
    return text[:1].upper() + text[1:]


def _question(d: dict) -> tuple:
    return d["doc"], d["type"], frozenset((d["left"], d["right"]))


def test_the_other_runs_are_those_asking_the_same_question(conn) -> None:
    runs = _chimera_runs(conn)
    assert {MIXED, SMOL, PERFECT} <= set(runs)
    asked = {r: {_question(d) for d in load_view(conn, r).decisions()} for r in runs}
    seen_shared = seen_alone = 0
    for run in runs:
        decs = load_view(conn, run).decisions()
        got = other_runs_asking(conn, [d["id"] for d in decs])
        for d in decs:
            want = [r for r in runs if r != run and _question(d) in asked[r]]
            assert got[d["id"]] == want, (run, d["id"])
            seen_shared += bool(want)
            seen_alone += not want
    assert seen_shared and seen_alone  # both cases occur in the demo


def test_a_family_that_shares_nothing_gets_no_sentence(conn) -> None:
    run = TASKS["ideation"].demo_runs(DATA)[0].name
    decs = load_view(conn, run).decisions()[:20]
    assert all(v == [] for v in other_runs_asking(conn, [d["id"] for d in decs]).values())
    assert also_settles_text([]) == ""


@pytest.mark.parametrize("blind", [False, True])
def test_the_browser_card_says_so_blind_or_not(conn, blind: bool) -> None:
    view = load_view(conn, MIXED)
    ids = [d["id"] for d in view.decisions()[:4]]
    cards = build_buffer(conn, view, ids, 0, len(ids), who="sharer", role="reviewer", blind=blind)
    for i, card in zip(ids, cards, strict=True):
        want = _sentence(conn, i)
        assert SMOL in want, want  # the demo's twin run (same predictions) asks every question
        assert want in card["html"], card["html"]
        assert not set(card) & JUDGE_DERIVED


def test_the_classic_cards_say_so(app) -> None:
    conn = open_db(os.environ["REJUDGE_DB"])
    d = load_view(conn, MIXED).decisions()[0]
    want = _sentence(conn, d["id"])
    assert SMOL in want
    at = open_page(app, "document", reviewer="ana", run=MIXED, doc=d["doc"])
    assert not at.exception
    assert any(want in h.proto.body for h in at.get("html")), "document card"
    at = open_page(at, "queue", reviewer="ana", run=MIXED)
    assert not at.exception
    assert any(want in h.proto.body for h in at.get("html")), "queue card"


def test_a_long_list_of_runs_is_counted_and_named_in_full_on_hover(conn) -> None:
    """A board of many systems: the card names two runs and counts the rest (a longer title line pushed the note
    field below a 720 px screen in the browser suite), and its tooltip names every run."""
    from html import unescape

    from ui.decisions import card_html
    view = load_view(conn, MIXED)
    d = view.decisions()[0]
    others = [f"system-{i}" for i in range(6)]
    card = card_html(d, "chimera", view.task.label_schemes[d["kind"]], blind=False, also_in=others)
    assert "Also settles this question in runs system-0, system-1 and 4 more" in card
    assert "system-2" not in card.split('title="')[0]  # not named on the line itself
    assert f'title="{", ".join(others)}"' in unescape(card)


def test_a_cards_labels_come_before_its_prose(conn) -> None:
    """An ideation rating's card: the judge's, the effective and the reviewers' labels come before the judge's long
    rationale, so the browser card's short box (its note field stays above a 720 px screen) shows them unscrolled."""
    from ui.decisions import card_html
    view = load_view(conn, "demo-ideation-si2024-humans")
    d = next(x for x in view.decisions() if x["human"] and len((x["detail"] or {}).get("rationale") or "") > 200)
    card = card_html(d, "ideation", view.task.label_schemes[d["kind"]], blind=False)
    assert card.index("judge label") < card.index("reviews: ") < card.index("rationale")
    assert card.index("criterion") < card.index("judge label")  # the short lines stay first
