"""Sampling plan and review queue of the partial audit: seeded ranks, JSON form, take-all strata, the §5.1 gains
and reviews-needed numbers, the §4.5 rule of thumb, and that the queue draws a simple random sample."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pytest
from scipy import stats

from scoring.stats.sampling import (
    INVALID_STRATUM,
    SHRINK,
    Plan,
    Unit,
    build_plan,
    gain,
    greedy_allocation,
    next_unit,
    neyman_total,
    planning_variance,
    reviews_to_target,
    smoothed_variance,
    stratified_variance,
)

N = 3000
BOUNDS = {"A": (-1 / N, 0.0), "B": (0.0, 1 / N), "C": (0.0, 1 / N)}
"""Residual range per §5.1 stratum on the rate scale: D = (H − J)/N with J = 1 in A, 0 in B and C."""


def first_letter(units):
    return units[0].block[0]


def plan_51(seed: int = 1) -> Plan:
    units = [Unit(f"{s}{i}", f"{s}{i}", "match" if s == "A" else "no-match")
             for s, n in (("A", 900), ("B", 300), ("C", 1800)) for i in range(n)]
    return build_plan(units, first_letter, seed)


def sampled_51(plan: Plan) -> dict[str, float]:
    """§5.1 reviews: A 34 of 40 match, B 7 of 20, C 1 of 40, as rate-scale residuals (H − J)/N."""
    out = {}
    strata = plan.strata()
    for h, n, x, j in (("A", 40, 34, 1), ("B", 20, 7, 0), ("C", 40, 1, 0)):
        for k, b in enumerate(strata[h][:n]):
            out[b.id] = ((1 if k < x else 0) - j) / N
    return out


def doc_units(n_docs: int = 30) -> list[Unit]:
    rng = random.Random(4)
    units = []
    for d in range(n_docs):
        for k in range(rng.randint(1, 4)):
            label = rng.choice(["match", "no-match", "no-match"])
            units.append(Unit(f"{d}.{k}", f"doc{d}", label, {"split": rng.random() < 0.2}))
    return units


def by_split_or_match(units):
    if any(u.info.get("split") for u in units):
        return "split"
    return "match" if any(u.judge == "match" for u in units) else "none"


# ---------------------------------------------------------------- plan


def test_ranks_reproducible_from_seed_and_independent_of_input_order():
    units = doc_units()
    a = build_plan(units, by_split_or_match, seed=42)
    shuffled = units[:]
    random.Random(0).shuffle(shuffled)
    b = build_plan(shuffled, by_split_or_match, seed=42)
    ranks = {x.id: x.rank for x in a.blocks}
    assert ranks == {x.id: x.rank for x in b.blocks}
    assert sorted(ranks.values()) == list(range(len(a.blocks)))
    assert {x.id: set(x.units) for x in a.blocks} == {x.id: set(x.units) for x in b.blocks}
    other = build_plan(units, by_split_or_match, seed=43)
    assert {x.id: x.rank for x in other.blocks} != ranks


def test_plan_json_round_trip():
    plan = build_plan(doc_units(), by_split_or_match, seed=7, take_all={"split"}, design="split / match / none")
    text = json.dumps(plan.to_json())
    back = Plan.from_json(json.loads(text))
    assert back == plan
    assert back.stratum_of()["doc0"] == plan.stratum_of()["doc0"]
    assert set(plan.block_of()) == {u.id for u in doc_units()}


def test_invalid_answers_form_a_take_all_stratum_served_first():
    units = doc_units()
    units.append(Unit("bad", "doc3", "invalid"))
    plan = build_plan(units, by_split_or_match, seed=1)
    assert plan.stratum_of()["doc3"] == INVALID_STRATUM and INVALID_STRATUM in plan.take_all
    pick = next_unit(plan, {})
    assert pick.block == "doc3" and pick.why == "take-all" and "bad" in pick.units
    assert next_unit(plan, {"doc3": 0.0}).why != "take-all"


def test_duplicate_unit_rejected():
    with pytest.raises(ValueError, match="twice"):
        build_plan([Unit("u", "b", "match"), Unit("u", "c", "match")], by_split_or_match, seed=0)


# ---------------------------------------------------------------- §5.1: gains, next review, reviews needed


def test_worked_51_gains_pick_clear_no_match():
    plan = plan_51()
    # gains on the total scale (residual D = H − J), with Laplace-smoothed stratum variances as in the doc
    g = {}
    for h, size, n, x in (("A", 900, 40, 34), ("B", 300, 20, 7), ("C", 1800, 40, 1)):
        j = 1 if h == "A" else 0
        values = [(1 if k < x else 0) - j for k in range(n)]
        g[h] = gain(size, n, smoothed_variance(values, -j, 1 - j))
    assert g == pytest.approx({"A": 70.4, "B": 52.2, "C": 91.9}, abs=0.05)
    # the queue's own step is planned (every block alike here: no planning variance), M_h²[1/m − 1/(m + 1)]: C too
    pick = next_unit(plan, sampled_51(plan))
    assert pick.stratum == "C" and pick.why == "neyman"
    reviewed = set(sampled_51(plan))
    expected = min((b for b in plan.strata()["C"] if b.id not in reviewed), key=lambda b: b.rank)
    assert pick.block == expected.id


def test_worked_51_smoothed_se():
    s2 = {}
    for h, n, x, j in (("A", 40, 34, 1), ("B", 20, 7, 0), ("C", 40, 1, 0)):
        s2[h] = smoothed_variance([(1 if k < x else 0) - j for k in range(n)], -j, 1 - j)
    assert s2["C"] == pytest.approx((2 / 42) * (40 / 42) * 40 / 39)  # p̃ = (x + 1)/(n + 2), × n/(n − 1)
    v = stratified_variance({"A": 900, "B": 300, "C": 1800}, {"A": 40, "B": 20, "C": 40}, s2)
    assert math.sqrt(v) == pytest.approx(86.4, abs=0.05)


@pytest.mark.parametrize(("half_width", "more", "allocation"),
                         [(0.03, 221, {"A": 125, "B": 54, "C": 142}), (0.02, 528, {"A": 244, "B": 106, "C": 278})])
def test_worked_51_reviews_to_target(half_width, more, allocation):
    plan = plan_51()
    out = reviews_to_target(plan, sampled_51(plan), half_width, bounds=BOUNDS)
    assert out["more"] == more and out["allocation"] == allocation
    assert out["current"] == {"A": 40, "B": 20, "C": 40}
    assert out["more_units"] == more
    json.dumps(out)


def test_rule_of_thumb_45():
    # one stratum, judge accuracy 0.9 and unbiased: S² of D = H − J is 0.1; n = n0/(1 + n0/N)
    for h, expected in ((0.05, 146), (0.03, 374), (0.02, 727)):
        n = neyman_total({"all": 3000}, {"all": 0.1}, (h * 3000 / 1.96) ** 2)
        assert abs(n - expected) < 1


def test_greedy_matches_closed_form_neyman():
    size, s2 = {"a": 5000, "b": 2000, "c": 9000}, {"a": 0.2, "b": 0.05, "c": 0.01}
    target = 2.0e5
    m = greedy_allocation(size, s2, {h: 1 for h in size}, target)
    assert stratified_variance(size, m, s2) <= target
    assert abs(sum(m.values()) - neyman_total(size, s2, target)) <= 3
    sd = {h: math.sqrt(s2[h]) for h in size}
    share = sum(size[h] * sd[h] for h in size)
    for h in size:  # allocation ∝ M_h S_h
        assert m[h] / sum(m.values()) == pytest.approx(size[h] * sd[h] / share, abs=0.01)


def _greedy_by_definition(size, s2, start, target, cost=None):
    """The greedy allocation as defined: while the variance is above target, one more review in the open stratum
    of largest (gain per cost, size, name)."""
    m = {h: min(start.get(h, 0), size[h]) for h in size}
    c = cost or {}
    while stratified_variance(size, m, s2) > target:
        open_ = [h for h in size if m[h] < size[h]]
        if not open_:
            break
        m[max(open_, key=lambda h: (gain(size[h], m[h], s2[h], c.get(h, 1.0)), size[h], h))] += 1
    return m


@pytest.mark.parametrize("seed", range(200))
def test_greedy_allocation_is_the_greedy_by_definition_on_random_strata(seed):
    """For every input the allocation equals the one-review-at-a-time definition, ties included (equal sizes and
    variances, strata that start full or empty, costs, targets from unreachable to already met)."""
    rng = random.Random(seed)
    names = rng.sample(["a", "b", "c", "match", "no-match", "split", "inspiration/x", "z"], rng.randint(1, 6))
    size = {h: rng.choice([1, 2, 5, 40, 40, 300]) for h in names}
    s2 = {h: rng.choice([0.0, 0.01, 0.25, 0.25, rng.random()]) for h in names}
    start = {h: rng.choice([0, 1, 3, size[h]]) for h in names}
    cost = {h: rng.choice([1.0, 2.0, 3.5]) for h in names} if rng.random() < 0.5 else None
    now = stratified_variance(size, {h: min(start[h], size[h]) for h in names}, s2)
    reachable = now if math.isfinite(now) else 1e4
    target = rng.choice([0.0, 1e-9, 1.0, 50.0, reachable, rng.uniform(0, reachable), rng.uniform(0, reachable / 50),
                         math.inf])
    assert greedy_allocation(size, s2, start, target, cost) == _greedy_by_definition(size, s2, start, target, cost)


# ---------------------------------------------------------------- queue behaviour


def test_queue_minimum_then_neyman_then_done():
    units = doc_units(12)
    plan = build_plan(units, by_split_or_match, seed=3)
    sampled: dict[str, float] = {}
    whys = []
    while (pick := next_unit(plan, sampled)) is not None:
        assert pick.block not in sampled
        whys.append(pick.why)
        sampled[pick.block] = 0.0
    assert len(sampled) == len(plan.blocks)
    first = Counter(whys[:9])
    assert first["minimum"] == min(9, sum(min(3, len(bs)) for bs in plan.strata().values()))


def test_queue_skips_hand_picks_and_rejects_overlap():
    plan = build_plan(doc_units(), by_split_or_match, seed=5)
    first = next_unit(plan, {})
    again = next_unit(plan, {}, certain={first.block})
    assert again.block != first.block
    with pytest.raises(ValueError, match="both sampled and hand-picked"):
        next_unit(plan, {first.block: 0.0}, certain={first.block})


def test_queue_order_is_a_uniform_random_sample_within_a_stratum():
    units = [Unit(f"u{i}", f"b{i}", "match") for i in range(5)]
    firsts = Counter(next_unit(build_plan(units, lambda us: "all", seed), {}).block for seed in range(5000))
    assert set(firsts) == {f"b{i}" for i in range(5)}
    assert stats.chisquare(list(firsts.values())).pvalue > 0.001


@pytest.mark.parametrize("seed", range(8))
def test_queue_is_proportional_where_the_planning_variance_does_not_separate_strata(seed):
    # random strata and block sizes, every decision a review can change (the same planning variance per decision
    # everywhere): the allocation past the minimums is proportional to stratum size, as simple random sampling's
    rng = random.Random(seed)
    units = [Unit(f"{h}{b}.{k}", f"{h}{b}", "match") for h in "abcd"[:rng.randint(2, 4)]
             for b in range(rng.randint(15, 60)) for k in range(rng.randint(1, 5))]
    plan = build_plan(units, lambda us: us[0].block[0], seed)
    planning = planning_variance({b.id: len(b.units) for b in plan.blocks})
    size = {h: len(bs) for h, bs in plan.strata().items()}
    n = sum(size.values()) // 2
    picked: list[str] = []
    while len(picked) < n:
        picked.append(next_unit(plan, picked, planning=planning, min_per_stratum=1).block)
    got = Counter(plan.stratum_of()[b] for b in picked)
    for h in size:
        assert abs(got[h] - n * size[h] / sum(size.values())) <= 1.5, (got, size)


@pytest.mark.parametrize("seed", range(8))
def test_queue_never_starves_a_stratum_the_planning_variance_calls_certain(seed):
    # a stratum whose every decision is certain by construction (planning variance 0) still gets reviews past its
    # minimum (`SHRINK`: its S_h² is w × the pooled variance per decision, so its sampling fraction is at least
    # √(w / (2 − w)) of the others' here; asserted loosely), where it used to stay at its minimum of 3: the estimator
    # never gives a sampled stratum zero variance (the Jeffreys rate)
    rng = random.Random(seed)
    units = [Unit(f"{h}{b}", f"{h}{b}", "match") for h in ("certain", "open", "other")
             for b in range(rng.randint(20, 50))]
    plan = build_plan(units, lambda us: us[0].block.rstrip("0123456789"), seed)
    planning = planning_variance({b.id: int(b.stratum != "certain") for b in plan.blocks})
    size = {h: len(bs) for h, bs in plan.strata().items()}
    picked: list[str] = []
    while len(picked) < sum(size.values()) // 2:
        picked.append(next_unit(plan, picked, planning=planning).block)
    got = Counter(plan.stratum_of()[b] for b in picked)
    fraction = {h: got[h] / size[h] for h in size}
    assert got["certain"] > 3
    assert fraction["certain"] >= 0.8 * math.sqrt(SHRINK / (2 - SHRINK)) * max(fraction["open"], fraction["other"])


@pytest.mark.parametrize("seed", range(12))
def test_the_advice_counts_whole_decisions_the_open_documents_hold(seed):
    # for any plan and any reviewed prefix: the decisions the advice names are a whole number, never more than the
    # open documents hold, and all of them when it asks for every open document (it read 3264.2 more decisions of
    # a LitXBench run holding 3,264)
    from scoring.stats.confidence_sequence import stopping_advice

    rng = random.Random(seed)
    plan = build_plan(doc_units(rng.randint(8, 60)), by_split_or_match, seed)
    reviewed = rng.sample(plan.blocks, rng.randint(0, len(plan.blocks) - 1))
    residuals = {b.id: rng.choice([0.0, 0.0, 0.01, -0.01]) for b in reviewed}
    half = rng.choice([1e-6, 0.01, 0.05])
    for now_half, now_se in ((None, None), (half * 3, half), (half / 2, half / 4)):
        out = stopping_advice(plan, residuals, half, now_half_width=now_half, now_se=now_se, min_sampled=30)
        open_blocks = [b for b in plan.blocks if b.id not in residuals]
        open_units = sum(len(b.units) for b in open_blocks)
        assert isinstance(out["more_units"], int) and 0 <= out["more_units"] <= open_units
        assert out["more"] <= len(open_blocks)
        if out["more"] == len(open_blocks):
            assert out["more_units"] == open_units
        if out["more"] == 0:
            assert out["more_units"] == 0
