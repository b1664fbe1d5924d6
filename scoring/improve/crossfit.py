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
