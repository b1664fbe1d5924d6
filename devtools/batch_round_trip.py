"""The judge-batch round trip, per family: `judge-batch export` -> a results file answering every request (the
scripted server of devtools/judge_server.py standing in for the batch engine) -> `import` -> `score` with the same
judge sends 0 requests. For a family whose judge asks no LLM, the batch path must refuse, saying so.

`batch_round_trip(family, tmp_path)` is what a family contract battery calls (tests/families/test_contract.py),
once per registered family.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from audit.demo import DATA
from audit.errors import AuditError
from audit.judge_batch import export_requests, import_results
from audit.runs import score_run
from audit.store.database import open_db
from devtools.judge_server import JudgeServer, equal_spans_script, spans_of
from scoring.families import get_task

SPEC = "openai:test-model"
"""The live judge of the round trip (a text-mode LLM judge every LLM family takes)."""


def any_family_script(prompt: str) -> str:
    """A scripted judge that answers every family's prompt in its format, deterministically and with every
    answer of the vocabulary in use: CHIMERA span pairs yes iff equal (as `exact`), ideation ratings 1-5 and
    verdicts FIRST / SECOND / TIE chosen by the prompt's hash."""
    if spans_of(prompt) is not None:
        return equal_spans_script(prompt)
    pick = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if "SCORE: <n>" in prompt:
        return f"The idea is plausible.\nSCORE: {1 + pick % 5}"
    if "WINNER:" in prompt:
        return f"One idea is clearer.\nWINNER: {('FIRST', 'SECOND', 'TIE')[pick % 3]}"
    return "I cannot tell."


@contextmanager
def scripted_endpoint(script: Callable[[str], str] = any_family_script) -> Iterator[JudgeServer]:
    """A scripted server, with the environment pointing the openai judge at it (restored afterwards)."""
    with JudgeServer(script) as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_BASE_URL", srv.base_url)
        mp.setenv("OPENAI_API_KEY", "sk-batch-test-key")
        mp.setenv("REJUDGE_JUDGE_BACKOFF", "0.001")
        for name in ("REJUDGE_JUDGE_CONCURRENCY", "REJUDGE_JUDGE_JSON_DIALECT", "REJUDGE_PRICES"):
            mp.delenv(name, raising=False)
        yield srv


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


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


def round_trip_inputs(family: str) -> dict[str, str]:
    """The inputs of the family's first demo run (the documents whose questions are batched)."""
    return dict(get_task(family).demo_runs(DATA)[0].inputs)


def batch_round_trip(family: str, tmp_path: Path, spec: str = SPEC) -> dict | None:
    """Export -> answer every request -> import -> score with the same judge, asserting that the import caches
    every answer (no problem line, nothing left) and the score then sends 0 requests.

    Returns:
        {"exported", "imported", "values", "cached"} for a family whose judge is an LLM; None for a family
        whose judge asks no LLM, after asserting that export refuses it with a message saying so.
    """
    inputs = round_trip_inputs(family)
    db = open_db(tmp_path / f"batch-{family}.db")
    req, res = tmp_path / f"requests-{family}.jsonl", tmp_path / f"results-{family}.jsonl"
    with scripted_endpoint() as srv:
        try:
            exported = export_requests(db, family, inputs, spec, req)["exported"]
        except AuditError as e:
            assert "asks no model" in str(e) and spec in str(e), f"{family}: unclear refusal: {e}"
            assert srv.requests == 0
            return None
        assert exported > 0 and srv.requests == 0, (family, exported)
        run_batch(srv, req, res)
        report = import_results(db, family, inputs, spec, res)
        assert report["problems"] == 0, (family, report["problem_lines"][:3])
        assert report["imported"] == exported and report["remaining"] == 0, (family, report)
        srv.reset_counts()
        row = score_run(db, family, inputs, spec, run=f"{family}-from-batch")
        stats = row["summary"]["judge"]
        assert srv.requests == 0 and stats["requests"] == 0, (family, srv.requests, stats)
        # every question answered from the cache (questions with the same prompt share one request)
        assert stats["cached"] == stats["distinct_queries"] >= exported, (family, stats)
    return {"exported": exported, "imported": report["imported"], "values": report["values"],
            "cached": stats["cached"]}
