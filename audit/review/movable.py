"""Which counts a review can move in each document, judge side only: what `scoring.stats.difference.unseen_moves`
reads to give a count the sample never saw move a variance (docs/board.md, "Counts the sample never saw move"). The
single-run estimate and the board's both read it from here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping

import numpy as np
from cachetools import LRUCache
from sqlite_utils import Database

from audit.review.count_vectors import moved_leaves
from audit.store.kept import kept, run_key
from audit.views import RunView
from scoring.families.base import TaskFamily

_MOVABLE: LRUCache = LRUCache(8)


def leaves_a_review_can_move(task: TaskFamily, payload: Mapping, keys: Iterable[tuple], judge: Mapping, *,
                             sampling: bool = False) -> set[tuple]:
    """The count paths at which the document, recounted with every decision in `keys` given each label of its kind's
    scheme in turn (all `match`, all `no-match`, ...), differs from its judge counts `judge`. `keys`: (kind, type,
    left, right) of the decisions a review may label. `sampling`: paths of `task.sampling_counts` (what the
    single-run estimate reads), else of the counts as stored (what a board reads)."""
    keys = list(keys)
    if not keys:
        return set()
    as_read = task.sampling_counts if sampling else (lambda c: c)
    schemes = {k: task.label_schemes[k[0]].labels for k in keys}
    base = as_read(judge)
    leaves: set[tuple] = set()
    for i in range(max(len(labels) for labels in schemes.values())):
        recount = task.counts(payload, {k: labels[min(i, len(labels) - 1)] for k, labels in schemes.items()})
        leaves |= moved_leaves(as_read(recount), base)
    return leaves


def movable_leaves(db: Database, task: TaskFamily, run_id: int, kind: str | None = None, *, sampling: bool = False
                   ) -> Iterator[tuple[str, set[tuple]]]:
    """(doc id, `leaves_a_review_can_move`) for each of the run's documents with decisions (of `kind`, or of any
    kind)."""
    decisions: dict[str, list[tuple]] = {}
    where, args = ("run_id = ?", [run_id]) if kind is None else ("run_id = ? AND kind = ?", [run_id, kind])
    for doc, k, typ, left, right in db.execute(
            f"SELECT doc_id, kind, type, left, right FROM decisions WHERE {where}", args):
        decisions.setdefault(doc, []).append((k, typ, left, right))
    judged: dict[str, dict] = {}  # stored counts text -> decoded: documents share a few (81-87 in 10,000 abstracts)
    for doc, payload, counts in db.execute("SELECT doc_id, payload, counts FROM documents WHERE run_id = ?",
                                           [run_id]):
        keys = decisions.get(doc)
        if not keys:
            continue
        judge = judged.get(counts)
        if judge is None:
            judge = judged[counts] = json.loads(counts)
        yield doc, leaves_a_review_can_move(task, json.loads(payload), keys, judge, sampling=sampling)


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


def movable_vectors(view: RunView, paths: list[tuple], kind: str | None = None, *, sampling: bool = False
                    ) -> dict[str, np.ndarray]:
    """doc id -> which counts along `paths` a review of its decisions (of `kind`, or of any kind) can move
    (`movable_leaves`), every document of the run (none where it has no such decision); kept per database file,
    run, paths, kind and `sampling`, as the judge vectors are."""
    def read() -> dict[str, np.ndarray]:
        mask = path_mask(paths)
        nothing = mask(())
        nothing.setflags(write=False)
        out = {doc: nothing for doc, in view.db.execute("SELECT doc_id FROM documents WHERE run_id = ?", [view.id])}
        for doc, leaves in movable_leaves(view.db, view.task, view.id, kind, sampling=sampling):
            out[doc] = mask(leaves)
        return out
    return kept(_MOVABLE, view.db, (*run_key(view.row), tuple(paths), kind, sampling), read)
