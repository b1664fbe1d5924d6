"""Assigned review: the owner distributes a run's sampled documents among named reviewers (tables
`review_assignments` and `review_shares`, m012).

- The universe is the run's sampling plan (the all-kinds plan, in the order the sample queue serves it: take-all
  strata first, then the seeded random rank), cut to its first `documents` blocks when a sample size is given (a
  prefix of that order is a prefix of every stratum's random order, so a finished share is an honest sample).
  Without a plan: every document with a decision, in the run's order (no sample size then).
- Shares are documents, not single decisions: a reviewer settles a document's decisions together, and a sampled
  block enters the estimate only once all its decisions are labelled.
- A seeded random subset of those documents is double-coded: each of its documents goes to `min_reviewers`
  distinct reviewers (Argilla's minimum submitted per record), every other document to one. Reviewers take the
  documents in turn around a seeded order of their names, so shares (in documents) differ by at most one.
- The distribution is stored when set (a plan made later moves nobody's share); setting again replaces it.
- A share holds every decision of its documents, the certain ones (the family's `trivial`: CHIMERA's identical
  strings) included, and that one rule (`_shared_decisions`) is what the queue serves (`share_queue_ids`: no
  "skip decisions whose answer is certain" inside a share), what `share_progress` counts, what the CLI's summary
  and the owner's form show, and what the Agreement page's planned overlap counts. Leaving certain decisions out
  instead would make a finished share leave its documents incomplete, and the sampled estimate counts a document
  only once all its decisions are labelled; agreement reports trivial decisions apart anyway.

Who may set it is `audit.review.roles`' decision (action `edit_assignments`); the CLI is trusted, like every CLI write.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlite_utils import Database

from audit.errors import AuditError
from audit.review.identity import reviewer_key
from audit.review.queue import queue_ids
from audit.review.reviews import check_reviewer, reviewer_labels
from audit.review.sampling import load_plan
from audit.store.database import now, run_row, transaction
from audit.store.limits import check_seed
from audit.views import RunRef
from scoring.nouns import Noun

MAX_REVIEWERS = 200


@dataclass(frozen=True)
class DoubleCode:
    """Which part of the planned documents is double-coded: a fraction of them, or a count of documents."""

    fraction: float | None = None
    count: int | None = None

    def size(self, n_documents: int) -> int:
        """How many of `n_documents` are double-coded (a fraction rounds half up).

        >>> DoubleCode(fraction=0.25).size(10), DoubleCode(count=3).size(10), DoubleCode().size(10)
        (3, 3, 0)
        """
        if self.count is not None:
            return self.count
        return math.floor((self.fraction or 0.0) * n_documents + 0.5)

    def to_json(self) -> dict:
        return {"fraction": self.fraction} if self.count is None else {"count": self.count}

    @staticmethod
    def parse(text: str) -> DoubleCode:
        """`0.2` or `20%` (a fraction), `15` (a count of documents).

        >>> [d.to_json() for d in (DoubleCode.parse("20%"), DoubleCode.parse("0.2"), DoubleCode.parse("15"))]
        [{'fraction': 0.2}, {'fraction': 0.2}, {'count': 15}]

        Raises:
            AuditError: neither a fraction from 0 to 1 nor a whole number of documents.
        """
        t = str(text).strip()
        try:
            if t.endswith("%"):
                value = float(t[:-1]) / 100
            elif t.isdigit():
                return DoubleCode(count=int(t))
            else:
                value = float(t)
        except ValueError:
            value = float("nan")
        if not 0 <= value <= 1:  # also refuses nan
            raise AuditError(f"the double-coded subset must be a fraction from 0 to 1 (0.2, 20%) or a whole number "
                             f"of documents (15), got {t[:40]!r}")
        return DoubleCode(fraction=value)


def distribute(documents: Sequence[str], reviewers: Sequence[str], *, min_reviewers: int, n_double: int,
               seed: int) -> dict[str, tuple[tuple[str, ...], bool]]:
    """document -> (its reviewers, whether it is double-coded): `n_double` documents drawn with `seed` get
    `min_reviewers` distinct reviewers, the others one; reviewers take them in turn around a seeded order, so each
    reviewer's count of documents is within one of every other's.

    >>> out = distribute(["d1", "d2", "d3"], ["ana", "bo"], min_reviewers=2, n_double=1, seed=0)
    >>> sorted(len(who) for who, _ in out.values()), sum(double for _, double in out.values())
    ([1, 1, 2], 1)
    """
    if not reviewers:
        raise AuditError("an assignment needs at least one reviewer")
    if n_double and not 2 <= min_reviewers <= len(reviewers):
        raise AuditError(f"a double-coded document needs from 2 to {len(reviewers)} (the reviewers named) reviewers, "
                         f"got {min_reviewers}")
    rng = random.Random(seed)
    double = set(rng.sample(range(len(documents)), n_double))
    order = sorted(reviewers)
    rng.shuffle(order)
    out: dict[str, tuple[tuple[str, ...], bool]] = {}
    turn = 0
    for i, doc in enumerate(documents):
        k = min_reviewers if i in double else 1
        out[doc] = (tuple(order[(turn + j) % len(order)] for j in range(k)), i in double)
        turn = (turn + k) % len(order)
    return out


def _universe(db: Database, run: str, documents: int | None) -> tuple[list[str], str]:
    """The documents to distribute, in serving order, and what they are (for the summary)."""

    plan = load_plan(db, run)
    if plan is None:
        if documents is not None:
            raise AuditError(f"run {run!r} has no sampling plan, so there is no sample to cut to {documents} "
                             f"documents; create one first (`python -m audit plan --run {run}`) or assign every "
                             "document")
        docs = [r[0] for r in db.execute(
            "SELECT d.doc_id FROM documents d WHERE d.run_id = ? AND EXISTS (SELECT 1 FROM decisions x WHERE "
            "x.run_id = d.run_id AND x.doc_id = d.doc_id) ORDER BY d.idx", [run_row(db, run)["id"]])]
        return docs, "every document with a decision, in the run's order (no sampling plan)"
    blocks = [b.id for b in plan.serving_order()]
    if documents is None:
        return blocks, "the sampling plan's documents, in the order the sample queue serves them"
    if isinstance(documents, bool) or not isinstance(documents, int) or not 0 < documents <= len(blocks):
        raise AuditError(f"the sample size must be a whole number of documents from 1 to {len(blocks)} (the plan's "
                         f"documents), got {documents!r}")
    return blocks[:documents], (f"the first {documents} of the sampling plan's {len(blocks)} documents, in the order "
                                "the sample queue serves them")


def set_review_assignment(db: Database, run: str, reviewers: Sequence[str], *, min_reviewers: int = 2,
                          double_code: DoubleCode = DoubleCode(), documents: int | None = None, seed: int = 0,
                          set_by: str) -> dict:
    """Store the run's assigned review (replacing any earlier one) and its distribution; returns its summary.

    Raises:
        UnknownRun; AuditError: no reviewer, a bad name, a double-coded subset larger than the documents or with
            fewer than 2 (or more than the named) reviewers, a bad seed or sample size.
    """
    row = run_row(db, run)
    names = list(dict.fromkeys(reviewer_key(check_reviewer(r)) for r in reviewers if str(r).strip()))
    if not names or len(names) > MAX_REVIEWERS:
        raise AuditError(f"an assignment names from 1 to {MAX_REVIEWERS} reviewers (their e-mail addresses in team "
                         f"mode), got {len(names)}")
    if isinstance(min_reviewers, bool) or not isinstance(min_reviewers, int) or not 1 <= min_reviewers <= MAX_REVIEWERS:
        raise AuditError(f"min reviewers must be a whole number from 1 to {MAX_REVIEWERS}, got "
                         f"{str(min_reviewers)[:40]}")
    check_seed(seed)
    docs, universe = _universe(db, run, documents)
    n_double = double_code.size(len(docs))
    if n_double > len(docs):
        raise AuditError(f"cannot double-code {n_double} documents: the assignment has {len(docs)}")
    shares = distribute(docs, names, min_reviewers=min_reviewers, n_double=n_double, seed=seed)
    with transaction(db):
        db.execute("DELETE FROM review_shares WHERE run_id = ?", [row["id"]])
        db.execute("INSERT INTO review_assignments (run_id, reviewers, min_reviewers, double_code, documents, seed, "
                   "universe, set_by, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET "
                   "reviewers = excluded.reviewers, min_reviewers = excluded.min_reviewers, double_code = "
                   "excluded.double_code, documents = excluded.documents, seed = excluded.seed, universe = "
                   "excluded.universe, set_by = excluded.set_by, updated = excluded.updated",
                   [row["id"], json.dumps(names), min_reviewers, json.dumps(double_code.to_json()), documents, seed,
                    universe, set_by, now()])
        db.conn.executemany("INSERT INTO review_shares (run_id, doc_id, reviewer, double_coded, position) VALUES "
                            "(?, ?, ?, ?, ?)", [(row["id"], doc, who, int(shares[doc][1]), pos)
                                                for pos, doc in enumerate(docs) for who in shares[doc][0]])
    return review_assignment(db, run) or {}


def clear_review_assignment(db: Database, run: str) -> bool:
    """Remove the run's assigned review (reviews stay); whether there was one."""
    run_id = run_row(db, run)["id"]
    with transaction(db):
        db.execute("DELETE FROM review_shares WHERE run_id = ?", [run_id])
        gone = db.execute("DELETE FROM review_assignments WHERE run_id = ?", [run_id]).rowcount
    return bool(gone)


