"""Inspect AI logs in and out (#41): a real log written by Inspect (tests/fixtures/verdicts/README.md) imports with
its verdicts, references and the grader's replies; with no review the run's aggregate is Inspect's own; unreadable
records are skipped and named, never half-stored; reviewed verdicts go back as `edit_score` entries that
`read_eval_log` shows with their provenance."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("inspect-ai is not installed (requirements-dev.txt)", allow_module_level=True)


def log_api():  # noqa: ANN201 (a module)
    """Inspect's log API, imported by the tests that use it: importing it costs 2.5 s, which every test worker paid
    while collecting."""
    return importlib.import_module("inspect_ai.log")


from audit.cli import main  # noqa: E402 (after the skip)
from audit.errors import AuditError  # noqa: E402
from audit.framework_logs import import_log, write_back  # noqa: E402
from audit.rescoring import audit_run  # noqa: E402
from audit.review.reviews import add_review  # noqa: E402
from audit.store.database import open_db, run_row  # noqa: E402
from audit.views import decisions  # noqa: E402
from scoring.families.verdicts.importers import ImportRefused  # noqa: E402
from scoring.families.verdicts.inspect_log import read_inspect_log  # noqa: E402
from scoring.families.verdicts.model import CPI, PASS_FAIL  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

LOG = ROOT / "data" / "verdicts" / "inspect_qa.eval"
DEMO_ITEMS = ROOT / "data" / "verdicts" / "inspect_demo_items.jsonl"
SCORER = "model_graded_fact"


def inspect_accuracy(path: Path, scorer: str = SCORER) -> float:
    """Inspect's own aggregate, read from the log's `results` by Inspect's API."""
    log = log_api().read_eval_log(str(path))
    [score] = [s for s in log.results.scores if s.name == scorer]
    return score.metrics["accuracy"].value


def damaged_copy(tmp_path: Path) -> Path:
    """The fixture with record 2's score made a dict of values (no scheme reads it) and record 5's scores removed,
    written back by Inspect's API."""
    log = log_api().read_eval_log(str(LOG))
    log.samples[1].scores[SCORER].value = {"a": 1, "b": 0}
    log.samples[4].scores = {}
    out = tmp_path / "damaged.eval"
    log_api().write_eval_log(log, str(out))
    return out


def test_zero_review_aggregate_is_inspects_own(tmp_path):
    db = open_db(tmp_path / "a.db")
    result = import_log(db, "inspect", str(LOG), run="qa")
    want = inspect_accuracy(LOG)
    assert result["reported"][SCORER] == want
    audited = audit_run(db, "qa").metrics
    for got in (result["metrics"]["headline"]["mean"], result["metrics"]["scorers"][SCORER]["mean"],
                audited["headline"]["mean"]):
        assert math.isclose(got, want, rel_tol=0, abs_tol=1e-9), (got, want)


def test_records_import_with_verdict_reference_and_rationale(tmp_path):
    got = read_inspect_log(str(LOG))
    log = log_api().read_eval_log(str(LOG))
    assert got.records == len(log.samples) == 12 and not got.errors
    complete = [i for i in got.items
                if i["target"] and all(t.strip() for t in i["target"])
                and all(v["scheme"] == CPI and v["value"] in "CPI" and v.get("explanation") and v.get("prompt")
                        for v in i["verdicts"])]
    assert len(complete) / got.records >= 0.99
    # the grader's reply and prompt are Inspect's, character for character
    first = log.samples[0].scores[SCORER]
    assert got.items[0]["verdicts"][0]["explanation"] == first.explanation
    assert got.items[0]["verdicts"][0]["prompt"] == first.metadata["grading"][0]["content"]
    ids = [i["id"] for i in got.items]
    assert len(set(ids)) == len(ids) and "q3#2" in ids  # sample × epoch


