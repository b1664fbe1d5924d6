"""A headline card with an undefined value or original reads "–" or the value alone, never "+nan"."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as hs

from scoring.families.base import MetricCell
from ui.metrics import _card

CELL = MetricCell(("all", "f1"), "F1", "all")
values = hs.one_of(hs.none(), hs.just(math.nan), hs.floats(0, 1))


@settings(max_examples=60, derandomize=True, deadline=None)
@given(values, values)
def test_card_never_prints_nan(o, a):
    value, delta = _card(CELL, {"all": {"f1": o}}, {"all": {"f1": a}})
    assert "nan" not in value.lower() and (delta is None or "nan" not in delta.lower())
    if a is None or (isinstance(a, float) and math.isnan(a)):
        assert value == "–" and delta is None
