"""The alternative annotator test: cases whose answer is known, and the paper's procedure as an oracle."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devtools.naive_alt_test import naive_alt_test
from scoring.stats.alt_test import alt_test


def _panel(n_items: int, n_humans: int, flip: float, rng: random.Random, labels=("yes", "no")):
    """Humans who label each item's true answer, each flipping it with probability `flip`."""
    truth = {i: rng.choice(labels) for i in range(n_items)}
    humans = {f"h{j}": {i: (t if rng.random() > flip else rng.choice([x for x in labels if x != t]))
                        for i, t in truth.items()} for j in range(n_humans)}
    return truth, humans


def _majority(humans, item):
    votes = [h[item] for h in humans.values() if item in h]
    return max(sorted(set(votes)), key=votes.count)


def test_a_judge_that_copies_the_majority_passes():
    rng = random.Random(1)
    _, humans = _panel(80, 5, 0.25, rng)
    judge = {i: _majority(humans, i) for i in range(80)}
    r = alt_test(judge, humans, epsilon=0.2)
    assert r.passes and r.winning_rate >= 0.5
    assert r.advantage_probability > 0.8


def test_a_random_judge_fails():
    rng = random.Random(2)
    _, humans = _panel(80, 5, 0.1, rng)
    judge = {i: rng.choice(("yes", "no")) for i in range(80)}
    r = alt_test(judge, humans, epsilon=0.2)
    assert r.passes is False and r.winning_rate == 0
    assert r.advantage_probability < 0.7


def test_epsilon_is_a_handicap_for_the_humans():
    # a judge exactly as good as another human: wins only once epsilon forgives it
    rng = random.Random(3)
    truth, humans = _panel(120, 6, 0.2, rng)
    judge = {i: (t if rng.random() > 0.2 else ("no" if t == "yes" else "yes")) for i, t in truth.items()}
    assert alt_test(judge, humans, epsilon=0.0).winning_rate < alt_test(judge, humans, epsilon=0.3).winning_rate


def test_ordinal_ratings_use_negative_rmse():
    rng = random.Random(4)
    truth = {i: rng.randint(1, 5) for i in range(60)}
    humans = {f"h{j}": {i: min(5, max(1, t + rng.choice((-1, 0, 0, 1)))) for i, t in truth.items()}
              for j in range(4)}
    mean_judge = {i: round(sum(h[i] for h in humans.values()) / 4) for i in truth}
    far_judge = {i: 6 - t for i, t in truth.items()}
    assert alt_test(mean_judge, humans, scoring="neg_rmse").passes
    assert alt_test(far_judge, humans, scoring="neg_rmse").passes is False


def test_one_human_gives_no_verdict_and_two_a_warning():
    rng = random.Random(5)
    _, humans = _panel(50, 2, 0.1, rng)
    r = alt_test({i: "yes" for i in range(50)}, {"h0": humans["h0"]})
    assert r.undefined and r.passes is None and r.winning_rate is None
    assert r.to_json()["winning_rate"] is None
    two = alt_test({i: "yes" for i in range(50)}, humans)
    assert two.undefined is None and "recommends at least 3" in two.warning


def test_humans_with_too_few_shared_items_are_skipped_and_said():
    rng = random.Random(6)
    _, humans = _panel(40, 4, 0.1, rng)
    humans["late"] = {0: "yes", 1: "no"}
    r = alt_test({i: "yes" for i in range(40)}, humans)
    assert "late" in r.skipped and "2 items" in r.skipped["late"]
    assert [a.annotator for a in r.annotators] == ["h0", "h1", "h2", "h3"]
    humans["late"] = {0: "yes"}  # "1 items" on the Agreement page
    assert alt_test({i: "yes" for i in range(40)}, humans).skipped["late"].startswith("1 item shared with another")


@st.composite
def panels(draw):
    n_items = draw(st.integers(30, 60))
    n_humans = draw(st.integers(3, 6))
    kind = draw(st.sampled_from(["accuracy", "neg_rmse"]))
    labels = ["a", "b", "c"] if kind == "accuracy" else [1, 2, 3, 4, 5]
    rnd = draw(st.randoms(use_true_random=False))
    coverage = draw(st.floats(0.7, 1.0))
    humans = {f"h{j}": {i: rnd.choice(labels) for i in range(n_items) if rnd.random() < coverage}
              for j in range(n_humans)}
    judge = {i: rnd.choice(labels) for i in range(n_items)}
    return judge, humans, kind, draw(st.sampled_from([0.0, 0.1, 0.2, 0.3]))


@settings(max_examples=80, deadline=None, derandomize=True)
@given(panels())
def test_equals_the_papers_procedure_written_out(case):
    judge, humans, kind, eps = case
    got = alt_test(judge, humans, scoring=kind, epsilon=eps, min_items_per_human=20)
    want = naive_alt_test(judge, humans, kind, eps, min_items=20)
    if want is None:
        assert got.undefined is not None
    else:
        assert got.winning_rate == pytest.approx(want[0])
        assert got.advantage_probability == pytest.approx(want[1])
        assert [a.annotator for a in got.annotators] == want[2]


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="scoring"):
        alt_test({}, {}, scoring="f1")
    with pytest.raises(ValueError, match="epsilon"):
        alt_test({}, {}, epsilon=float("nan"))
