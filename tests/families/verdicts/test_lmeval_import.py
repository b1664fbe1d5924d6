"""lm-evaluation-harness samples (#41): a real `--log_samples` file of lm-eval's dummy model
(tests/fixtures/verdicts/README.md) imports every line with its metric and reference; with no review the run's
mean is lm-eval's reported aggregate; a damaged line is skipped and named by its line, the rest stored."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from audit.errors import AuditError
from audit.framework_logs import import_log
from audit.store.database import open_db, run_row
from scoring.families.verdicts.lmeval_log import read_lmeval_samples
from tests.conftest import ROOT

FOLDER = ROOT / "data" / "verdicts" / "lmeval"
[SAMPLES] = sorted(FOLDER.glob("samples_*.jsonl"))
[RESULTS] = sorted(FOLDER.glob("results_*.json"))


def test_zero_review_mean_is_lm_evals_reported_acc(tmp_path):
    import json

    want = json.loads(RESULTS.read_text(encoding="utf-8"))["results"]["tiny_mc"]["acc,none"]
    db = open_db(tmp_path / "a.db")
    result = import_log(db, "lm-eval", str(SAMPLES), run="mc")
    assert result["reported"] == {"acc": want}
    assert math.isclose(result["metrics"]["headline"]["mean"], want, rel_tol=0, abs_tol=1e-9)


def test_every_line_imports_with_its_metric_and_reference():
    got = read_lmeval_samples(str(SAMPLES))
    assert got.records == len(got.items) == 8 and not got.errors
    assert all(i["target"] and i["target"][0] and i["verdicts"][0]["scorer"] == "acc" for i in got.items)
    # multiple choice: the reference is the gold continuation, the output the one the model scored highest
    first = got.items[0]
    assert first["target"] == ["Au"] and first["output"] in ("Ag", "Au", "Gd", "Go")
    assert (first["output"] == first["target"][0]) == (first["verdicts"][0]["value"] == 1.0)


def test_a_damaged_line_is_skipped_and_named(tmp_path):
    lines = SAMPLES.read_text(encoding="utf-8").split("\n")
    lines[2] = lines[2][: len(lines[2]) // 2]
    bad = tmp_path / SAMPLES.name
    bad.write_text("\n".join(lines), encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    result = import_log(db, "lm-eval", str(bad), run="mc")
    assert result["imported"] == 7 and result["errors"][0].startswith(f"{bad}: record 3: not JSON")
    assert run_row(db, "mc")["n_docs"] == 7


def test_an_unknown_metric_is_refused_whole(tmp_path):
    db = open_db(tmp_path / "a.db")
    with pytest.raises(AuditError, match="metrics in the file: acc"):
        import_log(db, "lm-eval", str(SAMPLES), options={"metric": "f1"})
    assert not list(db.query("SELECT name FROM runs"))


def test_the_task_file_is_local(tmp_path):
    """The fixture's task reads its questions from the folder (no hub download): its data file is beside it."""
    task = (ROOT / "tests/fixtures/verdicts/lmeval_task/tiny_mc.yaml").read_text(encoding="utf-8")
    assert "dataset_path: json" in task and Path(ROOT / "tests/fixtures/verdicts/lmeval_task/tiny_mc.jsonl").is_file()


