"""`python -m audit judge-batch` (audit/judge_batch.py): Batch API request files out, result files in, against the
scripted local server (devtools/judge_server.py) standing in for the batch engine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from audit.cli import main
from audit.judge_batch import export_requests, import_results
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import decisions
from devtools.batch_round_trip import (
    batch_round_trip,
    read_jsonl,
    round_trip_inputs,
    run_batch,
    scripted_endpoint,
)
from devtools.judge_server import JudgeServer
from scoring.errors import InputError
from scoring.families import TASKS
from scoring.families.chimera.questions import SpanQuery

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
    assert "the file exists" in capsys.readouterr().err  # requests.jsonl is never replaced without --force
    assert main(["--db", db, "judge-batch", "export", *common[:-1], "exact", "--out", str(req), "--force"]) == 2
    assert "needs an LLM judge" in capsys.readouterr().err
    assert main(["--db", db, "judge-batch", "import", *common]) == 2
    assert "needs the results file" in capsys.readouterr().err
    assert main(["--db", db, "judge-batch", "import", str(tmp_path / "none.jsonl"), *common]) == 2
    assert "results file not found" in capsys.readouterr().err


@pytest.mark.parametrize("family", sorted(TASKS))
def test_every_family_round_trips_through_a_batch_or_is_refused(family: str, tmp_path: Path) -> None:
    """export -> results answering every request -> import -> score sends 0 requests, for each family whose judge
    is an LLM; the others are refused with a message saying they ask no model (devtools/batch_round_trip.py)."""
    got = batch_round_trip(family, tmp_path)
    llm_families = {"chimera", "ideation"}
    assert (got is not None) == (family in llm_families)
    if got is not None:
        assert got["imported"] == got["exported"] > 0 and got["cached"] >= got["exported"]
        assert len(got["values"]) > 1  # more than one answer of the vocabulary came through


@pytest.mark.parametrize("family", ["chimera", "ideation"])
def test_batch_import_caches_exactly_what_a_live_run_caches(family: str, tmp_path: Path) -> None:
    """One cacheability rule: the cache rows (key, value) after a batch import equal those of a live run asked
    the same replies."""
    inputs = round_trip_inputs(family)
    with scripted_endpoint() as srv:
        live = open_db(tmp_path / "live.db")
        score_run(live, family, inputs, SPEC, run="live")
        batch = open_db(tmp_path / "batch.db")
        req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
        export_requests(batch, family, inputs, SPEC, req)
        run_batch(srv, req, res)
        import_results(batch, family, inputs, SPEC, res)

    def rows(db: object) -> dict:
        query = "SELECT key, value, prompt_hash FROM judge_cache"
        return {r["key"]: (r["value"], r["prompt_hash"]) for r in db.query(query)}  # type: ignore[attr-defined]

    assert rows(batch) == rows(live) and len(rows(live)) > 0
    assert None not in {h for _, h in rows(live).values()}


def test_unreadable_replies_are_cached_invalid_as_live_ones_are(tmp_path: Path) -> None:
    def mostly_unreadable(prompt: str) -> str:
        return "<answer>Yes</answer>" if "<span1>\nx" in prompt else "I am not sure."

    with scripted_endpoint(mostly_unreadable) as srv:
        db = open_db(tmp_path / "b.db")
        req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
        n = export_requests(db, "chimera", INPUTS, SPEC, req)["exported"]
        run_batch(srv, req, res)
        report = import_results(db, "chimera", INPUTS, SPEC, res)
        assert report["problems"] == 0 and report["imported"] == n and report["values"].get("invalid", 0) > n / 2
        srv.reset_counts()
        row = score_run(db, "chimera", INPUTS, SPEC, run="r")
        assert srv.requests == 0 and row["summary"]["judge"]["invalid"] == report["values"]["invalid"]


def test_an_answer_outside_the_questions_vocabulary_is_a_problem_line(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Never silently dropped: a reply read as a value the question does not declare is reported, line by line."""
    with scripted_endpoint() as srv:
        db = open_db(tmp_path / "v.db")
        req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
        n = export_requests(db, "chimera", INPUTS, SPEC, req)["exported"]
        run_batch(srv, req, res)
        monkeypatch.setattr(SpanQuery, "answers", ("yes",))  # as if the question allowed only yes
        report = import_results(db, "chimera", INPUTS, SPEC, res)
    noes = n - report["values"].get("yes", 0)
    assert noes > 0 and report["problems"] == noes and report["imported"] == n - noes
    assert all("'no' is not one this question allows (yes)" in p["reason"] for p in report["problem_lines"])


def test_results_are_read_by_the_one_json_lines_reader(server: JudgeServer, tmp_path: Path) -> None:
    """A raw U+2028 inside a reply stays in its line (str.splitlines would cut it); a Latin-1 byte is an error at
    its line, not a silently replaced character."""
    db = open_db(tmp_path / "u.db")
    req, res = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    n = export_requests(db, "chimera", INPUTS, SPEC, req)["exported"]
    run_batch(server, req, res)
    good = read_jsonl(res)
    for r in good:
        msg = r["response"]["body"]["choices"][0]["message"]
        msg["content"] = "<justification>one\u2028two</justification>\n" + msg["content"]
    res.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in good).encode())
    report = import_results(db, "chimera", INPUTS, SPEC, res)
    assert report["problems"] == 0 and report["imported"] == report["lines"] == n
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(res.read_bytes().replace(b"two", b"tw\xf6", 1))
    with pytest.raises(InputError, match=r"bad\.jsonl:1: not valid UTF-8"):
        import_results(db, "chimera", INPUTS, SPEC, bad)


def test_an_error_result_quoting_a_key_is_reported_without_it(server: JudgeServer, tmp_path: Path) -> None:
    db = open_db(tmp_path / "batch.db")
    req, res = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    export_requests(db, "chimera", INPUTS, SPEC, req)
    run_batch(server, req, res)
    good = read_jsonl(res)
    key = "sk-proj-" + "Zq81" * 8
    bad = {**good[0], "response": None,
           "error": {"code": 401, "message": f"Incorrect API key provided: {key}. Authorization: Bearer {key}"}}
    res.write_text("".join(json.dumps(r) + "\n" for r in [bad, *good[1:]]), encoding="utf-8")
    report = import_results(db, "chimera", INPUTS, SPEC, res)
    reason = report["problem_lines"][0]["reason"]
    assert reason.startswith("error 401 Incorrect API key") and key not in json.dumps(report)
