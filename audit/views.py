"""The read model of a run: `RunView`, loaded once per page render or command, serves documents, decisions,
their effective labels under one policy, the audited state, and (through `as_view`) the queue, agreement,
sampling, errata and every export format.

Functions elsewhere in `audit/` take a run as `RunRef`: a run name (looked up then) or a `RunView` (no lookup).
"""

from __future__ import annotations

import gc
import json
import threading
from array import array
from bisect import bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import NamedTuple, TypeVar

from cachetools import LRUCache
from sqlite_utils import Database

from audit.effective import DEFAULT_POLICY, Effective, check_policy, effective_label
from audit.errors import AuditError
from audit.rescoring import (
    _REVIEWS_SINCE,
    Audit,
    Reviewed,
    audit_of,
    doc_counts_in_order,
    load_reviewed,
    original_counts,
    reviews_by_decision,
)
from audit.store.database import db_file, reviews_version, run_row
from audit.store.kept import kept, run_key
from scoring.families import get_task
from scoring.families.base import TaskFamily

T = TypeVar("T")


class RunView:
    """One run as every reader sees it: its row, its family, its reviews and effective labels under `policy`.

    Reads are made when first asked for and kept (a view is a snapshot of one render or command); `on(db)` gives
    the same run on another connection with nothing read yet (a fragment's rerun, a callback's write).
    """

    def __init__(self, db: Database, row: dict, policy: str = DEFAULT_POLICY) -> None:
        self.db = db
        self.row = row
        self.policy = check_policy(policy)
        self.task: TaskFamily = get_task(row["task"])

    @property
    def name(self) -> str:
        return self.row["name"]

    @property
    def id(self) -> int:
        return self.row["id"]

    @property
    def original_metrics(self) -> dict:
        return self.row["original_metrics"]

    def on(self, db: Database) -> RunView:
        """The same run and policy read through `db`, nothing cached."""
        return RunView(db, self.row, self.policy)

    def with_policy(self, policy: str) -> RunView:
        return self if policy == self.policy else RunView(self.db, self.row, policy)

    # ---------------------------------------------------------------- reviews and effective labels

    @cached_property
    def reviewed(self) -> Reviewed:
        """Every reviewed decision: its reviews, its row and its effective label under the view's policy (kept per
        process and brought up to date with the reviews added since: `kept_reviewed`). Read-only: it may be shared
        with other views of the same run."""
        return kept_reviewed(self.db, self.row, self.policy)

    @property
    def reviews(self) -> dict[int, list[dict]]:
        return self.reviewed.reviews

    @property
    def effective(self) -> dict[int, Effective]:
        """decision id -> effective label, for the reviewed decisions (the others carry the judge's label)."""
        return self.reviewed.effective

    def effective_of(self, judge_label: str, reviews: Sequence[dict]) -> Effective:
        """The view's policy applied to one decision's reviews (e.g. a subset of them, as agreement uses)."""
        return effective_label(judge_label, reviews, self.policy)

    @cached_property
    def audit(self) -> Audit:
        """Original and audited metrics, counts and review counts under the view's policy."""
        return audit_of(self.db, self.row, self.policy, lambda: self.reviewed)

    # ---------------------------------------------------------------- documents

    def document_ids(self) -> list[str]:
        """The run's document ids in input order."""
        return [r[0] for r in self.db.execute("SELECT doc_id FROM documents WHERE run_id = ? ORDER BY idx",
                                              [self.id])]

    def documents(self) -> list[dict]:
        """One row per document: id, position, original and audited outcome, decision and review counts."""
        columns = self.document_columns()
        return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]

    def document_columns(self) -> dict[str, list]:
        """`documents()` as columns: a table of 100,000 documents is built from them without a dict per row (#38).
        Read-only: the columns that reviews cannot change are kept per run and shared."""
        docs, idx, outcome, n_dec = kept_per_run(self.db, self.row, "document columns", lambda: tuple(
            list(c) for c in zip(*run_document_rows(self.db, self.row), strict=True)) or ([], [], [], []))
        n_rev = kept_counts(self, "per document")[0]
        changed = self.audit.changed_docs
        return {"doc": docs, "idx": idx, "outcome": outcome,
                "audited_outcome": [changed.get(d, o) for d, o in zip(docs, outcome, strict=True)] if changed
                else outcome, "decisions": n_dec, "reviewed": [n_rev.get(d, 0) for d in docs]}

    def document(self, doc_id: str) -> dict:
        """A document's stored payload (gold and prediction) and its original counts and outcome."""
        rows = list(self.db.query("SELECT * FROM documents WHERE run_id = ? AND doc_id = ?", [self.id, doc_id]))
        if not rows:
            raise AuditError(f"document {doc_id!r} is not in run {self.name!r}")
        r = rows[0]
        return {"doc": doc_id, "idx": r["idx"], "payload": json.loads(r["payload"]),
                "counts": json.loads(r["counts"]), "outcome": r["outcome"]}

    def document_review(self, doc_id: str) -> dict:
        """The document with its decisions (judge, effective, reviews, `moot`), original and audited counts and
        outcome."""
        info = self.document(doc_id)
        decs = self.decisions(doc_id)
        labels = {(d["kind"], d["type"], d["left"], d["right"]): d["effective"] for d in decs}
        moot = self.task.moot(info["payload"], labels)
        for d in decs:
            d["moot"] = (d["kind"], d["type"], d["left"], d["right"]) in moot
        changed = (self.audit.doc_counts or {}).get(doc_id)
        return info | {"decisions": decs, "audited_counts": changed or info["counts"],
                       "audited_outcome": self.audit.changed_docs.get(doc_id, info["outcome"])}

    def audited_doc_counts(self) -> list[tuple[str, dict]]:
        """(doc id, counts under the effective labels) of every document, in input order."""
        return doc_counts_in_order(self.db, self.id, self.audit.doc_counts or {})

    def audited_doc_counts_shared(self) -> list[tuple[str, Mapping]]:
        """`audited_doc_counts`, read-only: an unchanged document's counts are its original counts as decoded once
        per run and process (`audit.rescoring.original_counts`; documents with equal counts share one dict), so
        nothing is decoded again (100,000 abstracts: 17 s of an overview render after each review, #38)."""
        changed = self.audit.doc_counts or {}
        return [(doc_id, changed.get(doc_id) or counts) for doc_id, counts in original_counts(self.db, self.id)]

    # ---------------------------------------------------------------- decisions

    def decisions(self, doc: str | None = None) -> list[dict]:
        """Decisions in id order, each with its judge label, its reviews and its effective label.

        Raises:
            AuditError: `doc` is not a document of the run.
        """
        return list(self.iter_decisions(doc))

    def iter_decisions(self, doc: str | None = None) -> Iterator[dict]:
        """`decisions`, one at a time (`python -m audit decisions` prints a run of 344,000 decisions in 1.3 GB as a
        list, a few MB as it goes).

        Raises:
            AuditError: `doc` is not a document of the run (once nothing was yielded).
        """
        q = "SELECT id, doc_id, kind, type, left, right, judge_label, detail FROM decisions WHERE run_id = ?"
        args: list = [self.id]
        if doc is not None:
            q += " AND doc_id = ?"
            args.append(doc)
        reviews, effective = self.reviews, self.effective
        unreviewed: dict[str, Effective] = {}  # the judge's label: one per label, not one per decision
        yielded = False
        for d in self.db.execute(q + " ORDER BY id", args):
            e = effective.get(d[0])
            if e is None and d[0] not in reviews:
                e = unreviewed.get(d[6]) or unreviewed.setdefault(d[6], self.effective_of(d[6], []))
            yielded = True
            yield self._decision(d, reviews.get(d[0], []), e)
        if doc is not None and not yielded:
            self.document(doc)  # an unknown document is an error, not an empty list

    def decision_numbers(self, decision_ids: Sequence[int]) -> dict[int, int]:
        """Each decision's number within its run (1, 2, …: its rank in id order), what the pages call it; the id
        is unique across runs and grows with every run a database holds."""
        ids = run_decision_ids(self.db, self.row)
        return {i: bisect_right(ids, i) for i in decision_ids}  # the count of the run's ids up to i

    def decision_tags(self, decision_ids: Sequence[int]) -> list[str]:
        """`#N` of each decision, as the pages and the card show it and `review --decision` takes it."""
        numbers = self.decision_numbers(decision_ids)
        return [f"#{numbers[i]}" for i in decision_ids]

    def decision_by_number(self, number: int) -> int:
        """The id of the run's decision `#number` (`decision_numbers` inverted: what the card shows, the CLI takes).

        Raises:
            KeyError: the run has fewer decisions.
        """
        ids = run_decision_ids(self.db, self.row)
        if not 1 <= number <= len(ids):
            raise KeyError(f"run {self.name!r} has no decision #{number} (it has {self.row['n_decisions']})")
        return ids[number - 1]

    def decision(self, decision_id: int) -> dict:
        """One decision as `decisions` gives it, read now (its reviews too), not from the view's snapshot.

        Raises:
            KeyError: the decision is not in the run.
        """
        d = self.db.execute("SELECT id, doc_id, kind, type, left, right, judge_label, detail FROM decisions "
                            "WHERE id = ? AND run_id = ?", [decision_id, self.id]).fetchone()
        if d is None:
            raise KeyError(decision_id)
        return self._decision(d, reviews_by_decision(self.db, self.id, [decision_id]).get(decision_id, []), None)

    def _decision(self, d: Sequence, reviews: list[dict], effective: Effective | None) -> dict:
        e = effective or self.effective_of(d[6], reviews)
        return {"id": d[0], "doc": d[1], "kind": d[2], "type": d[3], "left": d[4], "right": d[5], "judge": d[6],
                "effective": e.label, "source": e.source, "human": e.human_labels, "adjudicator": e.adjudicator,
                "detail": json.loads(d[7]),
                "reviews": reviews}

    def review_counts_by_type(self) -> list[dict]:
        """Per decision kind and type: decisions, reviewed, overruled, conflicted, judge-invalid."""
        out = {(k, t): {"kind": k, "type": t, "decisions": n, "reviewed": 0, "overruled": 0, "conflicted": 0,
                        "judge invalid": invalid}
               for k, t, n, invalid in judge_side_totals(self.db, self.row)}
        for column, per_key in zip(("reviewed", "overruled", "conflicted"), kept_counts(self, "per type"),
                                   strict=True):
            for key, n in per_key.items():
                out[key][column] += n
        return list(out.values())


