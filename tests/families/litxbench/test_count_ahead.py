"""LitXBench counts a document while deciding it (`review.count_ahead`) and the store takes those counts
(`review.counts_of`) instead of solving the paper again once the 64-paper cache no longer holds it (#38: 500 papers'
`score` 15.5 s -> 13.0 s).

Invariants: for every LitXBench demo run, the stored run is the same column for column as with nothing counted ahead,
and every document's kept counts are taken by the store (none left); counts asked under other labels are computed
under those labels, and leave the kept ones in place."""

from __future__ import annotations

import pytest

from audit.demo import demo_runs
from audit.runs import score_run
from audit.store.database import open_db
from scoring.families import get_task
from scoring.families.litxbench import review
from tests.store.test_scoring_shares_equal_objects import _stored

LITX = {d.name: d for task, d in demo_runs() if task == "litxbench"}


@pytest.mark.parametrize("run", sorted(LITX))
def test_counts_kept_ahead_store_the_same_run_and_are_all_taken(run, tmp_path, monkeypatch):
    demo = LITX[run]
    taken = []
    real = review.counts_of

    def recording(payload, labels):
        taken.append(review._ahead_key(payload, labels) in review._AHEAD)
        return real(payload, labels)

    monkeypatch.setattr(review, "counts_of", recording)
    score_run(open_db(tmp_path / "ahead.db"), "litxbench", demo.inputs, demo.judge, run=run)
    assert taken and all(taken) and not review._AHEAD  # each document's counts kept, taken once

    monkeypatch.setattr(review, "AHEAD_CAP", 0)
    review._DOCS.clear()  # and every paper solved afresh
    score_run(open_db(tmp_path / "afresh.db"), "litxbench", demo.inputs, demo.judge, run=run)
    assert not review._AHEAD
    assert _stored(tmp_path / "ahead.db", run) == _stored(tmp_path / "afresh.db", run)


def test_counts_under_other_labels_are_computed_and_leave_the_kept_ones():
    demo = next(iter(LITX.values()))
    task = get_task("litxbench")
    loaded = task.load(demo.inputs)
    decisions, _ = task.decide(loaded, task.make_judge(demo.judge), None, None)
    payload = next(p for p in loaded.docs if any(d.doc == p["paper_id"] for d in decisions))
    own = [d for d in decisions if d.doc == payload["paper_id"]]
    labels = {(d.kind, d.type, d.left, d.right): d.judge for d in own}
    flipped = dict(labels)
    first = next(k for k, v in flipped.items() if v in ("match", "no-match"))
    flipped[first] = "no-match" if flipped[first] == "match" else "match"
    kept = len(review._AHEAD)
    assert review.counts_of(payload, flipped) == review.counts(review.doc_from_payload(payload), flipped)
    assert len(review._AHEAD) == kept
    assert review.counts_of(payload, labels) == review.counts(review.doc_from_payload(payload), labels)
    assert len(review._AHEAD) == kept - 1
    review.forget_ahead()
    assert not review._AHEAD