def test_the_demo_items_are_the_fixture_log_read_now():
    lines = [json.loads(x) for x in DEMO_ITEMS.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert lines == json.loads(json.dumps(read_inspect_log(str(LOG)).items))


def test_unreadable_records_are_skipped_and_named(tmp_path):
    bad = damaged_copy(tmp_path)
    db = open_db(tmp_path / "a.db")
    result = import_log(db, "inspect", str(bad), run="qa")
    assert result["imported"] == 10 and result["skipped"] == 2
    assert result["errors"][0].startswith(f"{bad}: record 2: sample 'q2' epoch 1: score '{SCORER}' has value")
    assert result["errors"][1].startswith(f"{bad}: record 5: sample 'q5' epoch 1 has no score")
    row = run_row(db, "qa")
    assert row["n_docs"] == 10
    assert any("record 2" in w for w in row["summary"]["warnings"])
    assert row["summary"]["import"]["skipped"] == 2


def test_a_log_with_no_readable_record_stores_nothing(tmp_path):
    log = log_api().read_eval_log(str(LOG))
    for s in log.samples:
        s.scores = {}
    bad = tmp_path / "empty.eval"
    log_api().write_eval_log(log, str(bad))
    db = open_db(tmp_path / "a.db")
    with pytest.raises(AuditError, match="none of its 12 record"):
        import_log(db, "inspect", str(bad), run="qa")
    assert not list(db.query("SELECT name FROM runs"))


def test_several_scorers_each_a_decision_or_one_picked(tmp_path):
    """A second score per sample (added through Inspect's API, a boolean): without --scorer each score is a
    decision of its item (the scheme its value reads as), with --scorer only that one."""
    log = log_api().read_eval_log(str(LOG))
    from inspect_ai.scorer import ScoreEdit

    for s in log.samples:
        log_api().edit_score(log, s.id, "exact", ScoreEdit(value=s.output.completion.strip(". ") == s.target,
                                                                  provenance=log_api().ProvenanceData(
                                                                      author="test")),
                                   recompute_metrics=False, epoch=s.epoch)
    two = tmp_path / "two.eval"
    log_api().write_eval_log(log, str(two))
    db = open_db(tmp_path / "a.db")
    both = import_log(db, "inspect", str(two), run="both")
    kinds = {(d["kind"], d["type"]) for d in decisions(db, "both")}
    assert kinds == {(CPI, SCORER), (PASS_FAIL, "exact")}
    exact = sum(s.output.completion.strip(". ") == s.target for s in log.samples) / len(log.samples)
    assert math.isclose(both["metrics"]["scorers"]["exact"]["mean"], exact, abs_tol=1e-9)
    one = import_log(db, "inspect", str(two), run="one", options={"scorer": "exact"})
    assert {d["type"] for d in decisions(db, "one")} == {"exact"}
    assert one["metrics"]["headline"]["mean"] == one["metrics"]["scorers"]["exact"]["mean"]


def test_round_trip_review_then_write_back_shows_the_edit_with_provenance(tmp_path):
    db = open_db(tmp_path / "a.db")
    import_log(db, "inspect", str(LOG), run="qa")
    wrong = next(d for d in decisions(db, "qa") if d["doc"] == "q3#2")
    assert wrong["judge"] == "I"  # the grader erred: 100 degrees Celsius is 100
    add_review(db, "qa", wrong["id"], "C", "ana", note="100 degrees Celsius is the expert answer")
    confirmed = next(d for d in decisions(db, "qa") if d["doc"] == "q1#1")
    add_review(db, "qa", confirmed["id"], confirmed["judge"], "ana")  # agrees with the judge: nothing to write
    out = tmp_path / "audited.eval"
    assert write_back(db, "inspect", "qa", str(LOG), str(out))["edits"] == 1
    log = log_api().read_eval_log(str(out))
    [sample] = [s for s in log.samples if s.id == "q3" and s.epoch == 2]
    score = sample.scores[SCORER]
    assert score.value == "C" and score.history[-1].provenance.author == "ana"
    assert score.history[-1].provenance.reason == "100 degrees Celsius is the expert answer"
    edited = [s for s in log.samples if s.scores[SCORER].history]
    assert len(edited) == 1
    # Inspect's recomputed aggregate is the audited one
    assert math.isclose(inspect_accuracy(out), audit_run(db, "qa").metrics["headline"]["mean"], abs_tol=1e-9)
    assert inspect_accuracy(LOG) == 0.5  # the original log is untouched


def test_write_back_refuses_to_overwrite_the_original(tmp_path):
    db = open_db(tmp_path / "a.db")
    import_log(db, "inspect", str(LOG), run="qa")
    with pytest.raises(AuditError, match="new file"):
        write_back(db, "inspect", "qa", str(LOG), str(LOG))


def test_cli_import_and_write_back(tmp_path, capsys):
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "import", "inspect", str(LOG), "--scorer", SCORER, "--run", "qa"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["imported"] == 12 and out["reported"] == {SCORER: 0.5}
    assert main(["--db", str(db), "import", "inspect", str(LOG), "--scorer", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scorers in the log: model_graded_fact" in err
    notes = tmp_path / "notes.json"
    notes.write_text('{"hello": 1}', encoding="utf-8")  # Inspect's own error about it is a page long
    assert main(["--db", str(db), "import", "inspect", str(notes)]) == 2
    err = capsys.readouterr().err
    assert "not an Inspect log Inspect can read" in err and "errors.pydantic.dev" not in err, err  # its first line
    edited = tmp_path / "out.eval"
    assert main(["--db", str(db), "write-back", "inspect", "--run", "qa", "--log", str(LOG), "--out",
                 str(edited)]) == 0
    assert json.loads(capsys.readouterr().out)["edits"] == 0 and edited.is_file()


def test_without_inspect_ai_one_line_says_how_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # `import inspect_ai.log` raises ImportError
    with pytest.raises(ImportRefused, match=r"needs inspect-ai, which is not installed: pip install inspect-ai=="):
        read_inspect_log(str(LOG))
    assert main(["--db", str(tmp_path / "x.db"), "import", "inspect", str(LOG)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install inspect-ai" in err


def test_a_file_that_is_not_an_inspect_log_is_refused_whole(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    with pytest.raises(AuditError, match="not an Inspect log"):
        import_log(db, "inspect", str(bad))
    assert not list(db.query("SELECT name FROM runs"))


def test_write_back_refuses_a_log_the_run_was_not_imported_from(tmp_path):
    """The run records the log's SHA-256 at import: an edit written into another log would put this run's reviews
    on samples that are not the ones reviewed."""
    db = open_db(tmp_path / "a.db")
    import_log(db, "inspect", str(LOG), run="qa")
    other = tmp_path / "other.eval"
    other.write_bytes(LOG.read_bytes() + b"\0")  # another file (Inspect need not read it: refused before)
    with pytest.raises(AuditError, match="not the log run 'qa' was imported from"):
        write_back(db, "inspect", "qa", str(other), str(tmp_path / "out.eval"))
    assert not (tmp_path / "out.eval").exists()


def test_a_log_aggregated_otherwise_than_the_runs_mean_says_so_at_import_and_with_the_run(tmp_path, capsys):
    """A log whose epochs are reduced by `max` reports another accuracy than the mean over sample × epoch the run
    starts from: the import said nothing (0.667 reported, 0.5 stored). It now warns, naming the reducer and both
    numbers, on the CLI and among the run's warnings; a log that agrees warns nothing."""
    log = log_api().read_eval_log(str(LOG))
    assert max(s.epoch for s in log.samples) > 1
    log.eval.config.epochs_reducer = ["max"]
    [score] = [s for s in log.results.scores if s.name == SCORER]
    score.metrics["accuracy"].value = 0.75
    odd = tmp_path / "max.eval"
    log_api().write_eval_log(log, str(odd))
    db = tmp_path / "a.db"
    assert main(["--db", str(db), "import", "inspect", str(odd), "--run", "odd"]) == 0
    err = capsys.readouterr().err
    assert "warning: the log reduces each sample's epochs by max" in err
    mean = import_log(open_db(tmp_path / "b.db"), "inspect", str(LOG))["metrics"]["headline"]["mean"]
    assert f"warning: {SCORER}: the framework reports 0.75, the mean of the " in err and f"is {mean:.4g}" in err
    assert any("reduces each sample's epochs by max" in w for w in run_row(open_db(db), "odd")["summary"]["warnings"])
    assert import_log(open_db(tmp_path / "c.db"), "inspect", str(LOG))["warnings"] == []


def test_a_log_inspect_refuses_is_refused_with_the_place_and_the_reason(tmp_path):
    """pydantic's refusal was cut to its first line, "1 validation error for EvalLog", which names neither the place
    nor the reason."""
    as_json = tmp_path / "log.json"
    log_api().write_eval_log(log_api().read_eval_log(str(LOG)), str(as_json))
    data = json.loads(as_json.read_text(encoding="utf-8"))
    data["samples"][0]["epoch"] = "first"
    as_json.write_text(json.dumps(data), encoding="utf-8")
    db = open_db(tmp_path / "a.db")
    with pytest.raises(AuditError, match=r"ValidationError: samples\.0\.epoch: Input should be a valid integer"):
        import_log(db, "inspect", str(as_json))
    assert not list(db.query("SELECT name FROM runs"))


def test_an_archive_that_unpacks_past_the_limit_is_refused_before_inspect_reads_it(tmp_path, monkeypatch):
    """862 KB of `.eval` archive unpacked to 1.7 GB in memory: the members' stated sizes are summed first."""
    import shutil
    import zipfile

    from scoring.families.verdicts import inspect_log

    bomb = tmp_path / "bomb.eval"
    shutil.copyfile(LOG, bomb)
    with zipfile.ZipFile(bomb, "a", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("samples/zeros.json", b"0" * 8_000_000)  # compresses to a few KB
    assert bomb.stat().st_size < LOG.stat().st_size + 100_000
    monkeypatch.setattr(inspect_log, "MAX_BYTES", LOG.stat().st_size + 1_000_000)
    db = open_db(tmp_path / "a.db")
    with pytest.raises(AuditError, match=r"bomb.eval: the archive unpacks to [\d,]+ bytes \(the largest member, "
                                         r"'samples/zeros.json', to 8,000,000\); the limit is"):
        import_log(db, "inspect", str(bomb))
    assert not list(db.query("SELECT name FROM runs"))
    assert import_log(db, "inspect", str(LOG))["imported"]  # the real log, under the same limit


def test_one_corrupt_sample_of_an_eval_archive_is_skipped_and_named_the_others_import(tmp_path):
    """Each sample of an `.eval` archive is a member of its own: one that Inspect cannot read refused the whole log."""
    import zipfile

    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(LOG) as src, zipfile.ZipFile(broken, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for member in src.infolist():
            data = src.read(member)
            out.writestr(member, b'{"id": "q3", "epoch": 1, "scores": ' if member.filename == "samples/q3_epoch_1.json"
                         else data)
    whole = read_inspect_log(str(LOG))
    got = read_inspect_log(str(broken))
    assert got.records == whole.records and len(got.items) == len(whole.items) - 1
    assert [e for e in got.errors if "'q3' epoch 1 cannot be read" in e] and got.errors[0].startswith(f"{broken}")
    assert {i["id"] for i in whole.items} - {i["id"] for i in got.items} == {"q3#1"}
