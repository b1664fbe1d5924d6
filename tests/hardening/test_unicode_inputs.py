"""Every JSON reader refuses a lone surrogate (a `\\ud800` escape without its pair, which UTF-8 cannot hold) at the
file and line, naming the field, before anything is stored; promptfoo's and DeepEval's files saved with a byte-order
mark (PowerShell, Notepad) import as every other reader's do. Before: an ideation idea, a retrieval query or id, a
judged item's output, a review uid or a promptfoo / DeepEval string gave `text that is not valid UTF-8 (…)` with no
file, line or field, from deep inside the store; the two framework readers refused a BOM."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from audit.cli import main
from tests.hardening import test_cli_errors
from tests.hardening.test_cli_errors import one_error, state

scored = test_cli_errors.scored  # the module fixture: a database with two CHIMERA runs and a review
db = test_cli_errors.db  # a copy of it per test

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


def _edited(src: Path, dst: Path, line: int, edit) -> Path:
    rows = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines() if x.strip()]
    edit(rows[line - 1])
    dst.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return dst


def _append(field: str):
    return lambda r: r.__setitem__(field, str(r[field]) + "\ud800")


CASES = {
    "ideation idea": (DATA / "ideation/demo_ideas.jsonl", 3, "idea",
                      lambda f: ["ideation", "--ideas", f, "--absolute", str(DATA / "ideation/demo_absolute.jsonl")]),
    "retrieval query": (DATA / "retrieval/demo_rankings.jsonl", 2, "query", lambda f: ["retrieval", "--pred", f]),
    "retrieval id": (DATA / "retrieval/demo_rankings.jsonl", 4, "id", lambda f: ["retrieval", "--pred", f]),
    "judged item output": (DATA / "verdicts/inspect_demo_items.jsonl", 2, "output",
                           lambda f: ["verdicts", "--items", f]),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_lone_surrogate_is_refused_at_its_file_line_and_field(db, tmp_path, capsys, case):
    src, line, field, args = CASES[case]
    f = _edited(src, tmp_path / src.name, line, _append(field))
    before = state(db)
    assert main(["--db", str(db), "score", *args(str(f))]) == 2
    msg = one_error(capsys)
    assert msg.startswith(f"error: {f}:{line}: field '{field}' is not valid Unicode text ("), msg
    assert "lone surrogate \\ud800" in msg
    assert state(db) == before


FRAMEWORKS = {"promptfoo": DATA / "verdicts/promptfoo_results.json",
              "deepeval": next((DATA / "verdicts/deepeval").glob("test_run_*.json"))}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_framework_json_with_a_byte_order_mark_imports_as_without(db, tmp_path, framework):
    plain = tmp_path / FRAMEWORKS[framework].name
    shutil.copy(FRAMEWORKS[framework], plain)
    marked = tmp_path / ("bom-" + plain.name)
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert main(["--db", str(db), "import", framework, str(plain), "--run", "plain"]) == 0
    assert main(["--db", str(db), "import", framework, str(marked), "--run", "marked"]) == 0
    with sqlite3.connect(db) as c:
        got = dict(c.execute("SELECT name, original_metrics FROM runs WHERE name IN ('plain', 'marked')"))
    c.close()
    assert got["plain"] == got["marked"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_lone_surrogate_in_framework_json_names_the_file_and_field(db, tmp_path, capsys, framework):
    text = FRAMEWORKS[framework].read_text(encoding="utf-8")
    key = '"output": "' if framework == "promptfoo" else '"actualOutput": "'
    assert key in text, f"the fixture has no {key}"
    bad = tmp_path / FRAMEWORKS[framework].name
    bad.write_text(text.replace(key, key + "\\ud800", 1), encoding="utf-8")
    before = state(db)
    assert main(["--db", str(db), "import", framework, str(bad), "--run", "bad"]) == 2
    msg = one_error(capsys)
    assert msg.startswith(f"error: {bad}: field ") and "is not valid Unicode text" in msg, msg
    assert state(db) == before
