"""Judge logs written by every run replay to identical metrics; judge-vs-judge comparison."""

import json

from audit.cli import main
from audit.outputs.compare import compare_runs
from audit.store.database import open_db
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED


def test_score_writes_a_judge_log_that_replays_to_the_same_numbers(tmp_path, capsys):
    """The log is where the user asks (`--judge-log`), never a file named after the run beside the database."""
    db = tmp_path / "j.db"
    log = tmp_path / "out" / "my.log.jsonl"
    log.parent.mkdir()
    assert main(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", "fuzzy:80", "--run", "fz", "--judge-log", str(log)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in tmp_path.iterdir()
                                                                  if not p.name.endswith(".judge.jsonl"))
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == first["judge"]["distinct_queries"]
    assert main(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", f"replay:{log}", "--run", "fz-replay"]) == 0
    second = json.loads(capsys.readouterr().out)
    for section in ("classification", "entities", "relations"):
        assert second[section] == first[section]
    assert second["judge"]["missing"] == 0
    assert main(["export", "--db", str(db), "--run", "fz", "--format", "judgelog"]) == 0
    assert capsys.readouterr().out == log.read_text()


def test_compare_two_judges(tmp_path, capsys):
    db = tmp_path / "c.db"
    for name, judge in (("exact", "exact"), ("replay", f"replay:{JUDGE_LOG}")):
        assert main(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                     "--judge", judge, "--run", name]) == 0
    capsys.readouterr()
    res = compare_runs(open_db(db), "exact", "replay", n_resamples=100)
    assert res["shared"] == open_db(db).execute("SELECT n_decisions FROM runs WHERE name='exact'").fetchone()[0]
    assert res["differ"] and all(d["a"] != d["b"] for d in res["differ"])
    assert res["stats"]["n"] == res["shared"]
    assert res["stats"]["raw_agreement"] == 1 - len(res["differ"]) / res["shared"]
    assert main(["compare", "--db", str(db), "--run", "exact", "--other", "replay"]) == 0
    assert json.loads(capsys.readouterr().out)["shared"] == res["shared"]
