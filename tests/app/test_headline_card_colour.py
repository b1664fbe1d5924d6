"""A headline card colours a change by whether it is better: a median rank that falls (lower is better) is green,
one that rises is red; an F1 the other way round (the median rank's fall read as a red loss on three pages)."""

from __future__ import annotations

import pytest
from streamlit.proto.Metric_pb2 import Metric as MetricProto
from streamlit.testing.v1 import AppTest


def _page(higher_is_better: bool, original: float, audited: float) -> None:
    import streamlit as st

    from scoring.families.base import MetricCell
    from ui import metrics
    from ui.metrics import _card

    cell = MetricCell(("all", "m"), "metric", "all", higher_is_better=higher_is_better)

    class Task:
        name = "retrieval"
        headline = [cell]

    assert _card(cell, {"all": {"m": original}}, {"all": {"m": audited}})[1]  # a change to colour
    metrics.headline(Task, {"all": {"m": original}}, {"all": {"m": audited}})  # type: ignore[arg-type]
    st.write("drawn")


@pytest.mark.parametrize(("higher", "original", "audited", "colour"), [
    (False, 216.708, 216.703, "green"), (False, 3.0, 5.0, "red"),
    (True, 0.61, 0.62, "green"), (True, 0.62, 0.61, "red")])
def test_a_change_is_green_when_it_is_better(higher, original, audited, colour):
    at = AppTest.from_function(_page, args=(higher, original, audited), default_timeout=60).run()
    assert not at.exception
    (card,) = at.metric
    assert MetricProto.MetricColor.Name(card.proto.color) == colour.upper()
