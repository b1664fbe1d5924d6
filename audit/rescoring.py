"""Audited metrics, kept up to date by the writes that change them.

Each run keeps its audited state in the store: the effective label of every reviewed decision (`effective`), the
audited counts of every document whose labels changed (`doc_audit`), the audited total and the id of the last
review applied (`audit_state`), all under the default effective-label policy. Every write of reviews
(`audit.review.reviews.add_review`, `audit.review.reviews_io`) calls `apply_reviews` inside its own transaction,
which re-counts
only the documents of the new reviews. Reading (`audit_of`, once per page render through `audit.views.RunView`)
never writes: another policy, or a state that is behind its reviews (a database written by an older version, or
opened read-only), is computed in memory from the reviews.

Effective labels come from one place: `load_reviewed` reads the reviews and applies `audit.effective`'s rule.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from cachetools import LRUCache
from sqlite_utils import Database

from audit.effective import (
    DEFAULT_POLICY,
    SUMMARY,
    Effective,
    check_policy,
    effective_labels,
    review_summary,
    summary_of,
)
from audit.store.counts_index import read_counts_index
from audit.store.database import dumps, run_row, transaction
from audit.store.database import newest_review as _newest_review  # (moved to the store: #38)
from audit.store.kept import kept
from audit.store.shared_reviews import OWN_FROM, SAME_QUESTION, SETTLES_OWN, SETTLES_SHARED, SHARED_FROM
from scoring.families import get_task
from scoring.families.base import TaskFamily, add_nested, decision_qkeys

_CHUNK = 900  # SQLite's default limit on bound parameters is 999
_APPLY_CHUNK = 5_000
"""Decisions whose reviews `apply_reviews` holds at once (importing a million reviews held them all: 1.8 GB, #38)."""


@dataclass(eq=False)
class Audit:
    """A run's audited state."""

    metrics_of: Callable[[], dict] = field(repr=False)
    """The family's metrics of these counts, computed when `metrics` is first read."""
    counts: dict
    changed_docs: dict[str, str]
    """Documents whose labels changed: doc id -> audited outcome."""
    review_counts: dict
    doc_counts: dict[str, dict] | None = None
    """Audited counts of the changed documents (doc id -> counts)."""

    @cached_property
    def metrics(self) -> dict:
        """The audited metrics, computed once when first read: the sample's queue and estimators read the counts
        alone (a 10,000-query retrieval run's metrics take 0.27 s of a `queue --next`, #38)."""
        return self.metrics_of()


def reviews_by_decision(db: Database, run_id: int, decision_ids: list[int] | None = None) -> dict[int, list[dict]]:
    """Review rows grouped by decision, oldest first (by creation time: imported reviews keep theirs)."""
    out: dict[int, list[dict]] = defaultdict(list)
    cols = "id, decision_id, reviewer, label, role, blind, note, created, made_in_run"
    if decision_ids is None:
        rows = db.query(f"SELECT {cols} FROM run_reviews WHERE run_id = ? ORDER BY created, id", [run_id])
        for r in rows:
            out[r["decision_id"]].append(r)
        return out
    for ids in _chunks(decision_ids, _CHUNK // 2):
        for r in db.query(_SHARED_BY_DECISION.format(cols=_prefixed(cols), marks=_marks(ids)), [*ids, *ids]):
            out[r["decision_id"]].append(r)
    return out


# the reviews of given decisions, shared by question key as the `run_reviews` view does (`audit.store.shared_reviews`),
# read from the decisions (the view reads from the reviews: fast for a whole run, slow for a few decisions)
_SHARED_BY_DECISION = f"""SELECT {{cols}} FROM (
    SELECT v.*, d2.id AS target, v.run_id AS made_in FROM decisions d2 CROSS JOIN decisions d1 CROSS JOIN reviews v
    WHERE d2.id IN ({{marks}}) AND {SETTLES_SHARED}
    UNION ALL
    SELECT v.*, v.decision_id AS target, v.run_id AS made_in FROM {OWN_FROM}
    WHERE v.decision_id IN ({{marks}}) AND {SETTLES_OWN}) ORDER BY created, id"""


def _prefixed(cols: str) -> str:
    """The view's column names read from `_SHARED_BY_DECISION`'s rows."""
    alias = {"decision_id": "target AS decision_id", "made_in_run": "made_in AS made_in_run"}
    return ", ".join(alias.get(c.strip(), c.strip()) for c in cols.split(","))


def _chunks(ids: list, size: int = _CHUNK) -> list[list]:
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def _marks(ids: list) -> str:
    return ",".join("?" * len(ids))


def run_options(row: Mapping) -> dict:
    return dict(row["inputs"].get("options") or {})


def doc_labels(db: Database, run_id: int, doc_id: str,
               effective: Mapping[int, str] | None = None) -> dict[tuple[str, str, str, str], str]:
    """{(kind, type, left, right): effective label} of one document (stored state, or `effective` overrides)."""
    labels = {}
    for dec_id, kind, typ, left, right, judge, eff in db.execute(
            "SELECT d.id, d.kind, d.type, d.left, d.right, d.judge_label, e.label FROM decisions d LEFT JOIN effective "
            "e ON e.decision_id = d.id WHERE d.run_id = ? AND d.doc_id = ?", [run_id, doc_id]):
        if effective is not None:
            eff = effective.get(dec_id)
        labels[(kind, typ, left, right)] = eff or judge
    return labels


# (decision id, reviewer) of the rows `run_reviews` gives run ?1 with a review id above ?2, read from the newest
# reviews (the view's second branch walked every review of the run through its index: 0.7 s at a million, #38);
# from scratch (?2 = 0) the view is quicker: it reads the run's reviews only
_REVIEWS_SINCE = f"""SELECT d2.id, v.reviewer FROM {SHARED_FROM}
    WHERE v.id > ?2 AND {SETTLES_SHARED} AND d2.run_id = ?1
    UNION ALL
    SELECT v.decision_id, v.reviewer FROM {OWN_FROM}
    WHERE v.id > ?2 AND +v.run_id = ?1 AND {SETTLES_OWN}"""

# the decisions of run ?1 that `run_reviews` gives a sampled row (the view's rows with sampled = 1), read from the
# reviews made in that run (a draw only where its queue served it: v.run_id = d2.run_id = ?1) through their partial
# index (m023): the view walked every review of the run to find them (0.57 s at a million, #38)
_SAMPLED_DECISIONS = f"""SELECT d2.id FROM {SHARED_FROM}
    WHERE v.run_id = ?1 AND v.sampled = 1 AND {SETTLES_SHARED} AND d2.run_id = ?1
    UNION
    SELECT v.decision_id FROM {OWN_FROM}
    WHERE v.run_id = ?1 AND v.sampled = 1 AND {SETTLES_OWN}"""


def sampled_decision_ids(db: Database, run_id: int) -> set[int]:
    """The run's decisions with a review its sample queue served (`run_reviews` rows with `sampled` = 1)."""
    return {r[0] for r in db.execute(_SAMPLED_DECISIONS, [run_id])}


# the same rows for one document ?2: from its decisions (the natural index), to those asking their question, to a
# sampled review of them made in run ?1 (the partial index), so the cost follows the document, not the run's draws
_DOCUMENT_DRAWN = f"""SELECT EXISTS (SELECT 1 FROM decisions d2 CROSS JOIN decisions d1 CROSS JOIN reviews v
        WHERE d2.run_id = ?1 AND d2.doc_id = ?2 AND v.run_id = ?1 AND v.sampled = 1 AND {SETTLES_SHARED})
    OR EXISTS (SELECT 1 FROM decisions d1 CROSS JOIN reviews v
        WHERE d1.run_id = ?1 AND d1.doc_id = ?2 AND v.run_id = ?1 AND v.sampled = 1 AND {SETTLES_OWN})"""


def document_drawn(db: Database, run_id: int, doc_id: str) -> bool:
    """Whether one of the document's decisions is in `sampled_decision_ids(db, run_id)` (its queue served it)."""
    return bool(db.execute(_DOCUMENT_DRAWN, [run_id, doc_id]).fetchone()[0])


@dataclass
class Reviewed:
    """A run's reviewed decisions under one effective-label policy."""

    policy: str
    reviews: dict[int, list[dict]]
    """decision id -> its review rows, oldest first."""
    rows: dict[int, dict]
    """decision id -> its decision row (id, doc_id, kind, type, left, right, judge_label, detail as stored)."""
    effective: dict[int, Effective]
    """decision id -> its effective label under `policy`."""

    @property
    def judge_labels(self) -> dict[int, str]:
        return {i: r["judge_label"] for i, r in self.rows.items()}


_DECISION_COLS = "id, doc_id, kind, type, left, right, judge_label, detail"


def load_reviewed(db: Database, run_id: int, policy: str = DEFAULT_POLICY,
                  decision_ids: list[int] | None = None) -> Reviewed:
    """The reviews of the run (or of `decision_ids`), their decisions and their effective labels under `policy`."""
    check_policy(policy)
    reviews = reviews_by_decision(db, run_id, decision_ids)
    if decision_ids is None:
        # by id (`+run_id`: not through the run's index, which walked all its 683k decisions: #38), in that
        # index's order as before
        rows = {r["id"]: r for r in db.query(
            f"SELECT {_DECISION_COLS} FROM decisions WHERE id IN (SELECT decision_id FROM run_reviews WHERE "
            "run_id = ?) AND +run_id = ? ORDER BY doc_id, kind, type, left, right", [run_id, run_id])}
    else:
        rows = {r["id"]: r for ids in _chunks(list(reviews)) for r in db.query(
            f"SELECT {_DECISION_COLS} FROM decisions WHERE id IN ({_marks(ids)})", ids)}
    reviews = {i: revs for i, revs in reviews.items() if i in rows}
    return Reviewed(policy, reviews, rows, effective_labels({i: r["judge_label"] for i, r in rows.items()}, reviews,
                                                            policy))


def audit_run(db: Database, run: str, *, rebuild: bool = False, policy: str = DEFAULT_POLICY) -> Audit:
    """The run's audited state under an effective-label `policy` (`audit.effective.POLICIES`), read from the store
    (never written here). Pages read it through `audit.views.RunView.audit` instead (one run lookup per render).

    `rebuild=True` recomputes everything from the reviews in memory (the tests check both agree); so does any
    policy other than the stored one.
    """
    return audit_of(db, run_row(db, run), policy, rebuild=rebuild)


def audit_of(db: Database, row: Mapping, policy: str = DEFAULT_POLICY, reviewed: Callable[[], Reviewed] | None = None,
             *, rebuild: bool = False) -> Audit:
    """The audited state of the run `row` under `policy`: the stored state when it is current (no review is read:
    its review counts are stored with it), else computed in memory from the reviewed decisions `reviewed()` gives
    (default: `load_reviewed`; a view passes the ones it holds)."""
    run_id = row["id"]
    task = get_task(row["task"])
    state = db.execute("SELECT last_review, total, review_counts FROM audit_state WHERE run_id = ?",
                       [run_id]).fetchone()
    if (rebuild or check_policy(policy) != DEFAULT_POLICY or state is None or state[2] is None
            or state[0] != _newest_review(db, run_id)):
        loaded = reviewed() if reviewed is not None else load_reviewed(db, run_id, policy)
        if loaded.policy != policy:
            raise ValueError(f"reviewed decisions under policy {loaded.policy!r}, asked for {policy!r}")
        return _audit_in_memory(db, row, task, loaded, _review_counts(loaded))
    total = json.loads(state[1])
    changed, doc_counts = {}, {}
    for r in db.query("SELECT doc_id, outcome, counts FROM doc_audit WHERE run_id = ?", [run_id]):
        changed[r["doc_id"]] = r["outcome"]
        doc_counts[r["doc_id"]] = json.loads(r["counts"])
    return Audit(_metrics_of(db, row, task, total, doc_counts), total, changed, json.loads(state[2]), doc_counts)


def doc_counts_in_order(db: Database, run_id: int, changed: Mapping[str, dict]) -> list[tuple[str, dict]]:
    """(doc id, audited counts) of every document in input order: the changed ones' audited counts, else the
    original counts."""
    return [(doc_id, changed.get(doc_id) or json.loads(counts))
            for doc_id, counts in db.execute("SELECT doc_id, counts FROM documents WHERE run_id = ? ORDER BY idx",
                                             [run_id])]


_ORIGINAL_COUNTS: LRUCache = LRUCache(2)
"""Runs whose decoded original counts `_per_doc` keeps (a 10,000-query retrieval run: about 60 MB)."""


def original_counts(db: Database, run_id: int) -> list[tuple[str, dict]]:
    """(doc id, original counts) of every document in input order, decoded once per run and process.

    A run's documents and their original counts are written once, when it is scored, and never changed (nor are the
    decoded dicts: documents with equal counts share one); the key
    (database file, run id, creation time, document count) tells a run deleted and scored again apart. Decoding
    every document's counts was a fifth of each review's time on a 10,000-query run (#38). A database in memory
    (no file) is never kept.
    """
    created, n_docs = db.execute("SELECT created, n_docs FROM runs WHERE id = ?", [run_id]).fetchone()

    # documents with the same counts share one decoded dict (read-only): 100,000 CHIMERA abstracts have 114
    # distinct counts, and decoding each held 800 MB; read from the run's counts index, not the documents' rows (#38)
    return kept(_ORIGINAL_COUNTS, db, (run_id, created, n_docs), lambda: read_counts_index(db, run_id))


def _per_doc(db: Database, run_id: int, changed: Mapping[str, dict]) -> list[dict]:
    """Every document's audited counts in input order, for `aggregate` (read only: the originals are shared)."""
    return [changed.get(doc_id) or counts for doc_id, counts in original_counts(db, run_id)]


def _audit_in_memory(db: Database, row: Mapping, task: TaskFamily, reviewed: Reviewed, review_counts: dict) -> Audit:
    run_id = row["id"]
    labels_by_id = {i: e.label for i, e in reviewed.effective.items()}
    total = json.loads(json.dumps(row["original_counts"]))
    changed, doc_counts = {}, {}
    for doc_id in sorted({reviewed.rows[i]["doc_id"] for i in reviewed.effective}):
        payload, original = db.execute("SELECT payload, counts FROM documents WHERE run_id = ? AND doc_id = ?",
                                       [run_id, doc_id]).fetchone()
        payload, original = json.loads(payload), json.loads(original)
        counts = task.counts(payload, doc_labels(db, run_id, doc_id, labels_by_id))
        add_nested(add_nested(total, original, -1), counts)
        if counts != original:
            changed[doc_id] = task.outcome(payload, counts)
            doc_counts[doc_id] = counts
    return Audit(_metrics_of(db, row, task, total, doc_counts), total, changed, review_counts, doc_counts)


def _metrics_of(db: Database, row: Mapping, task: TaskFamily, total: dict, doc_counts: dict) -> Callable[[], dict]:
    """The audited metrics of `total` (and the documents' counts, `doc_counts` over the originals), when asked."""
    return lambda: task.aggregate(lambda: _per_doc(db, row["id"], doc_counts), run_options(row), total=total)


def no_review_counts() -> dict:
    """The review counts of a run nobody has reviewed (what `Audit.review_counts` holds)."""
    return dict.fromkeys(SUMMARY, 0) | {"reviews": 0, "reviewers": []}


def apply_reviews(db: Database, run_id: int) -> None:
    """Inside the caller's write transaction: apply the run's reviews added since the state was last brought up to
    date, re-counting only their documents (and storing decisions a family adds under the new labels)."""
    # the task alone, not the whole row decoded (`run_row`): a 500-paper LitXBench run's row holds 0.8 MB of JSON,
    # 12 ms of every review (#38)
    task = get_task(db.execute("SELECT task FROM runs WHERE id = ?", [run_id]).fetchone()[0])
    state = db.execute("SELECT last_review, total, review_counts FROM audit_state WHERE run_id = ?",
                       [run_id]).fetchone()
    if state is None or state[2] is None:  # none, or kept without its review counts (before m022): from scratch
        db.execute("DELETE FROM effective WHERE run_id = ?", [run_id])
        db.execute("DELETE FROM doc_audit WHERE run_id = ?", [run_id])
        original, = db.execute("SELECT original_counts FROM runs WHERE id = ?", [run_id]).fetchone()
        last, total, tally = 0, json.loads(original), no_review_counts()
    else:
        last, total, tally = state[0], json.loads(state[1]), json.loads(state[2])
    seen: Counter[int] = Counter()  # decision id -> review rows the run sees on it since `last`
    reviewers = set(tally["reviewers"])
    since = _REVIEWS_SINCE if last else "SELECT decision_id, reviewer FROM run_reviews WHERE run_id = ?1 AND id > ?2"
    for dec_id, who in db.execute(since, [run_id, last]):
        seen[dec_id] += 1
        reviewers.add(who)
    tally["reviews"] += seen.total()
    tally["reviewers"] = sorted(reviewers)
    newest = _newest_review(db, run_id)
    docs: set[str] = set()
    added_any = state is None
    for part in _chunks(list(seen), _APPLY_CHUNK):
        reviewed = load_reviewed(db, run_id, DEFAULT_POLICY, part)
        # the review counts, kept with the state: each re-labelled decision's old share out, its new share in
        was = {r[0]: r[1:] for ids in _chunks(part) for r in db.execute(
            "SELECT decision_id, label, source, n_humans, judge_label FROM effective WHERE decision_id IN "
            f"({_marks(ids)})", ids)}
        for dec_id, e in reviewed.effective.items():
            d = reviewed.rows[dec_id]
            old = summary_of(*was[dec_id]) if dec_id in was else (0,) * len(SUMMARY)
            for k, gone, now_ in zip(SUMMARY, old, summary_of(e.label, e.source, len(e.human_labels),
                                                              d["judge_label"]), strict=True):
                tally[k] += now_ - gone
            db.execute("INSERT OR REPLACE INTO effective (decision_id, run_id, doc_id, judge_label, label, source, "
                       "n_humans) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [dec_id, run_id, d["doc_id"], d["judge_label"], e.label, e.source, len(e.human_labels)])
            docs.add(d["doc_id"])
    for doc_id in sorted(docs):
        key = [run_id, doc_id]
        payload, original = db.execute("SELECT payload, counts FROM documents WHERE run_id = ? AND doc_id = ?",
                                       key).fetchone()
        before = db.execute("SELECT counts FROM doc_audit WHERE run_id = ? AND doc_id = ?", key).fetchone()
        payload = json.loads(payload)
        labels = doc_labels(db, run_id, doc_id)
        added = task.redecide(payload, labels)
        if added:
            qkeys = decision_qkeys(task, payload, [{"kind": d.kind, "type": d.type, "left": d.left, "right": d.right}
                                                   for d in added])
            db.conn.executemany(
                "INSERT OR IGNORE INTO decisions (run_id, doc_id, kind, type, left, right, judge_label, detail, qkey) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, d.doc, d.kind, d.type, d.left, d.right, d.judge, dumps(d.detail), q)
                 for d, q in zip(added, qkeys, strict=True)])
            labels = doc_labels(db, run_id, doc_id)
            added_any = True
        counts = task.counts(payload, labels)
        add_nested(total, json.loads(before[0]) if before else json.loads(original), -1)
        add_nested(total, counts)
        if counts == json.loads(original):
            db.execute("DELETE FROM doc_audit WHERE run_id = ? AND doc_id = ?", key)
        else:
            db.execute("INSERT OR REPLACE INTO doc_audit (run_id, doc_id, counts, outcome) VALUES (?, ?, ?, ?)",
                       [run_id, doc_id, dumps(counts), task.outcome(payload, counts)])
    if added_any:  # counting a 683k-decision run took a tenth of each review (#38)
        db.execute("UPDATE runs SET n_decisions = (SELECT COUNT(*) FROM decisions WHERE run_id = ?) WHERE id = ?",
                   [run_id, run_id])
    db.execute("INSERT OR REPLACE INTO audit_state (run_id, last_review, total, review_counts) VALUES (?, ?, ?, ?)",
               [run_id, newest, dumps(total), dumps(tally)])


def sharing_runs(db: Database, run_id: int, decision_ids: list[int]) -> list[int]:
    """Other runs that ask the questions of these decisions of `run_id` (same question key), in id order."""
    out: set[int] = set()
    for ids in _chunks(decision_ids):
        out |= {r[0] for r in db.execute(
            f"SELECT DISTINCT d2.run_id FROM decisions d1 CROSS JOIN decisions d2 WHERE d1.id IN ({_marks(ids)}) "
            f"AND {SAME_QUESTION} AND d2.run_id != ?", [*ids, run_id])}
    return sorted(out)


def apply_reviews_everywhere(db: Database, run_id: int, decision_ids: list[int]) -> list[int]:
    """Inside the caller's write transaction: `apply_reviews` for the run the reviews were made in and for every
    run sharing their questions (a review settles a question in every run that asks it); the other runs' ids."""
    apply_reviews(db, run_id)
    others = sharing_runs(db, run_id, decision_ids)
    for other in others:
        apply_reviews(db, other)
    return others


def rebuild_audit_state(db: Database, run: str) -> None:
    """Recompute the stored audited state from all reviews (one write transaction)."""
    run_id = run_row(db, run)["id"]
    with transaction(db):
        db.execute("DELETE FROM audit_state WHERE run_id = ?", [run_id])
        apply_reviews(db, run_id)


def _review_counts(reviewed: Reviewed) -> dict:
    """Reviewed / overruled / confirmed / conflicted / adjudicated decisions, review rows and reviewers."""
    return review_summary(reviewed.effective, reviewed.judge_labels) | {
        "reviews": sum(len(revs) for revs in reviewed.reviews.values()),
        "reviewers": sorted({r["reviewer"] for revs in reviewed.reviews.values() for r in revs})}
