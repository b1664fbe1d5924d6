"""The `calibrate` strategy for ordinal ratings: an isotonic (monotone non-decreasing) map from the judge's rating to
the humans', fitted on the fitting documents with scikit-learn's `IsotonicRegression` over the scale's positions,
each fitted value rounded to the nearest point of the scale. A judge that rates one point too high everywhere comes
out shifted down; the order of its ratings is never reversed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.isotonic import IsotonicRegression

from scoring.improve.crossfit import Item, Model


def fit_calibration(items: Sequence[Item], scale: Sequence[str]) -> Model:
    """`{"map": {judge label: calibrated label}, "n_fit"}` for every label of `scale` (in order), from these items.
    With no items the map is the identity.

    >>> from scoring.improve.crossfit import Item
    >>> items = [Item(i, "d", str(min(5, r)), str(r - 1)) for i, r in enumerate([2, 3, 3, 4, 5, 5])]
    >>> fit_calibration(items, ["1", "2", "3", "4", "5"])["map"]
    {'1': '2', '2': '3', '3': '4', '4': '5', '5': '5'}
    """
    position = {lab: i for i, lab in enumerate(scale)}
    if not items:
        return {"map": {lab: lab for lab in scale}, "n_fit": 0}
    x = np.array([position[i.judge] for i in items], dtype=float)
    y = np.array([position[i.human] for i in items], dtype=float)
    iso = IsotonicRegression(y_min=0, y_max=len(scale) - 1, increasing=True, out_of_bounds="clip").fit(x, y)
    fitted = iso.predict(np.arange(len(scale), dtype=float))
    # half-way values go up (np.rint would round them to even, so 1.5 and 2.5 would part ways)
    return {"map": {lab: scale[int(np.floor(v + 0.5))] for lab, v in zip(scale, fitted, strict=True)},
            "n_fit": len(items)}


def apply_calibration(model: Model, items: Sequence[Item]) -> list[str]:
    return [model["map"].get(i.judge, i.judge) for i in items]
