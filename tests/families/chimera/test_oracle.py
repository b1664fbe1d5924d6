"""The invariant: the audited score equals the paper's scorer run with a judge that answers every reviewed question
with its effective label and every other question as the judge did (bench/naive_chimera.py = the paper's loops),
under every effective-label policy.
And: every decision is one judge question (no two decisions share an unordered span pair)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.effective import POLICIES
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import decisions, load_view
from devtools import naive_chimera
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED, copy_of

RUN = "mixed"  # the mixed template's run: the CHIMERA mixed predictions, replay judge


@pytest.fixture(scope="module")
def scored(tmp_path_factory, mixed_template):
    db = open_db(copy_of(mixed_template, tmp_path_factory.mktemp("oracle") / "r.db"))
    decs = list(decisions(db, RUN))
    yield db, decs, naive_chimera.load_inputs(str(GOLD), str(PRED_MIXED), str(JUDGE_LOG))
    db.conn.close()


def _oracle(inputs: dict, decs: list[dict], effective: dict[int, str]) -> dict:
    answers = dict(inputs["answers"])
    for d in decs:
        if d["id"] in effective:
            a = "yes" if effective[d["id"]] == "match" else "no"
            answers[(d["doc"], d["type"], d["left"], d["right"])] = a
            answers[(d["doc"], d["type"], d["right"], d["left"])] = a
    metrics, _ = naive_chimera.score(inputs | {"answers": answers})
    return metrics


def _assert_same(audited: dict, oracle: dict) -> None:
    for section, per_type in oracle.items():
        for t, vals in per_type.items():
            for k, v in vals.items():
                assert audited[section][t][k] == pytest.approx(v, abs=1e-12), (section, t, k)


def test_one_decision_per_question(scored):
    _, decs, _ = scored
    keys = Counter((d["doc"], d["kind"], d["type"], frozenset((d["left"], d["right"]))) for d in decs)
    assert keys and max(keys.values()) == 1


def test_the_twin_from_the_issue_moves_the_score(scored):
    """Overruling 'self-supervised learning' / 'CLIP pre-training' of paper 2112.1275 moves entity F1 to what the
    paper's scorer gives with that answer (it did not move when the twin decision stayed in place)."""
    db, decs, inputs = scored
    d = next(x for x in decs if x["doc"] == "2112.1275"
             and {x["left"], x["right"]} == {"self-supervised learning", "CLIP pre-training"})
    before = audit_run(db, RUN).metrics
    add_review(db, RUN, d["id"], "no-match" if d["effective"] == "match" else "match", "oracle-ana")
    after = audit_run(db, RUN).metrics
    _assert_same(after, _oracle(inputs, decs, {d["id"]: "no-match" if d["effective"] == "match" else "match"}))
    assert after["entities"]["avg"]["f1"] != before["entities"]["avg"]["f1"]
    add_review(db, RUN, d["id"], None, "oracle-ana")
    assert audit_run(db, RUN).metrics == before


PATTERNS = ("one", "agree", "split", "two-one", "adjudicated")
"""Review sets a decision may get: one reviewer; two who agree; a 1-1 split; a 2-1 split; a split an adjudicator
settles."""


def _expected(judge: str, labels: list[str], adjudicated: str | None, policy: str) -> str:
    """The effective label as the README states the rule, written out independently of `audit.effective`."""
    if adjudicated is not None:
        return adjudicated
    fallback = judge if judge != "invalid" else "no-match"  # an unreadable answer scores as no match
    if len(set(labels)) == 1:
        return labels[0]
    if policy == "majority":
        top = Counter(labels).most_common()
        if top[0][1] > top[1][1]:
            return top[0][0]
    return fallback


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60))
def test_audited_equals_paper_scorer_with_reviewed_answers(scored, seed, n):
    """Under both policies, on random review sets with 1-1 and 2-1 splits and adjudications."""
    db, decs, inputs = scored
    rng = random.Random(seed)
    picked = rng.sample(decs, min(n, len(decs)))
    expected: dict[str, dict[int, str]] = {p: {} for p in POLICIES}
    reviewers = ["r1", "r2", "r3"]
    labelled: list[tuple[int, str, str]] = []  # (decision, who, role): what the clean-up withdraws
    for d in picked:
        label = rng.choice(["match", "no-match"])
        other = "no-match" if label == "match" else "match"
        pattern = rng.choice(PATTERNS)
        labels = {"one": [label], "agree": [label, label], "split": [label, other], "two-one": [label, other, label],
                  "adjudicated": [label, other]}[pattern]
        for who, lab in zip(reviewers, labels, strict=False):
            add_review(db, RUN, d["id"], lab, who)
            labelled.append((d["id"], who, "reviewer"))
        adjudicated = rng.choice(["match", "no-match"]) if pattern == "adjudicated" else None
        if adjudicated is not None:
            add_review(db, RUN, d["id"], adjudicated, "boss", role="adjudicator")
            labelled.append((d["id"], "boss", "adjudicator"))
        for p in POLICIES:
            expected[p][d["id"]] = _expected(d["judge"], labels, adjudicated, p)
    try:
        for p in POLICIES:
            oracle = _oracle(inputs, decs, expected[p])
            _assert_same(audit_run(db, RUN, policy=p).metrics, oracle)
            _assert_same(audit_run(db, RUN, policy=p, rebuild=True).metrics, oracle)
            _assert_same(load_view(db, RUN, p).audit.metrics, oracle)
    finally:
        for decision_id, who, role in labelled:  # an undo withdraws a label held (there is nothing else to undo)
            add_review(db, RUN, decision_id, None, who, role=role)
