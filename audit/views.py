"""The read model of a run: `RunView`, loaded once per page render or command, serves documents, decisions,
their effective labels under one policy, the audited state, and (through `as_view`) the queue, agreement,
sampling, errata and every export format.

Functions elsewhere in `audit/` take a run as `RunRef`: a run name (looked up then) or a `RunView` (no lookup).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cached_property

from sqlite_utils import Database

from audit.effective import DEFAULT_POLICY, Effective, check_policy, effective_label
from audit.errors import AuditError
from audit.rescoring import Audit, Reviewed, audit_of, doc_counts_in_order, load_reviewed, reviews_by_decision
from audit.store.database import run_row
from scoring.families import get_task
from scoring.families.base import TaskFamily


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
        """Every reviewed decision: its reviews, its row and its effective label under the view's policy."""
        return load_reviewed(self.db, self.id, self.policy)

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

    def blind_reviews(self) -> int:
        return sum(bool(r["blind"]) for revs in self.reviews.values() for r in revs)

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
        n_dec = dict(self.db.execute("SELECT doc_id, COUNT(*) FROM decisions WHERE run_id = ? GROUP BY doc_id",
                                     [self.id]).fetchall())
        n_rev = Counter(self.reviewed.rows[i]["doc_id"] for i, e in self.effective.items() if e.reviewed)
        changed = self.audit.changed_docs
        return [{"doc": r["doc_id"], "idx": r["idx"], "outcome": r["outcome"],
                 "audited_outcome": changed.get(r["doc_id"], r["outcome"]), "decisions": n_dec.get(r["doc_id"], 0),
                 "reviewed": n_rev.get(r["doc_id"], 0)}
                for r in self.db.query("SELECT doc_id, idx, outcome FROM documents WHERE run_id = ? ORDER BY idx",
                                       [self.id])]

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

    # ---------------------------------------------------------------- decisions

    def decisions(self, doc: str | None = None) -> list[dict]:
        """Decisions in id order, each with its judge label, its reviews and its effective label."""
        q = "SELECT id, doc_id, kind, type, left, right, judge_label, detail FROM decisions WHERE run_id = ?"
        args: list = [self.id]
        if doc is not None:
            q += " AND doc_id = ?"
            args.append(doc)
        reviews, effective = self.reviews, self.effective
        unreviewed: dict[str, Effective] = {}  # the judge's label: one per label, not one per decision
        out = []
        for d in self.db.execute(q + " ORDER BY id", args):
            e = effective.get(d[0])
            if e is None and d[0] not in reviews:
                e = unreviewed.get(d[6]) or unreviewed.setdefault(d[6], self.effective_of(d[6], []))
            out.append(self._decision(d, reviews.get(d[0], []), e))
        return out

    def decision_numbers(self, decision_ids: Sequence[int]) -> dict[int, int]:
        """Each decision's number within its run (1, 2, …: its rank in id order), what the pages call it; the id
        is unique across runs and grows with every run a database holds."""
        if not decision_ids:
            return {}
        if len(decision_ids) < 8:
            return {i: self.db.execute("SELECT COUNT(*) FROM decisions WHERE run_id = ? AND id <= ?",
                                       [self.id, i]).fetchone()[0] for i in decision_ids}
        rank = {r[0]: n for n, r in enumerate(
            self.db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id", [self.id]), start=1)}
        return {i: rank[i] for i in decision_ids}

    def decision_by_number(self, number: int) -> int:
        """The id of the run's decision `#number` (`decision_numbers` inverted: what the card shows, the CLI takes).

        Raises:
            KeyError: the run has fewer decisions.
        """
        row = self.db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id LIMIT 1 OFFSET ?",
                              [self.id, number - 1]).fetchone() if number >= 1 else None
        if row is None:
            raise KeyError(f"run {self.name!r} has no decision #{number} (it has {self.row['n_decisions']})")
        return row[0]

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
                "effective": e.label, "source": e.source, "human": e.human_labels, "detail": json.loads(d[7]),
                "reviews": reviews}

    def review_counts_by_type(self) -> list[dict]:
        """Per decision kind and type: decisions, reviewed, overruled, conflicted, judge-invalid."""
        out = {(k, t): {"kind": k, "type": t, "decisions": n, "reviewed": 0, "overruled": 0, "conflicted": 0,
                        "judge invalid": invalid}
               for k, t, n, invalid in judge_side_totals(self.db, self.row)}
        for i, e in self.effective.items():
            d = self.reviewed.rows[i]
            c = out[(d["kind"], d["type"])]
            c["reviewed"] += e.reviewed
            c["overruled"] += e.label != d["judge_label"]
            c["conflicted"] += e.source == "conflicted"
        return list(out.values())


_JUDGE_SIDE_TOTALS: dict[tuple, tuple[tuple, ...]] = {}


def judge_side_totals(db: Database, row: Mapping) -> tuple[tuple, ...]:
    """(kind, type, decisions, judge-invalid decisions) per kind and type of the run, in that order. A run's
    decisions and judge labels are written once, when it is scored, so the totals are kept per process for the
    database file and the run (id, name and creation time: a deleted run's id may be taken again): the query reads
    the whole decisions table (4.8 s of a Scores page render at 10,000 retrieval queries, #38)."""
    file = next((f for _, name, f in db.conn.execute("PRAGMA database_list") if name == "main"), "")
    key = (file, row["id"], row["name"], row["created"]) if file else None  # "": in memory, nothing to key on
    if key is not None and key in _JUDGE_SIDE_TOTALS:
        return _JUDGE_SIDE_TOTALS[key]
    totals = tuple(db.execute("SELECT kind, type, COUNT(*), SUM(judge_label = 'invalid') FROM decisions "
                              "WHERE run_id = ? GROUP BY kind, type ORDER BY kind, type", [row["id"]]))
    if key is not None:
        if len(_JUDGE_SIDE_TOTALS) >= 256:
            _JUDGE_SIDE_TOTALS.pop(next(iter(_JUDGE_SIDE_TOTALS)))
        _JUDGE_SIDE_TOTALS[key] = totals
    return totals


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
