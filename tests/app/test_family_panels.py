"""Run-level family panels (ui/families/<family>.render_run) render on the real demo data without errors."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

PANEL = """
import streamlit as st
from audit.store import open_db
from ui.families import view
view(st.session_state["task"]).render_run(open_db(st.session_state["db"]), st.session_state["run"])
"""


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    from audit.demo import load_demo
    from audit.store import open_db

    path = tmp_path_factory.mktemp("panels") / "d.db"
    load_demo(open_db(path))
    return path


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
