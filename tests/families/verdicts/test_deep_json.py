"""JSON nested past the parser's stack in an eval-framework log (the helper's `'[' * 100000`): a whole-file log is
refused naming the file (the CLI said "input nested too deeply to read", the Runs page showed a RecursionError
traceback), a line of a lines log is skipped and named, and an unrelated JSON file beside an Every Eval Ever log is
passed over (it stopped the import of a valid log)."""

from __future__ import annotations

import shutil

import pytest

from audit.errors import AuditError
from audit.framework_logs import import_log
from audit.store.database import open_db
from tests.conftest import ROOT

DEEP = "[" * 100_000 + "]" * 100_000
VERDICTS = ROOT / "data" / "verdicts"


@pytest.mark.parametrize("framework", ["promptfoo", "deepeval"])
def test_a_whole_file_log_nested_too_deeply_is_refused_naming_the_file(tmp_path, framework):
    log = tmp_path / "deep.json"
    log.write_text(DEEP)
    db = open_db(tmp_path / "a.db")
    with pytest.raises(AuditError, match=f"{log}: not JSON this reader can take \\(nested too deeply\\)"):
        import_log(db, framework, str(log), run="x")
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


@pytest.mark.parametrize("framework, folder, pattern", [("lm-eval", "lmeval", "samples_*.jsonl"),
                                                        ("eee", "eee", "*_samples.jsonl")])
def test_a_line_nested_too_deeply_is_skipped_and_named(tmp_path, framework, folder, pattern):
    for f in (VERDICTS / folder).iterdir():
        shutil.copy(f, tmp_path / f.name)
    [samples] = sorted(tmp_path.glob(pattern))
    lines = samples.read_text(encoding="utf-8").splitlines()
    samples.write_text("\n".join([*lines[:2], DEEP, *lines[2:]]) + "\n", encoding="utf-8")
    result = import_log(open_db(tmp_path / "a.db"), framework, str(samples), run="x")
    assert result["imported"] == len(lines)
    assert result["errors"] == [f"{samples}: record 3: not JSON this reader can take (nested too deeply)"]


def test_a_broken_json_file_beside_an_every_eval_ever_log_is_passed_over(tmp_path):
    for f in (VERDICTS / "eee").iterdir():
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "notes.json").write_text(DEEP)
    [samples] = sorted(tmp_path.glob("*_samples.jsonl"))
    result = import_log(open_db(tmp_path / "a.db"), "eee", str(samples), run="x")
    assert result["imported"] == 8 and result["reported"]  # the aggregate log beside it is still read
