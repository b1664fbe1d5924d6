"""Run-level family panels (ui/families/<family>.render_run) render on the real demo data without errors."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import copy_of

PANEL = """
import streamlit as st
from audit.store.database import open_db
from ui.families import view
view(st.session_state["task"]).render_run(open_db(st.session_state["db"]), st.session_state["run"])
"""


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory, demo_template):
    return copy_of(demo_template, tmp_path_factory.mktemp("panels") / "d.db")


@pytest.mark.parametrize(("task", "run", "needle"), [
    ("ideation", "demo-ideation-si2024-humans", "Human-human ceiling"),
    ("retrieval", "demo-retrieval-wordllama", "Tie policy"),
    ("chimera", "demo-chimera-mixed", "score differently under strict 1-to-1"),
])
def test_run_panel(demo_db, task, run, needle):
    at = AppTest.from_string(PANEL, default_timeout=60)
    at.session_state["task"], at.session_state["db"], at.session_state["run"] = task, str(demo_db), run
    at.run()
    assert not at.exception
    texts = [h.value for h in at.subheader] + [c.value for c in at.caption]
    assert any(needle in t for t in texts), texts
    assert at.dataframe and all(len(df.value) > 0 for df in at.dataframe)


def test_tie_policy_table_in_words_and_ranks_as_ranks(demo_db):
    """The tie-policy table names its columns as the Scores tables do (no `median_rank`, `mr`) and prints a rank
    as the number rule does (140, not 140.0000)."""
    from audit.numbers import format_value
    from audit.store.database import open_db
    from audit.views import as_view

    at = AppTest.from_string(PANEL, default_timeout=60)
    at.session_state["task"], at.session_state["db"] = "retrieval", str(demo_db)
    at.session_state["run"] = "demo-retrieval-wordllama"
    at.run()
    frame = next(df.value for df in at.dataframe if "policy" in df.value.columns)
    assert not [c for c in frame.columns if "_" in c or c == "mr"], list(frame.columns)
    policies = as_view(open_db(demo_db), "demo-retrieval-wordllama").audit.metrics["tie_policies"]
    mean_all = frame[(frame["policy"] == "mean") & (frame["subset"] == "all")].iloc[0]
    assert mean_all["median rank"] == format_value(policies["mean"]["all"]["median_rank"], "rank")
    assert mean_all["MRR"] == format_value(policies["mean"]["all"]["mrr"])
    assert not str(mean_all["median rank"]).endswith(".0000")
