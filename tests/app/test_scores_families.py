"""The Scores page shows the sampled estimate for ideation and retrieval demo runs (issue 24 part 3)."""

from __future__ import annotations

import random

import pytest

from audit.numbers import format_value
from audit.review.reviews import add_review
from audit.review.sampling import create_plan, estimate, load_plan, next_sample
from audit.store.database import open_db
from audit.views import as_view
from devtools.partial_audit import truth_for
from tests.app.conftest import open_page, plain, table

RUNS = {"ideation": "demo-ideation-si2024-humans", "retrieval": "demo-retrieval-wordllama"}


def _review_through_the_queue(db, run: str, blocks: int) -> None:
    """The queue's first pick, then its order (take-all strata, then the sampled strata in turn by the plan's
    seeded rank), each decision labelled by an adjudicator: the ideation demo's imported reviewers disagree on 76
    ratings, and a document enters the estimate only once every decision in it has a settled human label."""
    view = as_view(db, run)
    truth, rng = truth_for(view.task), random.Random(3)
    by_id = {d["id"]: d for d in view.decisions()}
    plan = load_plan(db, run)
    order = [next_sample(db, run)["decisions"]]
    # the sampled strata in turn (each one's first block by rank, then each one's second...): as the queue serves
    # its stratum minimums, so every sampled stratum gets a review (retrieval's `20-49 above` holds 21 of 191)
    seen: dict[str, int] = {}
    nth: dict[str, int] = {}
    for b in sorted(plan.blocks, key=lambda b: b.rank):
        nth[b.id] = seen[b.stratum] = seen.get(b.stratum, -1) + 1
    order += [[int(u) for u in b.units] for b in sorted(plan.blocks, key=lambda b: (b.stratum not in plan.take_all,
                                                                                     nth[b.id], b.rank))]
    done: set[str] = set()
    for ids in order:
        doc = by_id[ids[0]]["doc"]
        if doc in done:
            continue
        done.add(doc)
        for i in ids:
            add_review(db, run, i, truth(by_id[i], rng, 1.0), "samp", sampled=True, role="adjudicator")
        if len(done) >= blocks:
            return


@pytest.mark.parametrize("family", sorted(RUNS))
def test_scores_page_shows_the_estimate(app, app_db, family):
    run = RUNS[family]
    db = open_db(app_db)
    create_plan(db, run, seed=1)
    # the queue serves the take-all strata whole first (retrieval: 45 high-leverage queries); an interval needs 30
    # reviewed blocks and a review in every other stratum
    plan = load_plan(db, run)
    take_all = sum(1 for b in plan.blocks if b.stratum in plan.take_all)
    _review_through_the_queue(db, run, max(32, take_all + 3 * len(set(plan.strata()) - plan.take_all)))
    expected = estimate(db, run)
    at = open_page(app, "scores", run=run)
    assert not at.exception
    assert not any("not available for this family" in i.value for i in at.info)
    shown = table(at, "metric", "estimate", "95% interval (fixed-n)")
    first = next(iter(expected.values()))
    assert first["estimate"] is not None and first["ci"] is not None, first["note"]
    unit = as_view(db, run).task.headline[0].unit
    assert shown["estimate"][0] == format_value(first["estimate"], unit)  # the number rule of audit/numbers.py
    assert shown["95% interval (fixed-n)"][0] == f"[{format_value(first['ci'][0], unit)}, " \
                                                 f"{format_value(first['ci'][1], unit)}]"
    assert list(shown["metric"]) == [e["label"] for e in expected.values()]
    assert any(plain(s.value).startswith(f"Estimated audited {first['label']}") for s in at.success)