def _settings(db: Database, run: str) -> tuple | None:
    return db.execute("SELECT a.run_id, a.reviewers, a.min_reviewers, a.double_code, a.documents, a.seed, a.universe, "
                      "a.set_by, a.updated FROM review_assignments a JOIN runs r ON r.id = a.run_id WHERE r.name = ?",
                      [run]).fetchone()


def assignment_stamp(db: Database, run: str) -> str | None:
    """When the run's assignment was last set (None: no assignment), for caches keyed on it."""
    found = _settings(db, run)
    return found[8] if found else None


def review_assignment(db: Database, run: str) -> dict | None:
    """The run's assigned review (None: none): its settings, the planned documents and decisions, the double-coded
    ones, and each reviewer's share in documents and decisions."""
    found = _settings(db, run)
    if found is None:
        return None
    run_id, reviewers, min_reviewers, double_code, documents, seed, universe, set_by, updated = found
    docs: dict[str, dict[str, set]] = {who: {"documents": set(), "decisions": set()} for who in json.loads(reviewers)}
    planned: dict[int, str] = {}
    double: set[int] = set()
    for dec_id, doc, who, dbl in _shared_decisions(db, run_id):
        share = docs.setdefault(who, {"documents": set(), "decisions": set()})
        share["documents"].add(doc)
        share["decisions"].add(dec_id)
        planned[dec_id] = doc
        if dbl:
            double.add(dec_id)
    planned_docs = {r[0]: bool(r[1]) for r in db.execute("SELECT doc_id, MAX(double_coded) FROM review_shares "
                                                          "WHERE run_id = ? GROUP BY doc_id", [run_id])}
    shares = {who: {"documents": len(s["documents"]), "decisions": len(s["decisions"])} for who, s in docs.items()}
    return {"reviewers": json.loads(reviewers), "min_reviewers": min_reviewers,
            "double_code": json.loads(double_code), "sample_documents": documents, "seed": seed,
            "universe": universe, "set_by": set_by, "updated": updated,
            "planned_documents": len(planned_docs), "planned_decisions": len(planned),
            "double_coded_documents": sum(planned_docs.values()), "double_coded_decisions": len(double),
            "shares": shares}


