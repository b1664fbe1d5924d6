"""Issue 34, silent acceptances of the judges: what the run says answered is what answered.

- a reply holding a lone surrogate (`\\ud800`, which UTF-8 cannot store) is one invalid answer, not the end of the run;
- `judge-batch import` refuses (as a problem line, never cached) a result whose `body.model` is another model than
  the configured judge's, and accepts a dated snapshot of it (`test-model-2024-07-18`);
- a replay log's `.meta.json` is shown as what the sidecar claims, never as the judge that answered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from audit.judge_batch import export_requests, import_results
from audit.runs import score_run
from audit.store.database import open_db
from devtools.batch_round_trip import run_batch
from devtools.hardening_cases.r3_inputs import RELATIONS, gold_csv, judge_log
from devtools.judge_server import JudgeServer
from scoring.judges.replay import SIDECAR_NOTE

SPEC = "openai:test-model"


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, str]:
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"paper_id": "p1", "relations": RELATIONS}) + "\n")
    return {"gold": str(gold_csv(tmp_path / "gold.csv")), "pred": str(pred)}


def _server(monkeypatch: pytest.MonkeyPatch, srv: JudgeServer) -> JudgeServer:
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-r3-test-key")
    monkeypatch.setenv("REJUDGE_JUDGE_BACKOFF", "0.001")
    monkeypatch.delenv("REJUDGE_JUDGE_CONCURRENCY", raising=False)
    monkeypatch.delenv("REJUDGE_JUDGE_JSON_DIALECT", raising=False)
    return srv


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    with JudgeServer() as srv:
        yield _server(monkeypatch, srv)


def test_a_reply_with_a_lone_surrogate_is_one_invalid_answer(monkeypatch, tmp_path: Path, inputs) -> None:
    replies = iter(["<answer>yes</answer> \ud800"] + ["<answer>yes</answer>"] * 20)
    with JudgeServer(lambda _prompt: next(replies)) as srv:
        _server(monkeypatch, srv)
        row = score_run(open_db(tmp_path / "live.db"), "chimera", inputs, SPEC, run="live")
    judge = row["summary"]["judge"]
    assert judge["invalid"] == 1, judge
    assert judge["requests"] >= 2


def _results(server: JudgeServer, tmp_path: Path, inputs: dict, model: str) -> tuple[object, Path]:
    db = open_db(tmp_path / "batch.db")
    req, res = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    export_requests(db, "chimera", inputs, SPEC, req)
    run_batch(server, req, res)
    lines = [json.loads(x) for x in res.read_text(encoding="utf-8").splitlines()]
    for r in lines:
        r["response"]["body"]["model"] = model
    res.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return db, res


def test_batch_results_of_another_model_are_not_cached_as_the_configured_one(server, tmp_path: Path,
                                                                              inputs) -> None:
    db, res = _results(server, tmp_path, inputs, "gpt-4o")
    with pytest.raises(Exception, match="answered by model 'gpt-4o', not the judge's 'test-model'"):
        import_results(db, "chimera", inputs, SPEC, res)  # every line refused: nothing to import
    assert next(iter(db.query("SELECT COUNT(*) AS n FROM judge_cache")))["n"] == 0


def test_batch_results_of_a_dated_snapshot_of_the_model_are_cached(server, tmp_path: Path, inputs) -> None:
    db, res = _results(server, tmp_path, inputs, "test-model-2024-07-18")
    report = import_results(db, "chimera", inputs, SPEC, res)
    assert report["problems"] == 0 and report["imported"] > 0


def test_a_replay_sidecar_is_shown_as_a_claim(tmp_path: Path, inputs) -> None:
    """Documented in README (judge logs): the sidecar names what the log's writer says answered; the run's judge
    stays `replay:` and the identity says the source is the sidecar's unverified claim."""
    log = judge_log(tmp_path / "log.jsonl")
    (tmp_path / "log.meta.json").write_text(json.dumps({"judge_spec": "openai:gpt-4o", "model": "gpt-4o"}))
    row = score_run(open_db(tmp_path / "r.db"), "chimera", inputs, f"replay:{log}", run="r")
    ident = row["judge_identity"]
    assert row["judge_spec"].startswith("replay:")
    assert ident["source"]["judge_spec"] == "openai:gpt-4o"
    assert ident["source_note"] == SIDECAR_NOTE
