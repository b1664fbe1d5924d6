"""Issue 40.1: the default queue no longer hides the judge's worst errors. On the SmolLM2 demo the judge called 37 of
118 identical-string pairs *no match*: skipping "certain" decisions skips only the 81 it answered *match*, and the
37 come first in every queue but the sample's (whose order is its plan's)."""

from __future__ import annotations

from audit.review.queue import queue_ids
from audit.views import load_view
from tests.app.conftest import open_page, plain

SMOL = "demo-chimera-smollm2"


def test_identical_pairs_the_judge_called_no_match_are_served_first_and_never_skipped(conn):
    view = load_view(conn, SMOL)
    identical = {d["id"]: d["judge"] for d in view.decisions() if d["left"] == d["right"]}
    contradicted = {i for i, judge in identical.items() if judge != "match"}
    assert (len(identical), len(contradicted)) == (118, 37)
    for skip in (True, False):
        ids = queue_ids(conn, view, "ana", "unreviewed", skip_trivial=skip)
        assert set(ids[:37]) == contradicted, skip  # the judge's plainest errors first
        skipped = set(identical) - set(ids)
        assert skipped == ({i for i in identical if i not in contradicted} if skip else set())
    every = queue_ids(conn, view, "ana", "all")
    assert set(every[:37]) == contradicted and sorted(every[37:]) == every[37:]
    blind = queue_ids(conn, view, "ana", "unreviewed", skip_trivial=True, blind=True)  # the order is the judge's word
    assert blind == sorted(blind) and set(identical) <= set(blind)


def test_the_queue_page_says_how_many_certain_decisions_the_judge_contradicted(app):
    at = open_page(app, "queue", reviewer="ana", run=SMOL)
    assert not at.exception
    words = " ".join(plain(c.value) for c in at.caption)
    assert "37 decisions whose answer is certain" in words and "come first" in words
    assert "judge gave" in plain(at.toggle(key="queue.skip_trivial").label)
