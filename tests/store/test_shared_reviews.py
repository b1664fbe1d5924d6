"""The question-sharing rule (`audit.store.shared_reviews`: a review settles its question in every run that asks it; a
decision without a question key, its own decision only) is written once, and every reader built from it agrees with
the rule.

Invariant, on random review sets in three runs that share questions, some decisions not yet keyed: the `run_reviews`
view gives exactly the (decision, review) pairs a plain-Python statement of the rule gives; and each faster reader
(`reviews_by_decision` for a few decisions, the reviews since an id, the newest review, the sample draws, the runs
that share a decision's question, the runs a review is seen in) reads what the view or the rule gives. A guard keeps
the rule's SQL from being spelled again outside its module."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from audit.rescoring import _REVIEWS_SINCE, reviews_by_decision, sampled_decision_ids, sharing_runs
from audit.review.reviews import add_review
from audit.review.sharing import other_runs_asking
from audit.store.database import newest_review, run_row
from tests.store.conftest import SHARING_RUNS as RUNS

ROOT = Path(__file__).resolve().parents[2]
RULE_SPELLED = re.compile(
    r"\bqkey\s*(==?|\bIS\b|\bIN\b)\s*\(?\s*(SELECT\s+)?(\w+\.)?qkey\b"  # a question key matched to another
    r"|USING\s*\(\s*qkey\s*\)"  # the same join, spelled with USING
    r"|\w+\.qkey\s*(==?|\bIN\b)\s*(\?|:\w|\(\s*SELECT)"  # a table's key matched to a given one or a subquery's
    r"|\w+\.qkey\s+IS\s+(NOT\s+)?NULL",  # whether a table's decision has a key (which branch of the rule)
    re.IGNORECASE)
"""The rule's SQL, which only its module may spell: a question-key join however written, a table's key matched to a
given key, or a test of whether a table's decision has a key."""


def rule_spellings(source: str) -> list[int]:
    """Lines of `source` that spell the sharing rule's SQL."""
    return [n for n, line in enumerate(source.splitlines(), 1) if RULE_SPELLED.search(line)]


def _rule(db) -> set[tuple[int, int]]:
    """(decision id, review id) for every decision each review settles, stated in Python from the stored keys."""
    decisions = {i: q for i, q in db.execute("SELECT id, qkey FROM decisions")}
    by_key: dict[str, list[int]] = {}
    for i, q in decisions.items():
        if q is not None:
            by_key.setdefault(q, []).append(i)
    out = set()
    for rid, made_on in db.execute("SELECT id, decision_id FROM reviews"):
        q = decisions[made_on]
        out |= {(d, rid) for d in (by_key[q] if q is not None else [made_on])}
    return out


def _shared_runs(db, decision_ids) -> dict[int, set[int]]:
    """Per decision, the runs (its own included) with a decision of the same question key, in Python."""
    rows = list(db.execute("SELECT id, run_id, qkey FROM decisions"))
    runs_of_key: dict[str, set[int]] = {}
    for _, run, q in rows:
        if q is not None:
            runs_of_key.setdefault(q, set()).add(run)
    info = {i: (run, q) for i, run, q in rows}
    return {d: (runs_of_key[info[d][1]] if info[d][1] is not None else {info[d][0]}) for d in decision_ids}