class _Kept(NamedTuple):
    version: tuple[int, int]
    """`reviews_version` when `reviewed` was read (the reviews read may be newer: they are read after it)."""
    newest: tuple | None
    """The review row of `version`'s newest id as it was then (`_newest_row`)."""
    reviewed: Reviewed
    counts: dict[str, tuple[Counter, ...]]
    """`_COUNTS` name -> those counts of `reviewed`, once asked for (then brought up to date with it)."""


def _tallies(reviewed: Reviewed, ids=None) -> tuple[Counter, Counter, Counter]:
    """Per reviewer: decisions they hold a current label on, those agreeing with the judge, review rows (of the
    decisions `ids`, default all)."""
    labelled: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    rows: Counter[str] = Counter()
    judge = reviewed.rows
    for i in reviewed.reviews if ids is None else ids:
        j = judge[i]["judge_label"]
        for who, lab in reviewed.effective[i].labels_by().items():
            labelled[who] += 1
            agree[who] += lab == j
        for r in reviewed.reviews[i]:
            rows[r["reviewer"]] += 1
    return labelled, agree, rows


def _per_type(reviewed: Reviewed, ids=None) -> tuple[Counter, Counter, Counter]:
    """Per (kind, type): reviewed decisions, those whose effective label overrules the judge, conflicted ones."""
    done: Counter[tuple] = Counter()
    overruled: Counter[tuple] = Counter()
    conflicted: Counter[tuple] = Counter()
    for i in reviewed.effective if ids is None else ids:
        d, e = reviewed.rows[i], reviewed.effective[i]
        key = d["kind"], d["type"]
        done[key] += e.reviewed
        overruled[key] += e.label != d["judge_label"]
        conflicted[key] += e.conflicted
    return done, overruled, conflicted


