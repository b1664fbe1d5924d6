"""`estimate` for a run whose judge was improved on the run's own reviews (issue #37 §2): reusing the reviews that
trained the judge to correct it makes the interval too narrow, so the estimate switches to the cross-fitted one
(`scoring.stats.crossfit.cross_fitted_totals`): each reviewed document is judged by the fold judge fitted without
it, every other document by the folds' average. A threshold judge's fold judges are re-asked here (local and
instant); an LLM-improved judge's were asked by `score` and their labels stored (`audit.outputs.fold_labels`);
without them (`score --no-fold-answers`) the estimate says its interval is too narrow.
"""

from __future__ import annotations

import zlib
from collections.abc import Collection, Mapping, Sequence

import numpy as np

from audit.review.count_vectors import flatten
from audit.store.fold_labels import stored_fold_labels
from audit.views import RunView


def crossfit_setup(view: RunView, sampled_docs: Collection[str]) -> dict | None:
    """None when the run's judge learnt from none of the documents this run's estimate counts as sampled (the
    plain difference estimator is then valid: documents reviewed by hand are counted exactly, and the sample's
    residuals come from documents the judge never saw); else {"folds": [{"spec" or "labels", "held_out_documents"}],
    "learnt_from": ...} when it can be cross-fitted (`labels`: the fold judge's stored label per decision id), or
    {"unavailable": why}."""
    learnt = (view.row.get("judge_identity") or {}).get("learnt_from")
    if not isinstance(learnt, dict) or not set(learnt.get("documents") or []) & set(sampled_docs):
        return None
    folds = learnt.get("fold_judges")
    if not folds:
        stored, split = stored_fold_labels(view.db, view.id), learnt.get("split") or []
        if stored and len(stored) == len(split):
            return {"folds": [{"labels": stored[k], "held_out_documents": f} for k, f in enumerate(split)],
                    "learnt_from": learnt}
        return {"unavailable": f"the judge was improved ({learnt.get('strategy')}) on documents this run's sample "
                               "counts, but its fold judges were not asked on this run (scored with "
                               "--no-fold-answers, or before score asked them): this estimate reuses those "
                               "reviews and its interval is too narrow"}
    return {"folds": folds, "learnt_from": learnt}


def fold_vectors(view: RunView, setup: Mapping, paths: list[tuple], docs: Sequence[str]) -> dict[str, list[np.ndarray]]:
    """Every document's judge-only count vector (of the family's `sampling_counts`) under each fold judge of a
    cross-fittable `setup`: re-asked (a threshold judge) or from the labels stored when the run was scored (an
    LLM-improved judge)."""
    folds = setup["folds"]
    if all("labels" in f for f in folds):
        return stored_fold_vectors(view, [f["labels"] for f in folds], paths, docs)
    return fold_judge_vectors(view, [f["spec"] for f in folds], paths, docs)


def stored_fold_vectors(view: RunView, labels: Sequence[Mapping[int, str]], paths: list[tuple],
                        docs: Sequence[str]) -> dict[str, list[np.ndarray]]:
    """As `fold_judge_vectors`, each fold judge's label of a decision read from `labels` (decision id -> label; a
    decision it was not asked keeps the stored label), so the binary labels average to a fraction per count."""
    task = view.task
    out: dict[str, list[np.ndarray]] = {}
    for doc in docs:
        payload = view.document(doc)["payload"]
        decisions = view.decisions(doc)
        out[doc] = [flatten(task.sampling_counts(task.counts(payload, {(d["kind"], d["type"], d["left"], d["right"]):
                                                                       fold.get(d["id"], d["judge"])
                                                                       for d in decisions})), paths)
                    for fold in labels]
    return out


def fold_of_documents(folds: Sequence[Mapping], docs: Sequence[str]) -> dict[str, int]:
    """Each document's fold: the fold that held it out, or for a document the judge never learnt from (any fold
    judge is out of sample for it) a fold from a hash of its id."""
    held = {d: k for k, f in enumerate(folds) for d in f["held_out_documents"]}
    return {d: held.get(d, zlib.crc32(d.encode()) % len(folds)) for d in docs}


def fold_judge_vectors(view: RunView, specs: Sequence[str], paths: list[tuple],
                       docs: Sequence[str]) -> dict[str, list[np.ndarray]]:
    """Every document's judge-only count vector under each fold judge: its decisions' questions asked again
    (the family's rule turns answers into a label; a decision without questions keeps the stored label)."""
    task = view.task
    judges = [task.make_judge(s) for s in specs]
    out: dict[str, list[np.ndarray]] = {}
    for doc in docs:
        payload = view.document(doc)["payload"]
        decisions = view.decisions(doc)
        asked = [(d, task.questions_for(payload, d)) for d in decisions]
        vectors = []
        for judge in judges:
            labels = {}
            for d, qs in asked:
                label = d["judge"]
                if qs:
                    label = task.label_from_answers(d, [a.value for a in judge.ask_many(qs)]) or label
                labels[(d["kind"], d["type"], d["left"], d["right"])] = label
            vectors.append(flatten(task.sampling_counts(task.counts(payload, labels)), paths))
        out[doc] = vectors
    return out


def crossfit_text(setup: Mapping) -> str:
    learnt = setup["learnt_from"]
    return (f"cross-fitted estimate: the judge was improved ({learnt.get('strategy')}, seed {learnt.get('seed')}, "
            f"{len(setup['folds'])} folds) on reviews this run counts, so each reviewed document is judged by the "
            "fold judge that never saw it and every other document by the folds' average (Zrnic & Candès 2024)")