def test_a_line_given_twice_is_skipped_and_named_with_the_log_and_the_run_records_the_log(tmp_path):
    """A repeated line gives a repeated item id: the later record is skipped and listed naming the user's log (not
    the items file made from it), and the run's provenance is the log's own name, size and SHA-256."""
    import hashlib

    lines = SAMPLES.read_text(encoding="utf-8").splitlines(keepends=True)
    log = tmp_path / SAMPLES.name
    log.write_text("".join(lines) + lines[0], encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    result = import_log(db, "lm-eval", str(log), run="mc")
    assert result["imported"] == len(lines) and result["skipped"] == 1
    [error] = result["errors"]
    assert error.startswith(f"{log}: item id ") and "repeats an earlier record's" in error
    recorded = run_row(db, "mc")["inputs"]["items"]
    data = log.read_bytes()
    assert recorded == {"name": log.name, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_a_record_the_items_format_refuses_is_skipped_and_named_with_the_log(tmp_path):
    """A line whose metrics name one scorer twice (or an empty doc id) gave an item the items format refuses: the
    whole import stopped naming a temporary items file that no longer existed (`/tmp/tmp…/x.items.jsonl:1`). The
    record is now skipped and listed with the user's log and its own ids; the rest are stored."""
    import json

    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    twice = json.loads(lines[1])
    twice["metrics"] = ["acc", "acc"]
    empty_id = json.loads(lines[4])
    empty_id["doc_id"] = ""
    log = tmp_path / SAMPLES.name
    log.write_text("\n".join([lines[0], json.dumps(twice), *lines[2:4], json.dumps(empty_id), *lines[5:]]) + "\n",
                   encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    result = import_log(db, "lm-eval", str(log), run="mc")
    assert result["imported"] == len(lines) - 2 and result["skipped"] == 2
    assert run_row(db, "mc")["n_docs"] == len(lines) - 2
    assert all(e.startswith(f"{log}: ") and "items.jsonl" not in e and e.endswith("the record is skipped")
               for e in result["errors"]), result["errors"]
    assert any("a scorer gives two verdicts" in e for e in result["errors"])
    assert any("an item needs an 'id'" in e for e in result["errors"])


@pytest.mark.parametrize("framework", ["inspect", "lm-eval", "promptfoo", "deepeval", "eee"])
def test_a_folder_given_as_the_log_is_said_to_be_a_folder(tmp_path, framework):
    db = open_db(tmp_path / "a.db")
    folder = tmp_path / "logs.jsonl"
    folder.mkdir()
    with pytest.raises(AuditError, match=r"logs\.jsonl: is a folder; give the log file"):
        import_log(db, framework, str(folder))
    assert not list(db.query("SELECT name FROM runs"))


@pytest.mark.parametrize(("doc_id", "said"), [(None, "null"), ({"a": 1}, "dict"), (True, "bool")])
def test_a_doc_id_that_is_not_an_id_skips_its_record(tmp_path, doc_id, said):
    """A null doc_id became the id 'None' and an object "{'a': 1}"."""
    import json

    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[2])
    rec["doc_id"] = doc_id
    log = tmp_path / SAMPLES.name
    log.write_text("\n".join([*lines[:2], json.dumps(rec), *lines[3:]]) + "\n", encoding="utf-8")
    result = import_log(open_db(tmp_path / "a.db"), "lm-eval", str(log), run="mc")
    assert result["imported"] == len(lines) - 1
    assert result["errors"] == [f"{log}: record 3: doc_id is {said}, not a string or a whole number"]


def test_a_samples_file_without_its_results_file_says_there_is_nothing_to_compare_with(tmp_path, capsys):
    """A renamed samples file (or one copied without lm-eval's results_<date>.json) imported with `"reported": {}`
    and no word; `--help` did not say where the aggregate comes from."""
    from audit.cli import main

    log = tmp_path / "renamed.jsonl"
    log.write_text(SAMPLES.read_text(encoding="utf-8"), encoding="utf-8")
    result = import_log(open_db(tmp_path / "a.db"), "lm-eval", str(log), run="mc")
    assert result["reported"] == {} and result["warnings"] == [
        "no aggregate of the framework's own was found to compare the run with (lm-eval's results_<date>.json "
        "beside the samples file, of the same date)"]
    assert import_log(open_db(tmp_path / "b.db"), "lm-eval", str(SAMPLES), run="mc")["warnings"] == []
    with pytest.raises(SystemExit):
        main(["import", "lm-eval", "--help"])
    assert "results_<date>.json" in " ".join(capsys.readouterr().out.split())


def test_an_oversized_text_or_id_skips_its_record_and_the_message_stays_short(tmp_path):
    """A 3 MB input and a 200,000-character doc id were imported (a 30 MB field made each export of the run 90 MB);
    they are now skipped and listed, each line short enough to read."""
    import json

    from scoring.limits import MAX_ID_CHARS, MAX_ITEM_TEXT_CHARS

    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    big, long_id = json.loads(lines[0]), json.loads(lines[1])
    big["arguments"] = {"gen_args_0": {"arg_0": "x" * (MAX_ITEM_TEXT_CHARS + 1), "arg_1": " Au"}}
    long_id["doc_id"] = "y" * (MAX_ID_CHARS * 200)
    log = tmp_path / SAMPLES.name
    log.write_text("\n".join([json.dumps(big), json.dumps(long_id), *lines[2:]]) + "\n", encoding="utf-8")
    result = import_log(open_db(tmp_path / "a.db"), "lm-eval", str(log), run="mc")
    assert result["imported"] == len(lines) - 2 and len(result["errors"]) == 2
    assert any(f"is {MAX_ITEM_TEXT_CHARS + 1:,} characters long; the limit is {MAX_ITEM_TEXT_CHARS:,}" in e
               for e in result["errors"])
    assert any(f"an item id is {MAX_ID_CHARS * 200:,} characters long" in e for e in result["errors"])
    assert all(len(e) < 1_000 for e in result["errors"])


def test_a_repeated_record_is_left_out_before_the_run_is_compared_with_the_frameworks_aggregate(tmp_path):
    """The comparison with lm-eval's own accuracy counted a repeated line the import then skipped: it warned of a
    difference the stored run does not have."""
    import json
    import shutil

    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    again = json.loads(lines[0])
    again["acc"] = 1.0 - again["acc"]
    log = tmp_path / SAMPLES.name
    log.write_text("\n".join([*lines, json.dumps(again)]) + "\n", encoding="utf-8")
    shutil.copy(RESULTS, tmp_path / RESULTS.name)
    result = import_log(open_db(tmp_path / "a.db"), "lm-eval", str(log), run="mc")
    assert result["skipped"] == 1 and "repeats an earlier record's" in result["errors"][0]
    assert result["warnings"] == [] and result["reported"]["acc"] == result["metrics"]["headline"]["mean"]