@pytest.mark.parametrize("seed", [5, 6])
def test_every_reader_agrees_with_the_rule_on_random_review_sets(three_sharing_runs, seed):
    db = three_sharing_runs
    rng = random.Random(seed)
    rid = {run: run_row(db, run)["id"] for run in RUNS}
    ids = {run: [r[0] for r in db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id LIMIT 40",
                                          [rid[run]])] for run in RUNS}
    unkeyed = rng.sample(ids["twin"], 8)  # stored before keys existed: settled by their own reviews only
    db.execute(f"UPDATE decisions SET qkey = NULL WHERE id IN ({','.join('?' * len(unkeyed))})", unkeyed)
    names = {v: k for k, v in rid.items()}
    shared = own = 0
    for step in range(40):
        run = rng.choice(RUNS)
        row = add_review(db, run, rng.choice(ids[run]), rng.choice(["match", "no-match"]), rng.choice(["ana", "ben"]))
        if rng.random() < 0.4:  # stored as a draw (the queue's check is not what these readers are about)
            db.execute("UPDATE reviews SET sampled = 1 WHERE id = ?", [row["id"]])
        pairs = _rule(db)
        view = set(db.execute("SELECT decision_id, id FROM run_reviews"))
        assert view == pairs, step
        run_of = dict(db.execute("SELECT id, run_id FROM decisions"))
        made_in = dict(db.execute("SELECT id, run_id FROM reviews"))
        sampled = {i for i, s in db.execute("SELECT id, sampled FROM reviews") if s}
        since = rng.randint(0, max(made_in))
        for r in RUNS:
            mine = {(d, v) for d, v in pairs if run_of[d] == rid[r]}
            some = rng.sample(ids[r], 10)
            got = reviews_by_decision(db, rid[r], some)
            assert {(d, row["id"]) for d, rows in got.items() for row in rows} == {p for p in mine if p[0] in some}
            assert all(row["made_in_run"] == made_in[row["id"]] for rows in got.values() for row in rows)
            reviewer = dict(db.execute("SELECT id, reviewer FROM reviews"))
            assert Counter(map(tuple, db.execute(_REVIEWS_SINCE, [rid[r], since]).fetchall())) == Counter(
                (d, reviewer[v]) for d, v in mine if v > since)
            assert newest_review(db, rid[r]) == max((v for _, v in mine), default=0)
            assert sampled_decision_ids(db, rid[r]) == {d for d, v in mine if v in sampled and made_in[v] == rid[r]}
            share = _shared_runs(db, some)
            assert sharing_runs(db, rid[r], some) == sorted(set().union(*share.values()) - {rid[r]})
            asking = other_runs_asking(db, some)
            assert {d: set(names_) for d, names_ in asking.items()} == {
                d: {names[x] for x in runs - {rid[r]}} for d, runs in share.items()}
        shared += any(made_in[v] != run_of[d] for d, v in pairs)
        own += any(d in unkeyed for d, _ in pairs)
    assert shared and own  # both branches of the rule were exercised


def test_the_rule_is_spelled_only_in_its_module():
    spelled = {}
    for folder in ("audit", "scoring", "ui", "pages", "devtools", "bench", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.parent.name == "store" and path.name in ("shared_reviews.py", "migrations.py"):
                continue  # the rule; and history (m014's view, frozen as it was made: the invariant above checks it)
            lines = rule_spellings(path.read_text(encoding="utf-8"))
            if lines:
                spelled[str(path.relative_to(ROOT))] = lines
    assert spelled == {}, f"the question-sharing rule spelled outside audit/store/shared_reviews.py: {spelled}"


@pytest.mark.parametrize("planted", [
    'db.execute("SELECT d2.run_id FROM decisions d1 JOIN decisions d2 ON d2.qkey = d1.qkey")',
    '"... WHERE d.qkey IS NULL AND v.run_id = ?"',
    '"JOIN decisions b ON a.qkey=b.qkey"',
    '"d1.qkey is not null"',
    # spellings chosen to evade a narrower guard
    '"WHERE qkey = d1.qkey"',
    '"JOIN decisions d2 USING (qkey)"',
    '"d2.qkey IN (SELECT qkey FROM decisions WHERE id = v.decision_id)"',
    '"ON d1.qkey == d2.qkey"',
    '"ON d1.qkey IS d2.qkey"',
    '"WHERE d2.qkey = ? AND d2.run_id = ?"',
])
def test_the_guard_refuses_a_copy_of_the_rule(planted):
    assert rule_spellings(f"x = 1\n{planted}\n") == [2]


def test_the_guard_lets_keyless_counts_pass():
    # counting keys or indexing them is not the rule (audit/board/table.py, migration m014's index)
    assert rule_spellings('"SELECT COUNT(DISTINCT qkey), SUM(qkey IS NULL) FROM decisions"\n'
                          '"CREATE INDEX decisions_qkey ON decisions(qkey, run_id) WHERE qkey IS NOT NULL"') == []
