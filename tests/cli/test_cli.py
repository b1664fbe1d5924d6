"""The CLI contract: score, runs, decisions, review, export; errors exit 2 with one line."""

import json
import subprocess
import sys

import pytest

from audit.cli import build_parser, main
from audit.store.database import open_db
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED, ROOT, write_jsonl


def run_cli(*args: str, db=None) -> subprocess.CompletedProcess:
    extra = ["--db", str(db)] if db else []
    return subprocess.run([sys.executable, "-m", "audit", *args, *extra], capture_output=True, text=True, cwd=ROOT)


def test_score_review_export_round_trip(tmp_path, capsys):
    db = tmp_path / "c.db"
    assert main(["--db", str(db), "score", "chimera", "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", f"replay:{JUDGE_LOG}", "--run", "r1"]) == 0
    out = capsys.readouterr()
    metrics = json.loads(out.out)
    assert {"classification", "entities", "relations", "judge"} <= set(metrics)
    assert "run: r1" in out.err

    assert main(["decisions", "--db", str(db), "--run", "r1"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == open_db(db).execute("SELECT n_decisions FROM runs").fetchone()[0]
    assert set(lines[0]) == {"decision", "id", "doc", "kind", "type", "left", "right", "judge", "effective", "source"}
    target = next(x for x in lines if x["judge"] == "match" and x["left"] != x["right"])

    assert main(["review", "--db", str(db), "--run", "r1", "--decision", str(target["id"]), "--label", "no-match",
                 "--reviewer", "ana", "--note", "different idea", "--json"]) == 0
    reviewed = json.loads(capsys.readouterr().out)
    assert reviewed["reviews"]["overruled"] == 1

    out_file = tmp_path / "audited.json"
    assert main(["export", "--db", str(db), "--run", "r1", "--format", "json", "--out", str(out_file)]) == 0
    exported = json.loads(out_file.read_text())
    assert exported["original"]["entities"] == metrics["entities"]
    assert exported["audited"]["entities"]["avg"]["f1"] < exported["original"]["entities"]["avg"]["f1"]
    assert exported["reviews"]["overruled"] == 1 and exported["reviews"]["reviewed"] == 1
    assert exported["inputs"]["pred"]["sha256"] and exported["judge"]["spec"].startswith("replay:")

    assert main(["decisions", "--db", str(db), "--run", "r1", "--doc", target["doc"]]) == 0
    doc_lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert next(x for x in doc_lines if x["id"] == target["id"])["effective"] == "no-match"

    assert main(["export", "--db", str(db), "--run", "r1", "--format", "csv"]) == 0
    csv_text = capsys.readouterr().out
    assert csv_text.splitlines()[0].startswith("id,doc,kind,type,left,right,judge,human:ana,effective")
    assert main(["export", "--db", str(db), "--run", "r1", "--format", "latex"]) == 0
    assert r"\begin{tabular}" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["decisions", "--run", "nope"], "error: unknown run 'nope'"),
    (["review", "--run", "nope", "--decision", "1", "--label", "match", "--reviewer", "a"], "error: unknown run"),
    (["score", "chimera", "--gold", str(GOLD), "--pred", str(PRED_MIXED), "--judge", "gpt"], "unknown judge spec"),
    (["score", "chimera", "--gold", "missing.csv", "--pred", str(PRED_MIXED)], "error: missing.csv: file not found"),
])
def test_errors_are_one_line_with_exit_2(tmp_path, args, message):
    open_db(tmp_path / "e.db").conn.close()  # a database without the run (a missing one is refused before)
    p = run_cli(*args, db=tmp_path / "e.db")
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and message in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_bad_prediction_line_is_named_and_nothing_stored(tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"paper_id": "2103.0771", "relations": {"combination": "x"}}])
    db = tmp_path / "b.db"
    p = run_cli("score", "chimera", "--gold", str(GOLD), "--pred", str(bad), db=db)
    assert p.returncode == 2
    assert f"{bad}:1: relation 'combination' must be a list of relations, got a string" in p.stderr
    assert open_db(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_every_subcommand_has_help_and_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name, parser in sub.choices.items():
        assert parser.description and "Example:" in parser.description, name
        assert f"python -m audit {name}" in readme, name


def test_review_prints_what_changed_in_two_lines(tmp_path, capsys):
    """Without --json, `review` says what the review stored and changed, not 200 lines of metrics JSON."""
    db = tmp_path / "r.db"
    assert main(["--db", str(db), "score", "chimera", "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", f"replay:{JUDGE_LOG}", "--run", "r1"]) == 0
    capsys.readouterr()
    target = next(r for r in open_db(db).query("SELECT id, left, right FROM decisions WHERE judge_label = 'match'")
                  if r["left"] != r["right"])
    assert main(["review", "--db", str(db), "--run", "r1", "--decision", str(target["id"]), "--label", "no-match",
                 "--reviewer", "ana"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"#{target['id']} → no-match") and "F1" in lines[0]
    assert "1 decision reviewed, 1 overruled" in lines[1]  # the count with its noun, never "1 decisions"


def test_decisions_are_printed_as_they_are_read(db_with_run, db_path, capsys, monkeypatch):
    """`decisions` built the run's whole list before printing (1.3 GB at 344,000 decisions): it now prints each
    thousand (`DECISIONS_PRINTED_AT_ONCE`) as read, the same lines with the same #N as the pages."""
    from audit import cli
    from audit.views import RunView

    assert main(["decisions", "--db", str(db_path), "--run", "mixed"]) == 0
    whole = capsys.readouterr().out.splitlines()
    assert [json.loads(x)["decision"] for x in whole] == [f"#{n}" for n in range(1, len(whole) + 1)]
    real = RunView.iter_decisions

    def then_fail(self, doc=None):
        for n, d in enumerate(real(self, doc)):
            if n == 120:
                raise RuntimeError("stop reading here")
            yield d

    monkeypatch.setattr(RunView, "iter_decisions", then_fail)
    monkeypatch.setattr(cli, "DECISIONS_PRINTED_AT_ONCE", 50)
    assert len(whole) > 120
    assert main(["decisions", "--db", str(db_path), "--run", "mixed"]) == 1  # an internal error, said in one line
    printed = capsys.readouterr()
    assert "stop reading here" in printed.err
    assert printed.out.splitlines() == whole[:100]  # two batches printed before the third failed