def _per_document(reviewed: Reviewed, ids=None) -> tuple[Counter]:
    """Per document: its reviewed decisions."""
    return Counter(reviewed.rows[i]["doc_id"] for i in (reviewed.effective if ids is None else ids)
                   if reviewed.effective[i].reviewed),


_COUNTS: dict[str, Callable[..., tuple[Counter, ...]]] = {
    "reviewer tallies": _tallies, "per type": _per_type, "per document": _per_document}
"""Sums over a run's reviewed decisions that pages show after every review, each a function of one decision at a
time: kept with the reviewed decisions and brought up to date by the changed decisions' share out and in (walking a
million reviews' decisions took 0.2-0.5 s a render, #38)."""


_KEPT: OrderedDict[tuple, _Kept] = OrderedDict()
_KEPT_LOCK = threading.Lock()
_KEEP_REVIEWED = 16
"""At most this many runs x policies whose reviewed decisions `kept_reviewed` keeps (a board reads its runs in
turn: fewer places than runs and each read evicted the run read next, so every read was a full one)."""
_FREEZE_AT = 100_000
"""From this many reviews, a full read of a run's reviewed decisions is moved out of the cyclic garbage collector's
sight (`gc.freeze`: it holds no cycles, and objects are still freed when no longer referenced): at a million
reviews every full collection walked their ten million objects, 0.3 s in about one page render of three (#38)."""
_KEEP_REVIEWS = 2_000_000
"""...and, beyond the most recent one, at most this many reviews in all (a million reviews: a few hundred MB)."""


