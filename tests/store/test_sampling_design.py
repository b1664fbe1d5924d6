"""The single-run sample queue serves a design fixed before review: which documents it serves, and in which order,
depends on which documents were reviewed, never on what the reviews said (issue 39: a Neyman step on the reviews'
residuals made each stratum's sample size depend on the errors found there and biased ideation's pairwise novelty
by −0.017 ± 0.008 over 400 replays)."""

from __future__ import annotations

import math
import shutil
from collections import Counter

from audit.review.reviews import add_review
from audit.review.sampling import create_plan, next_sample
from audit.store.database import open_db
from audit.views import as_view
from scoring.stats.sampling import SHRINK, Unit, build_plan, next_unit, planning_variance

LABELS = ("match", "no-match")


def _serve(db, n: int, overrule: int) -> tuple[list[str], list[str]]:
    """n documents from the queue, each reviewed whole as the judge said, except in the `overrule`-th stratum the
    queue samples (0 = the first after the take-all strata), where every decision is overruled."""
    docs, whys, sampled_strata = [], [], []
    for _ in range(n):
        pick = next_sample(db, "mixed")
        docs.append(pick["doc"])
        whys.append(pick["why"])
        if pick["why"] == "minimum" and pick["stratum"] not in sampled_strata:
            sampled_strata.append(pick["stratum"])
        hot = sampled_strata[overrule] if len(sampled_strata) > overrule else None
        for dec in pick["decisions"]:
            judge = db.execute("SELECT judge_label FROM decisions WHERE id = ?", [dec]).fetchone()[0]
            flip = pick["stratum"] == hot and judge in LABELS
            add_review(db, "mixed", dec, LABELS[1 - LABELS.index(judge)] if flip else judge, "ana", sampled=True)
    return docs, whys


def test_the_queue_serves_the_same_documents_whatever_the_reviews_say(mixed_template, tmp_path):
    served = {}
    for overrule in (0, 1):
        path = tmp_path / f"{overrule}.db"
        shutil.copyfile(mixed_template, path)
        db = open_db(path)
        create_plan(db, "mixed", seed=3)
        served[overrule], whys = _serve(db, 45, overrule)
        db.conn.close()
        assert Counter(whys)["neyman"] >= 10, Counter(whys)  # past the take-all strata and minimums: the allocation
    # two reviewers who find errors in different strata (where a residual-driven allocation sends its next
    # reviews) are served the same documents in the same order
    assert served[0] == served[1]


def test_the_planned_allocation_follows_the_decisions_a_review_can_change():
    # two strata of 20 one-decision blocks: in `certain` every answer is certain by construction (planning variance
    # 0), in `open` none is; after the minimum of 3 each, most further reviews go to `open`, but `certain` is not
    # starved at its minimum (`SHRINK`: its variance per decision is w × the pooled one, `open`'s (2 − w) ×, so
    # Neyman gives it √(w / (2 − w)) of `open`'s reviews)
    units = [Unit(f"{h}{i}", f"{h}{i}", "match") for h in ("certain", "open") for i in range(20)]
    plan = build_plan(units, lambda us: us[0].block.rstrip("0123456789"), seed=1)
    planning = planning_variance({b.id: int(b.stratum == "open") for b in plan.blocks})
    sampled: list[str] = []
    while len(sampled) < 24:
        sampled.append(next_unit(plan, sampled, planning=planning).block)
    strata = plan.stratum_of()
    certain = sum(strata[b] == "certain" for b in sampled)
    assert 3 < certain < 24 - certain
    assert abs(certain / (24 - certain) - math.sqrt(SHRINK / (2 - SHRINK))) < 0.15
    # and reviews do not move it: values of a mapping are not read
    again = next_unit(plan, dict.fromkeys(sampled, 1.0), planning=planning)
    assert again == next_unit(plan, dict.fromkeys(sampled, 0.0), planning=planning)


def test_the_plan_keeps_each_documents_changeable_decisions_and_the_queue_reads_them_there(mixed_template, tmp_path):
    # counted once when the plan is made (the queue used to read every decision of the run on each call: 683k rows
    # at 10k retrieval queries); the stored count equals what the decisions give, and a plan stored before it was
    # kept (no "changeable") is served the same documents from the decisions
    import json

    from audit.review.sampling import changeable_decisions, load_plan

    path = tmp_path / "m.db"
    shutil.copyfile(mixed_template, path)
    db = open_db(path)
    create_plan(db, "mixed", seed=3)
    plan = load_plan(db, "mixed")
    assert plan.changeable is not None and set(plan.changeable) == set(plan.stratum_of())
    assert sum(plan.changeable.values()) > 0
    old = type(plan)(plan.seed, plan.blocks, plan.take_all, plan.design)  # as stored before
    assert changeable_decisions(as_view(db, "mixed"), old) == dict(plan.changeable)
    first = [next_sample(db, "mixed")["doc"]]
    stored = json.loads(db.execute("SELECT plan FROM sampling_plans").fetchone()[0])
    del stored["changeable"]
    # stored as a plan of before (plans are never changed in place: `load_plan` keeps the decoded one per plan row
    # and creation time, so the old plan is written as another plan, created earlier)
    db.execute("UPDATE sampling_plans SET plan = ?, created = ?", [json.dumps(stored), "2026-01-01T00:00:00+00:00"])
    db.conn.commit()
    assert load_plan(db, "mixed").changeable is None
    assert [next_sample(db, "mixed")["doc"]] == first
    db.conn.close()
