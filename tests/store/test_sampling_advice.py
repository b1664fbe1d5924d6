"""The sample queue's stopping advice, followed on a known truth: it counts the 30-document minimum first, says 0 only
where the interval the estimate shows exists and is narrow enough, and is not late (issue 39 point 1)."""

from __future__ import annotations

import random

import pytest

from audit.review.reviews import add_review
from audit.review.sampling import MIN_SAMPLED_BLOCKS, create_plan, estimate, next_sample
from audit.views import decisions

TARGET = "entities/avg/f1"


def _truth(db, rate: float, seed: int) -> dict[int, str]:
    """A known labelling: the judge's answer flipped on non-identical pairs with probability rate × the document's
    propensity (clustered errors, as the bench's truth models)."""
    rng = random.Random(seed)
    propensity: dict[str, float] = {}
    out = {}
    for d in decisions(db, "mixed"):
        p = propensity.setdefault(d["doc"], rng.choice([0.0, 0.5, 1.0, 1.5, 2.0]))
        flip = d["left"] != d["right"] and rng.random() < rate * p
        out[d["id"]] = ("no-match" if d["judge"] == "match" else "match") if flip else d["judge"]
    return out


def _shown_half_width(db) -> float | None:
    ci = estimate(db, "mixed")[TARGET]["anytime"]["ci"]
    return None if ci is None else (ci[1] - ci[0]) / 2


@pytest.mark.parametrize(("rate", "half_width"), [(0.3, 0.02), (0.05, 0.03)])
def test_following_the_advice_finds_the_interval_where_it_says(db_with_run, rate, half_width):
    db = db_with_run
    truth = _truth(db, rate, seed=1)
    create_plan(db, "mixed", seed=7)
    n, promised, reached = 0, None, None
    while (pick := next_sample(db, "mixed", half_width=half_width)) is not None and n <= 45:
        more, shown = pick["more_to_target"], _shown_half_width(db)
        there = shown is not None and shown <= half_width + 1e-12
        if n < MIN_SAMPLED_BLOCKS:  # no interval can exist yet: the advice counts the minimum first
            assert more >= MIN_SAMPLED_BLOCKS - n, (n, more)
        assert (more == 0) == there, (n, more, shown)  # 0 exactly where the interval is there: never early or late
        if shown is not None and promised is None:
            promised = n + more  # the first projection with an interval to calibrate on
        if more == 0:
            reached = n
            break
        for dec in pick["decisions"]:
            add_review(db, "mixed", dec, truth[dec], "ana", sampled=True)
        n += 1
    if rate == 0.05:  # the judge is nearly right: fewer than 5 documents ever differ, no interval, never a 0
        assert reached is None
        return
    assert reached is not None and reached >= MIN_SAMPLED_BLOCKS
    assert abs(reached - promised) <= 3, (reached, promised)