def kept_reviewed(db: Database, row: Mapping, policy: str = DEFAULT_POLICY) -> Reviewed:
    """`load_reviewed(db, run, policy)`, kept per process and brought up to date from the reviews added since.

    Reading every review of a run on each page render took 9 s at a million reviews (#38). Reviews are
    append-only (an undo is a new row) and ids grow, so the reviews the run sees are known by their count and
    newest id (`reviews_version`, from the stored audited state). When the newest id grew and the count grew by
    exactly the rows above the kept newest id, only the decisions of those rows are read again (all their reviews)
    and their effective labels computed again; any other change (a run deleted with the reviews it shared, a
    count that does not add up) reads everything. The result equals a full read: same reviews (in the same order:
    by each decision's first review, then its rows by creation time), same effective labels; `rows` is the same
    mapping (in another order). A database in memory is never kept."""
    file = db_file(db)
    run_id = row["id"]
    if not file:
        return load_reviewed(db, run_id, policy)
    key = (file, run_id, row["name"], row["created"], policy)
    version = reviews_version(db, run_id)
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
    if kept is not None and _newest_row(db, kept.version[1]) != kept.newest:
        kept = None  # another file at this path (a backup restored, a copy moved over it): its own history
    if kept is not None and kept.version == version:
        return kept.reviewed
    reviewed, counts = None, {}
    if kept is not None and version[1] > kept.version[1]:
        since = db.execute(_REVIEWS_SINCE, [run_id, kept.version[1]]).fetchall()
        if kept.version[0] + len(since) == version[0]:
            changed = sorted({d for d, _ in since})
            reviewed = _brought_up_to_date(db, run_id, kept.reviewed, changed)
            if reviewed is not None:  # the changed decisions' share out, their new share in
                before = [i for i in changed if i in kept.reviewed.reviews]
                for name, old in kept.counts.items():
                    was, now_ = _COUNTS[name](kept.reviewed, before), _COUNTS[name](reviewed, changed)
                    counts[name] = tuple(_moved(o, gone, new) for o, gone, new in zip(old, was, now_, strict=True))
    if reviewed is None:
        reviewed = load_reviewed(db, run_id, policy)
        if version[0] >= _FREEZE_AT:
            gc.freeze()
    with _KEPT_LOCK:
        _KEPT[key] = _Kept(version, _newest_row(db, version[1]), reviewed, counts)
        _KEPT.move_to_end(key)
        while len(_KEPT) > _KEEP_REVIEWED or (len(_KEPT) > 1 and
                                              sum(k.version[0] for k in _KEPT.values()) > _KEEP_REVIEWS):
            _KEPT.popitem(last=False)
    return reviewed


