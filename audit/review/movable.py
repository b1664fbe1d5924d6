"""Which counts a review can move in each document, judge side only: what `scoring.stats.difference.unseen_moves`
reads to give a count the sample never saw move a variance (docs/board.md, "Counts the sample never saw move"). The
single-run estimate and the board's both read it from here."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

import numpy as np
from cachetools import LRUCache
from sqlite_utils import Database

from audit.review.count_vectors import moved_leaves
from audit.store.database import query_in
from audit.store.kept import kept, run_key
from audit.views import RunView
from scoring.families.base import TaskFamily
from scoring.stats.sampling import Plan

_MOVABLE: LRUCache = LRUCache(8)

RECOUNTED_PER_STRATUM = 100
"""Documents of each sampled stratum whose movable counts the single-run estimate recounts (the first in the plan's
seeded order, a simple random sample of the stratum, besides every sampled document): `unseen_moves` reads the share
of a stratum's documents where a count can move, and a recount costs 0.3-2.3 ms a document (CHIMERA, retrieval,
ideation): every document of 100,000 abstracts would take 30 s, against `queue --next`'s goal of 1 s; at 200
per stratum `queue --next` on 10,000 retrieval queries took 0.64 s more CPU (1.09 -> 1.73 s)."""


def leaves_a_review_can_move(task: TaskFamily, payload: Mapping, keys: Iterable[tuple], judge: Mapping, *,
                             sampling: bool = False, judge_labels: Mapping[tuple, str] | None = None) -> set[tuple]:
    """The count paths at which the document, recounted with every decision in `keys` given each label of its kind's
    scheme in turn (all `match`, all `no-match`, ...), differs from its judge counts `judge`. `keys`: (kind, type,
    left, right) of the decisions a review may label; `judge_labels`: their judge labels, when known, so that a
    labelling equal to the judge's is not recounted (it gives the judge's counts: retrieval's all `not-acceptable`).
    `sampling`: paths of `task.sampling_counts` (what the single-run estimate reads), else of the counts as stored
    (what a board reads). None for a family that declares no unit moves (`TaskFamily.sampling_unseen_moves`)."""
    keys = list(keys)
    if not keys or not task.sampling_unseen_moves:
        return set()
    as_read = task.sampling_counts if sampling else (lambda c: c)
    schemes = {k: task.label_schemes[k[0]].labels for k in keys}
    base = as_read(judge)
    leaves: set[tuple] = set()
    for i in range(max(len(labels) for labels in schemes.values())):
        labelling = {k: labels[min(i, len(labels) - 1)] for k, labels in schemes.items()}
        if judge_labels is not None and all(judge_labels.get(k) == v for k, v in labelling.items()):
            continue
        leaves |= moved_leaves(as_read(task.counts(payload, labelling)), base)
    return leaves


def documents_to_recount(plan: Plan, sampled: Collection[str]) -> set[str]:
    """The documents whose movable counts `unseen_moves` needs: every sampled one (its moves are compared with what
    it can move) and the first `RECOUNTED_PER_STRATUM` of each stratum still sampled (the share where a count can
    move)."""
    out = set(sampled)
    for h, blocks in plan.strata().items():
        if h not in plan.take_all:
            out.update(b.id for b in sorted(blocks, key=lambda b: b.rank)[:RECOUNTED_PER_STRATUM])
    return out


def movable_leaves(db: Database, task: TaskFamily, run_id: int, kind: str | None = None, *, sampling: bool = False,
                   docs: Sequence[str] | None = None) -> Iterator[tuple[str, set[tuple]]]:
    """(doc id, `leaves_a_review_can_move`) for each of the run's documents (or of `docs`) with decisions (of
    `kind`, or of any kind); nothing for a family that declares no unit moves (`TaskFamily.sampling_unseen_moves`)."""
    if not task.sampling_unseen_moves:
        return
    run = f"run_id = {int(run_id)}"
    if docs is None:
        decision_rows = db.query(f"SELECT doc_id, kind, type, left, right, judge_label FROM decisions WHERE {run}")
        document_rows = db.query(f"SELECT doc_id, payload, counts FROM documents WHERE {run}")
    else:
        decision_rows = query_in(db, f"SELECT doc_id, kind, type, left, right, judge_label FROM decisions WHERE {run} "
                                     "AND doc_id IN ({marks})", list(docs))
        document_rows = query_in(db, f"SELECT doc_id, payload, counts FROM documents WHERE {run} "
                                     "AND doc_id IN ({marks})", list(docs))
    decisions: dict[str, dict[tuple, str]] = {}
    for r in decision_rows:
        if kind is None or r["kind"] == kind:
            decisions.setdefault(r["doc_id"], {})[(r["kind"], r["type"], r["left"], r["right"])] = r["judge_label"]
    judged: dict[str, dict] = {}  # stored counts text -> decoded: documents share a few (81-87 in 10,000 abstracts)
    for r in document_rows:
        keys = decisions.get(r["doc_id"])
        if not keys:
            continue
        judge = judged.get(r["counts"])
        if judge is None:
            judge = judged[r["counts"]] = json.loads(r["counts"])
        yield r["doc_id"], leaves_a_review_can_move(task, json.loads(r["payload"]), keys, judge, sampling=sampling,
                                                    judge_labels=keys)


def path_mask(paths: list[tuple]):
    """leaf paths -> a boolean vector over `paths` (True wherever a path in them stands, also a repeated one)."""
    where: dict[tuple, list[int]] = {}
    for i, p in enumerate(paths):
        where.setdefault(tuple(p), []).append(i)

    def mask(leaves) -> np.ndarray:
        out = np.zeros(len(paths), dtype=bool)
        for p in leaves:
            out[where.get(p, [])] = True
        return out
    return mask


def movable_vectors(view: RunView, paths: list[tuple], kind: str | None = None, *, sampling: bool = False,
                    docs: Collection[str] | None = None) -> dict[str, np.ndarray]:
    """doc id -> which counts along `paths` a review of its decisions (of `kind`, or of any kind) can move
    (`movable_leaves`; none where it has no such decision), for every document of the run or for `docs`. Each
    document is recounted once per process, database file, run, paths, kind and `sampling`, as the judge vectors
    are kept."""
    known: dict[str, np.ndarray] = kept(_MOVABLE, view.db, (*run_key(view.row), tuple(paths), kind, sampling), dict)
    every = docs is None
    if docs is None:
        docs = [d for d, in view.db.execute("SELECT doc_id FROM documents WHERE run_id = ?", [view.id])]
    missing = [d for d in docs if d not in known]
    if missing:
        mask = path_mask(paths)
        found = {doc: mask(leaves) for doc, leaves in movable_leaves(
            view.db, view.task, view.id, kind, sampling=sampling,
            docs=None if every and len(missing) == len(docs) else missing)}
        nothing = mask(())
        for d in missing:
            v = found.get(d, nothing)
            v.setflags(write=False)  # shared by every reader of the kept recount
            known[d] = v
    return {d: known[d] for d in docs}