def _shared_decisions(db: Database, run_id: int, reviewer: str | None = None) -> list[tuple[int, str, str, bool]]:
    """`(decision id, document, reviewer, double-coded)` of the run's shares (of `reviewer`'s only, when given), in
    serving order: what a share holds, every decision of its documents, certain ones included (the module's rule;
    every reader of a share goes through here)."""
    q = ("SELECT d.id, s.doc_id, s.reviewer, s.double_coded FROM review_shares s JOIN decisions d ON d.run_id = "
         "s.run_id AND d.doc_id = s.doc_id WHERE s.run_id = ?")
    args: list = [run_id]
    if reviewer is not None:
        q += " AND s.reviewer = ?"
        args.append(reviewer_key(reviewer, strict=False))
    return [(i, doc, who, bool(dbl)) for i, doc, who, dbl in db.execute(q + " ORDER BY s.position, d.id, s.reviewer",
                                                                         args)]


def share_of(db: Database, run: str, reviewer: str) -> list[int] | None:
    """The decision ids of `reviewer`'s share, in the order their documents are served (None: the run has no
    assignment; [] : it names someone else only)."""
    found = _settings(db, run)
    if found is None:
        return None
    return [r[0] for r in _shared_decisions(db, found[0], reviewer or "")]


def share_queue_ids(db: Database, run: RunRef, reviewer: str, mode: str, share: Sequence[int] | None, *,
                    types: Iterable[str] = (), judge_labels: Iterable[str] = (), doc: str = "",
                    skip_trivial: bool = False, blind: bool = False, adjudicator: bool = False,
                    suggested: Sequence[int] = ()) -> list[int]:
    """The review queue's decision ids (`audit.review.queue.queue_ids`) cut to `share` (None: not cut). Inside a share
    `skip_trivial` does not apply: the share's certain decisions are served like the others (the module's rule),
    so a reviewer who labels everything their queue serves finishes the share `share_progress` counts."""

    ids = queue_ids(db, run, reviewer, mode, types=types, judge_labels=judge_labels, doc=doc,
                    skip_trivial=skip_trivial and share is None, blind=blind, share=share or (),
                    adjudicator=adjudicator, suggested=suggested)
    if share is None:
        return ids
    mine = set(share)
    return [i for i in ids if i in mine]