def _newest_row(db: Database, review_id: int) -> tuple | None:
    """A review row by id, as the fingerprint of the history up to it: a database file replaced at the same path
    may hold a run of the same name and creation time (a copy of one origin) whose reviews' count and newest id
    match what was kept, but not the same rows (their times are in microseconds)."""
    return db.execute("SELECT decision_id, reviewer, label, role, created FROM reviews WHERE id = ?",
                      [review_id]).fetchone() if review_id else None


def _moved(kept: Counter, gone: Counter, new: Counter) -> Counter:
    """`+(kept - gone + new)` (positive counts only) without walking `kept` twice: a copy (kept Counters are shared,
    never changed in place) moved by the changed decisions' share (100,000 documents' counts, #38)."""
    out = kept.copy()
    out.subtract(gone)
    out.update(new)
    for key in {*gone, *new}:
        if out.get(key, 0) <= 0:
            out.pop(key, None)
    return out


def reviewer_tallies(view: RunView) -> tuple[Counter, Counter, Counter]:
    """Per reviewer, over the view's reviewed decisions: decisions carrying their current label, those of them
    agreeing with the judge, and their review rows (Counters, reviewers without a row left out). Kept with the
    view's reviewed decisions (`kept_reviewed`) and brought up to date with them: a million review rows took 60 s
    of each review queue render to count (#38)."""
    return kept_counts(view, "reviewer tallies")  # type: ignore[return-value]


def kept_counts(view: RunView, name: str) -> tuple[Counter, ...]:
    """`_COUNTS[name]` of the view's reviewed decisions, kept with them (`kept_reviewed`) and brought up to date with
    them. Read-only: callers share the Counters."""
    reviewed = view.reviewed
    with _KEPT_LOCK:
        kept = next((k for k in _KEPT.values() if k.reviewed is reviewed), None)
        if kept is not None and name in kept.counts:
            return kept.counts[name]
    counts = _COUNTS[name](reviewed)
    if kept is not None:
        with _KEPT_LOCK:
            kept.counts.setdefault(name, counts)
    return counts


def _first_review(revs: Sequence[Mapping]) -> tuple:
    """The order key of a decision in `Reviewed.reviews`: its first review's (creation time, id)."""
    return revs[0]["created"], revs[0]["id"]


def _brought_up_to_date(db: Database, run_id: int, kept: Reviewed, changed: list[int]) -> Reviewed | None:
    """`kept` with the decisions `changed` read again (new dicts: `kept` may be in use); None when one of them has
    no review left (something was deleted: read everything)."""
    part = load_reviewed(db, run_id, kept.policy, changed)
    if any(i not in part.reviews for i in changed):
        return None
    reviews, rows, effective = dict(kept.reviews), dict(kept.rows), dict(kept.effective)
    last = _first_review(next(reversed(kept.reviews.values()))) if kept.reviews else None
    in_order = True
    added = []
    for i in changed:
        revs = part.reviews[i]
        if i in reviews:
            in_order &= _first_review(reviews[i]) == _first_review(revs)  # an import may bring an older review
        else:
            added.append(i)
        rows[i] = part.rows[i]
    added.sort(key=lambda i: _first_review(part.reviews[i]))
    if added and last is not None and _first_review(part.reviews[added[0]]) < last:
        in_order = False
    for i in changed:  # existing keys keep their place; new ones go last, in order
        if i in reviews:
            reviews[i], effective[i] = part.reviews[i], part.effective[i]
    for i in added:
        reviews[i], effective[i] = part.reviews[i], part.effective[i]
    if not in_order:
        order = sorted(reviews, key=lambda i: _first_review(reviews[i]))
        reviews = {i: reviews[i] for i in order}
        effective = {i: effective[i] for i in order}
    return Reviewed(kept.policy, reviews, rows, effective)


