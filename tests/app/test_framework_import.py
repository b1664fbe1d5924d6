"""Issue 41: the Runs page imports an eval framework's log as the CLI does (`audit.framework_logs.import_log`):
the real Inspect log becomes a run whose decisions are its grader's verdicts, and a file that is not a log is
refused with the CLI's message, nothing stored. AppTest on the Runs page."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest

from tests.app.conftest import plain
from tests.conftest import ROOT

if importlib.util.find_spec("inspect_ai") is None:  # not imported here: 2.5 s of every worker's collection
    pytest.skip("inspect-ai is not installed (requirements-dev.txt)", allow_module_level=True)

LOG = ROOT / "data" / "verdicts" / "inspect_qa.eval"
INSPECT_TITLE = "Inspect AI log (.eval or .json)"


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as c:
        out = c.execute(sql).fetchall()
    c.close()
    return out


def fill(at, path: Path, run: str) -> None:
    at.selectbox(key="fwimport.framework").set_value(INSPECT_TITLE).run()
    at.radio(key="fwimport.inspect.how").set_value("A path on this machine…").run()
    at.text_input(key="fwimport.inspect.path").set_value(str(path)).run()
    at.text_input(key="fwimport.run").set_value(run).run()
    at.button(key="fwimport.go").click().run()


def test_the_runs_page_imports_an_inspect_log(app_db) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    fill(at, LOG, "from-page")
    assert not at.exception, [e.value for e in at.exception]
    assert [plain(s.value) for s in at.success][-1] == "Imported 12 of 12 records into run from-page"
    [(n_docs, n_decisions)] = rows(app_db, "SELECT n_docs, n_decisions FROM runs WHERE name = 'from-page'")
    assert (n_docs, n_decisions) == (12, 12)


def test_a_file_that_is_not_a_log_is_refused_and_nothing_stored(app_db, tmp_path) -> None:
    from streamlit.testing.v1 import AppTest

    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    before = rows(app_db, "SELECT COUNT(*) FROM runs")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    fill(at, bad, "bad")
    assert not at.exception, [e.value for e in at.exception]
    [error] = [plain(e.value) for e in at.error]
    assert error.startswith(f"Nothing was stored. {bad}: not an Inspect log Inspect can read")
    assert rows(app_db, "SELECT COUNT(*) FROM runs") == before