def double_coded_plan(db: Database, run: str) -> dict | None:
    """The planned double-coded subset: `{"decisions": set of ids, "documents": n, "min_reviewers": k}` (None: no
    assignment)."""
    found = _settings(db, run)
    if found is None:
        return None
    rows = [(i, doc) for i, doc, _, double in _shared_decisions(db, found[0]) if double]
    return {"decisions": {r[0] for r in rows}, "documents": len({r[1] for r in rows}), "min_reviewers": found[2]}


def share_progress(db: Database, run: str, reviewer: str) -> dict | None:
    """`{"done", "of", "documents"}`: decisions of `reviewer`'s share carrying their current label, of how many, in
    how many documents (None: the run has no assignment)."""
    share = share_of(db, run, reviewer)
    if share is None:
        return None
    done = len(set(share) & set(reviewer_labels(db, run, reviewer)))
    docs = {r[0] for r in db.execute("SELECT doc_id FROM review_shares s JOIN runs r ON r.id = s.run_id "
                                     "WHERE r.name = ? AND s.reviewer = ?",
                                     [run, reviewer_key(reviewer or "", strict=False)])}
    return {"done": done, "of": len(share), "documents": len(docs)}


def planned_overlap_text(overlap: Mapping) -> str:
    """`audit.outputs.agreement.planned_overlap` in one sentence, as the Agreement page and the report say it.

    >>> planned_overlap_text({"double_coded": 3, "planned_decisions": 5, "planned_documents": 2,
    ...                       "min_reviewers": 2})[-78:]
    'by 2 reviewers each, the others by one; 3 of the 5 have their 2 labels so far.'
    """
    planned, k = overlap["planned_decisions"], overlap["min_reviewers"]
    if not planned:
        return ("Assigned review: no decision is planned to be double-coded (each goes to one reviewer), so any "
                "human-human overlap is accidental.")
    done = overlap["double_coded"]
    if planned == 1:
        so_far = f"it has its {k} labels so far." if done else f"it does not have its {k} labels yet."
    else:
        so_far = f"{done} of the {planned} have their {k} labels so far."
    docs = Noun("document").count(overlap["planned_documents"])
    every = overlap.get("double_coded_all_reviews", done)
    if every > done and overlap.get("reviews_used") == "blind":  # say what the sighted labels add
        so_far = so_far[:-1] + (f" in blind reviews, {every} counting every review (agreement reads only blind "
                                "reviews while the run has any).")
    return (f"Assigned review: {Noun('decision').count(planned)} ({docs}) {'is' if planned == 1 else 'are'} planned "
            f"to be double-coded, by {k} reviewers each, the others by one; {so_far}")
