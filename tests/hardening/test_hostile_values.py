"""Hostile values in input files, refused in a readable error line naming the file and line. Every JSON reader refuses
a lone surrogate (a `\\ud800` escape without its pair, which UTF-8 cannot hold) at the file and line, naming the
field, before anything is stored; promptfoo's and DeepEval's files saved with a byte-order mark (PowerShell,
Notepad) import as every other reader's do. Before: an ideation idea, a retrieval query or id, a judged item's
output, a review uid or a promptfoo / DeepEval string gave `text that is not valid UTF-8 (…)` with no file, line or
field, from deep inside the store; the two framework readers refused a BOM."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from audit.cli import main
from scoring.errors import MAX_REASON_CHARS, InputError
from tests.conftest import GOLD, PRED_MIXED
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


LONG = 5_000_000


def test_a_hostile_value_is_quoted_cut_in_the_error_line(db, tmp_path, capsys):
    """An unknown paper id of 5,000,000 characters printed a 5,000,096-byte error line (20 such, collected, about
    100 MB); a review naming a decision by a 5 MB `left` did the same. Values are quoted cut, with their length."""
    rec = json.loads(PRED_MIXED.read_text(encoding="utf-8").splitlines()[0])
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps(rec | {"paper_id": rec["paper_id"] + "x" * LONG}) + "\n", encoding="utf-8")
    assert main(["--db", str(db), "score", "chimera", "--gold", str(GOLD), "--pred", str(pred), "--judge",
                 "exact"]) == 2
    msg = one_error(capsys)
    assert msg.startswith(f"error: {pred}:1: unknown paper id ") and f"({len(rec['paper_id']) + LONG:,} characters)" \
        in msg and len(msg) < 400, msg[:400]
    review = {"uid": "u-long", "doc": "nope", "kind": "entity_pair", "type": "comb-element", "left": "y" * LONG,
              "right": "z", "reviewer": "bo", "label": "match", "role": "reviewer", "note": None, "blind": False,
              "created": "2026-01-31T09:30:00+00:00"}
    reviews = tmp_path / "r.jsonl"
    reviews.write_text(json.dumps(review) + "\n", encoding="utf-8")
    before = state(db)
    assert main(["import-reviews", "--db", str(db), "--run", "mixed", str(reviews)]) == 2
    msg = one_error(capsys)
    assert "no such decision" in msg and f"({LONG:,} characters)" in msg and len(msg) < 400, msg[:400]
    assert state(db) == before


def test_no_input_error_prints_more_than_its_limit():
    e = InputError("f.jsonl", 3, "bad " + "q" * (MAX_REASON_CHARS * 3))
    assert len(e.reason) < MAX_REASON_CHARS + 60 and str(e).startswith("f.jsonl:3: bad qqq")
    assert e.reason.endswith(f"({MAX_REASON_CHARS * 2 + 4:,} more characters)")
