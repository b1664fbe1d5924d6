"""The items a strategy learns from and K-fold cross-fitting over documents.

`cross_fit` splits the items' documents into folds (`scoring.stats.crossfit.document_folds`: ids and seed only),
then for each fold calls `fit` with the items of the OTHER folds alone and labels the fold's items with that model:
every reviewed decision is judged, for the evaluation, by a judge fitted without its document. The judge to keep is
fitted on all items. Models are JSON-ready dicts, so "the same judge" means the same JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoring.stats.crossfit import document_folds


@dataclass(frozen=True)
class Item:
    """One reviewed decision as a strategy sees it."""

    decision: int
    """The decision's id (for links and the record of what was learnt from)."""
    doc: str
    human: str
    """The effective human label (settled by humans)."""
    judge: str
    """The original judge's label."""
    features: Any = field(default=None, compare=False)
    """What the strategy reads besides the labels (a threshold strategy: the answers' scores)."""


Model = dict
Fit = Callable[[Sequence[Item]], Model]
Apply = Callable[[Model, Sequence[Item]], list[str]]


@dataclass(frozen=True)
class CrossFitted:
    folds: list[list[str]]
    """Document ids per fold."""
    fold_models: list[Model]
    """The model fitted without fold i, for each i."""
    after: dict[int, str]
    """Decision id -> its label from the model fitted without its document."""
    full_model: Model
    """Fitted on every item: the judge to keep."""


def cross_fit(items: Sequence[Item], fit: Fit, apply: Apply, *, k: int, seed: int) -> CrossFitted:
    """Fit K times, each without one fold of documents, and label each fold with the model that never saw it.

    Raises:
        ValueError: fewer documents than folds, or k < 2.
    """
    folds = document_folds([i.doc for i in items], k, seed)
    models, after = [], {}
    for fold in folds:
        held = set(fold)
        fitted = fit([i for i in items if i.doc not in held])
        test = [i for i in items if i.doc in held]
        after.update(zip((i.decision for i in test), apply(fitted, test), strict=True))
        models.append(fitted)
    return CrossFitted(folds, models, after, fit(list(items)))


def refit_deltas(items: Sequence[Item], fit: Fit, apply: Apply, folds: Sequence[Sequence[str]],
                 kappa_change: Callable[[Sequence[Item], Sequence[str]], float | None], *, n_resamples: int,
                 seed: int) -> list[float | None]:
    """The change in kappa over bootstrap resamples of documents with the WHOLE procedure re-run in each: draw the
    documents with replacement (a document drawn twice brings its decisions twice), keep each document in its fold,
    fit each fold's judge on the resample's other folds and label the fold with it, then `kappa_change(resampled
    items, their cross-fitted labels)`. Holding the cross-fitted judges fixed instead ignores how the fit moves with
    the fitting documents' labels, and claims too often when there is nothing to find (tests/stats)."""
    by_doc: dict[str, list[Item]] = {}
    for i in items:
        by_doc.setdefault(i.doc, []).append(i)
    docs = sorted(by_doc)
    fold_of = {d: f for f, fold in enumerate(folds) for d in fold}
    rng = np.random.default_rng(seed)
    out: list[float | None] = []
    for _ in range(n_resamples):
        drawn = [docs[j] for j in np.sort(rng.integers(len(docs), size=len(docs)))]
        resample = [i for d in drawn for i in by_doc[d]]
        labels: list[str] = [""] * len(resample)
        for f in range(len(folds)):
            test = [n for n, i in enumerate(resample) if fold_of[i.doc] == f]
            if not test:
                continue
            model = fit([i for i in resample if fold_of[i.doc] != f])
            for n, lab in zip(test, apply(model, [resample[n] for n in test]), strict=True):
                labels[n] = lab
        out.append(kappa_change(resample, labels))
    return out
