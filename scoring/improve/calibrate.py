"""The `calibrate` strategy for ordinal ratings: an isotonic (monotone non-decreasing) map from the judge's rating to
the humans' (one per criterion), fitted on the fitting documents over the scale's positions, each fitted value rounded
to the nearest point of the scale. The fit is scikit-learn's `IsotonicRegression(increasing=True,
out_of_bounds="clip")` (tests/stats/test_improve_core.py holds it to that estimator on random inputs), done with
SciPy's `isotonic_regression` on the mean human position at each judge position: the bootstrap of
`scoring.improve.crossfit.refit_deltas` refits it a thousand times per fold, and the estimator's own checks made
`improve-judge --strategy calibrate` on the bundled ideation review take 10.6 s (3.4 s this way). A judge that rates
one point too high everywhere comes out shifted down; the order of its ratings is never reversed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import isotonic_regression

from scoring.improve.crossfit import Item, Model


def fit_calibration(items: Sequence[Item], scale: Sequence[str]) -> Model:
    """`{"maps": {group: {judge label: calibrated label}}, "n_fit"}`: one map per group (an item's `features`, e.g.
    the criterion a rating is on; None is the group ""), each over every label of `scale` (in order).

    >>> from scoring.improve.crossfit import Item
    >>> items = [Item(i, "d", str(min(5, r)), str(r - 1), "novelty") for i, r in enumerate([2, 3, 3, 4, 5, 5])]
    >>> fit_calibration(items, ["1", "2", "3", "4", "5"])["maps"]
    {'novelty': {'1': '2', '2': '3', '3': '4', '4': '5', '5': '5'}}
    """
    groups: dict[str, list[Item]] = {}
    for i in items:
        groups.setdefault(_group(i), []).append(i)
    return {"maps": {g: _isotonic_map(part, scale) for g, part in sorted(groups.items())}, "n_fit": len(items)}


def _group(item: Item) -> str:
    return "" if item.features is None else str(item.features)


def _isotonic_map(items: Sequence[Item], scale: Sequence[str]) -> dict[str, str]:
    """The judge label -> calibrated label map of one group."""
    position = {lab: i for i, lab in enumerate(scale)}
    x = np.fromiter((position[i.judge] for i in items), dtype=np.intp, count=len(items))
    y = np.fromiter((position[i.human] for i in items), dtype=float, count=len(items))
    # ties in the judge's position pool first (the estimator's `_make_unique`): their mean, weighted by their count
    counts = np.bincount(x, minlength=len(scale))
    at = np.flatnonzero(counts)
    means = np.bincount(x, weights=y, minlength=len(scale))[at] / counts[at]
    fitted_at = isotonic_regression(means, weights=counts[at].astype(float), increasing=True).x
    # between the judge's positions: linear, as the estimator's `predict`; outside them: the nearest one ("clip")
    fitted = np.interp(np.arange(len(scale), dtype=float), at.astype(float), fitted_at)
    # half-way values go up (np.rint would round them to even, so 1.5 and 2.5 would part ways)
    return {lab: scale[int(np.floor(v + 0.5))] for lab, v in zip(scale, fitted, strict=True)}


def apply_calibration(model: Model, items: Sequence[Item]) -> list[str]:
    """Each item's calibrated label; a group the fit never saw keeps the judge's label."""
    return [model["maps"].get(_group(i), {}).get(i.judge, i.judge) for i in items]
