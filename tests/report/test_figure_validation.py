"""The report's figures skip Altair's JSON-schema validation (a sixth of `report`'s CPU at 10,000 CHIMERA abstracts,
#38) and keep the spec the validated `to_dict` gives."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest
from altair.utils import schemapi

from audit.outputs.report import figure


def test_a_figure_is_the_validated_spec_without_validating_the_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    chart = (alt.Chart(pd.DataFrame({"kind": ["a", "b"], "n": [3, 5]})).mark_bar()
             .encode(x=alt.X("kind:N", title="kind"), y="n:Q", tooltip=["kind", "n"]))
    validated = chart.to_dict()
    original = schemapi.SchemaBase.validate.__func__  # type: ignore[attr-defined]
    checked: list[str] = []

    def recording(cls: type, instance: object, schema: object = None) -> None:
        checked.append(cls.__name__)
        original(cls, instance, schema)

    monkeypatch.setattr(schemapi.SchemaBase, "validate", classmethod(recording))
    chart.to_dict()
    assert "Chart" in checked  # the guard sees a validating call
    checked.clear()
    assert figure("f", "title", chart).spec == validated
    assert "Chart" not in checked
