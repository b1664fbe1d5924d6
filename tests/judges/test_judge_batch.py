"""`python -m audit judge-batch` (audit/judge_batch.py): Batch API request files out, result files in, against the
scripted local server (tests/judge_server.py) standing in for the batch engine."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from audit.cli import main
from audit.judge_batch import export_requests, import_results
from audit.runs import score_run
from audit.store import open_db
from audit.views import decisions
from tests.judge_server import JudgeServer

ROOT = Path(__file__).resolve().parents[2]
GOLD = str(ROOT / "data/chimera/eval.csv")
MIXED = str(ROOT / "data/chimera/pred_mixed.jsonl")
INPUTS = {"gold": GOLD, "pred": MIXED}
SPEC = "openai:test-model"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    with JudgeServer() as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-batch-test-key")
        monkeypatch.setenv("REJUDGE_JUDGE_BACKOFF", "0.001")
        monkeypatch.delenv("REJUDGE_JUDGE_CONCURRENCY", raising=False)
        monkeypatch.delenv("REJUDGE_JUDGE_JSON_DIALECT", raising=False)
        yield srv


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_batch(srv: JudgeServer, requests: Path, results: Path) -> None:
    """What a batch engine does with a request file: POST each body, write one result line per request."""
    out = []
    for i, req in enumerate(read_jsonl(requests)):
        assert req["method"] == "POST" and req["url"] == "/v1/chat/completions"
        http = urllib.request.Request(srv.base_url + "/chat/completions", data=json.dumps(req["body"]).encode(),
                                      headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(http, timeout=10) as r:  # noqa: S310 (the local test server)
            body = json.loads(r.read())
        out.append({"id": f"batch_req_{i}", "custom_id": req["custom_id"],
                    "response": {"status_code": 200, "request_id": f"req_{i}", "body": body}, "error": None})
    results.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")


def labels(db: object, run: str) -> dict:
    return {(d["doc"], d["type"], d["left"], d["right"]): d["judge"] for d in decisions(db, run)}  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", [SPEC, "openai-json:test-model"])
def test_export_writes_exactly_what_the_live_judge_sends(server: JudgeServer, tmp_path: Path, spec: str) -> None:
    req = tmp_path / "requests.jsonl"
    report = export_requests(open_db(tmp_path / "batch.db"), "chimera", INPUTS, spec, req)
    assert server.requests == 0  # exporting asks nothing
    lines = read_jsonl(req)
    assert report["exported"] == len(lines) == report["questions"] > 100 and report["cached"] == 0
    assert len({r["custom_id"] for r in lines}) == len(lines)

    live_db = open_db(tmp_path / "live.db")
    row = score_run(live_db, "chimera", INPUTS, spec, run="live")
    assert row["summary"]["judge"]["requests"] == server.requests == len(lines)
    sent = sorted(json.dumps(b, sort_keys=True) for b in server.bodies)
    assert sent == sorted(json.dumps(r["body"], sort_keys=True) for r in lines)
    keys = {r["key"] for r in live_db.query("SELECT key FROM judge_cache")}
    assert keys == {r["custom_id"] for r in lines}  # custom_id = the live judge's cache key
    assert report["prompt_hash"] == row["judge_identity"]["prompt_hash"]
    assert all(("response_format" in r["body"]) == spec.startswith("openai-json") for r in lines)


def test_import_fills_the_cache_and_score_sends_nothing(server: JudgeServer, tmp_path: Path) -> None:
    db = open_db(tmp_path / "batch.db")
    req, res = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    n = export_requests(db, "chimera", INPUTS, SPEC, req)["exported"]
    run_batch(server, req, res)
    report = import_results(db, "chimera", INPUTS, SPEC, res)
    assert report["imported"] == n and report["problems"] == 0 and report["remaining"] == 0
    assert sum(report["values"].values()) == n and set(report["values"]) <= {"yes", "no"}
    server.reset_counts()
    row = score_run(db, "chimera", INPUTS, SPEC, run="from-batch")
    assert server.requests == 0 and row["summary"]["judge"]["cached"] == n and row["summary"]["judge"]["requests"] == 0
    exact = score_run(db, "chimera", INPUTS, "exact", run="exact")  # the script answers as `exact` does
    assert labels(db, "from-batch") == labels(db, "exact")
    assert row["original_metrics"] == exact["original_metrics"]
    # importing again changes nothing; exporting again writes no request
    again = import_results(db, "chimera", INPUTS, SPEC, res)
    assert again["imported"] == 0 and again["already_cached"] == n
    assert export_requests(db, "chimera", INPUTS, SPEC, req)["exported"] == 0 and read_jsonl(req) == []


def test_bad_result_lines_are_reported_and_never_cached(server: JudgeServer, tmp_path: Path) -> None:
    db = open_db(tmp_path / "batch.db")
    req, res = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    n = export_requests(db, "chimera", INPUTS, SPEC, req)["exported"]
    run_batch(server, req, res)
    good = read_jsonl(res)
    bad = [
        {**good[0], "custom_id": "f" * 64},  # unknown
        {**good[1], "response": None, "error": {"code": "batch_expired", "message": "not run in time"}},
        {**good[2], "response": {"status_code": 429, "body": {"error": {"message": "rate limited"}}}},
        {**good[3], "response": {"status_code": 200, "body": {"choices": []}}},
        good[4], good[4],  # repeated: the first counts
    ]
    text = "".join(json.dumps(r) + "\n" for r in bad + good[5:-1]) + json.dumps(good[-1])[:40]  # cut off
    res.write_text(text, encoding="utf-8")
    report = import_results(db, "chimera", INPUTS, SPEC, res)
    reasons = [p["reason"] for p in report["problem_lines"]]
    assert report["problems"] == 6 == len(reasons)
    assert reasons[0].startswith("unknown custom_id") and reasons[1].startswith("error batch_expired")
    assert reasons[2] == "HTTP 429: rate limited" and reasons[3].startswith("malformed response")
    assert reasons[4].startswith("custom_id repeated") and reasons[5].startswith("not valid JSON")
    assert [p["line"] for p in report["problem_lines"]] == [1, 2, 3, 4, 6, len(good) + 1]  # 6 bad, 5: good, cut
    assert report["imported"] == n - 5 and report["remaining"] == 5  # good[1..3] and good[-1] failed; good[0] renamed
    cached = {r["key"] for r in db.query("SELECT key FROM judge_cache")}
    assert not cached & {good[i]["custom_id"] for i in (0, 1, 2, 3)} and good[-1]["custom_id"] not in cached
    server.reset_counts()
    row = score_run(db, "chimera", INPUTS, SPEC, run="rest")  # the live judge asks only what is left
    assert server.requests == row["summary"]["judge"]["requests"] == 5


def test_the_cli_round_trip_and_its_errors(server: JudgeServer, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "cli.db")
    req, res = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    common = ["--task", "chimera", "--gold", GOLD, "--pred", MIXED, "--judge", SPEC]
    assert main(["--db", db, "judge-batch", "export", *common, "--out", str(req)]) == 0
    exported = json.loads(capsys.readouterr().out)["exported"]
    run_batch(server, req, res)
    res.write_text(res.read_text() + '{"custom_id": "nope", "response": {}}\n', encoding="utf-8")
    assert main(["--db", db, "judge-batch", "import", str(res), *common]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["imported"] == exported and "warning: line" in captured.err
    server.reset_counts()
    assert main(["--db", db, "score", "chimera", "--gold", GOLD, "--pred", MIXED, "--judge", SPEC]) == 0
    assert server.requests == 0
    capsys.readouterr()
    assert main(["--db", db, "judge-batch", "export", *common[:-1], "exact", "--out", str(req)]) == 2
    assert "needs an LLM judge" in capsys.readouterr().err
    assert main(["--db", db, "judge-batch", "import", *common]) == 2
    assert "needs the results file" in capsys.readouterr().err
    assert main(["--db", db, "judge-batch", "import", str(tmp_path / "none.jsonl"), *common]) == 2
    assert "results file not found" in capsys.readouterr().err