def run_decision_ids(db: Database, row: Mapping) -> array:
    """The run's decision ids in order, kept per run (`kept_per_run`): numbering 25 decisions read all 683k ids of a
    10,000-query retrieval run on every render of the review queue (2 s), and `COUNT(*)` up to an id walks the
    run's index (0.5 s each, #38)."""
    return kept_per_run(db, row, "decision ids", lambda: array("q", (r[0] for r in db.execute(
        "SELECT id FROM decisions WHERE run_id = ? ORDER BY id", [row["id"]]))))


_PER_RUN: LRUCache = LRUCache(8)


def kept_per_run(db: Database, row: Mapping, what: str, read: Callable[[], T]) -> T:
    """`read()`, kept per process for the run's decisions (`run_key`) and `what` (a few runs' worth): for what
    depends on a run's documents and decisions alone (written when it is scored, decisions only added to later),
    never on reviews. Read-only: callers share it."""
    return kept(_PER_RUN, db, (*run_key(row), what), read)


def run_document_rows(db: Database, row: Mapping) -> list[tuple]:
    """(doc id, position, original outcome, decisions) of every document of the run in input order, kept per run
    (`kept_per_run`): the overview's table read them again after each review (100,000 abstracts, #38)."""
    def read() -> list[tuple]:
        n_dec = dict(db.execute("SELECT doc_id, COUNT(*) FROM decisions WHERE run_id = ? GROUP BY doc_id",
                                [row["id"]]).fetchall())
        return [(doc, idx, outcome, n_dec.get(doc, 0)) for doc, idx, outcome in db.execute(
            "SELECT doc_id, idx, outcome FROM documents WHERE run_id = ? ORDER BY idx", [row["id"]])]
    return kept_per_run(db, row, "document rows", read)


_JUDGE_SIDE_TOTALS: LRUCache = LRUCache(256)


def judge_side_totals(db: Database, row: Mapping) -> tuple[tuple, ...]:
    """(kind, type, decisions, judge-invalid decisions) per kind and type of the run, in that order. A run's
    decisions and judge labels are written when it is scored (and added to, never changed, when a family redecides
    under reviews), so the totals are kept per process (`run_key`): the query reads the whole decisions table (4.8
    s of a Scores page render at 10,000 retrieval queries, #38)."""
    return kept(_JUDGE_SIDE_TOTALS, db, run_key(row), lambda: tuple(db.execute(
        "SELECT kind, type, COUNT(*), SUM(judge_label = 'invalid') FROM decisions WHERE run_id = ? GROUP BY kind, type "
        "ORDER BY kind, type", [row["id"]])))


RunRef = str | RunView
"""A run: its name (looked up when used) or its loaded view."""


def load_view(db: Database, run: str, policy: str = DEFAULT_POLICY) -> RunView:
    """The run's view (one run lookup). Raises UnknownRun."""
    return RunView(db, run_row(db, run), policy)


def as_view(db: Database, run: RunRef, policy: str | None = None) -> RunView:
    """`run` as a view read through `db`: a view is reused (under `policy` when given), a name is looked up."""
    if isinstance(run, RunView):
        view = run if run.db is db else run.on(db)
        return view.with_policy(policy) if policy is not None else view
    return load_view(db, run, policy or DEFAULT_POLICY)


# ---------------------------------------------------------------- the same reads for callers holding a name


def documents(db: Database, run: RunRef, policy: str | None = None) -> list[dict]:
    return as_view(db, run, policy).documents()


def document_ids(db: Database, run: RunRef) -> list[str]:
    return as_view(db, run).document_ids()


def document(db: Database, run: RunRef, doc_id: str) -> dict:
    return as_view(db, run).document(doc_id)


def decisions(db: Database, run: RunRef, doc: str | None = None, *, policy: str | None = None) -> list[dict]:
    return as_view(db, run, policy).decisions(doc)


def review_counts_by_type(db: Database, run: RunRef, policy: str | None = None) -> list[dict]:
    return as_view(db, run, policy).review_counts_by_type()


def audited_doc_counts(db: Database, run: RunRef, policy: str | None = None) -> list[tuple[str, dict]]:
    return as_view(db, run, policy).audited_doc_counts()
