"""Issue 27, Security: secrets in judge endpoints, replay-log sidecars and judge replies reach neither the database
nor an export (scoring/judges/redact.py, openai_compat.py, replay.py, audit/outputs/export.py), and the slot probe
carries
the credentials the requests carry. Against the scripted server (devtools/judge_server.py)."""

from __future__ import annotations

import base64
import json
import secrets
import sqlite3
import uuid
from pathlib import Path

import pytest

from audit.outputs.export import export_json, export_run
from audit.runs import score_run
from audit.store.database import open_db
from devtools.judge_server import JudgeServer
from scoring.errors import InputError
from scoring.families.chimera.questions import read_span_log_line
from scoring.judges.openai_compat import OpenAIJudge
from scoring.judges.redact import MAX_FIELD_CHARS, public_value, redact_secrets, redact_url, url_secrets
from scoring.judges.registry import JudgeOptions
from scoring.judges.replay import MAX_META_BYTES, ReplayJudge
from tests.conftest import GOLD, PRED_MIXED

KEY = "sk-secret-test-key-0123456789abcdef"
PATH_TOKEN = "key-7f3a9c2e41b84d6f"
CHIMERA = {"gold": str(GOLD), "pred": str(PRED_MIXED)}


def stored_text(db_path: Path) -> str:
    """Everything the database holds (the WAL included), as SQL text."""
    with sqlite3.connect(db_path) as conn:
        return "\n".join(conn.iterdump())


def score_and_export(tmp_path: Path, spec: str, options: JudgeOptions | None = None) -> tuple[str, str, dict]:
    """(database text, JSON export text, the export) of one CHIMERA run scored with `spec`."""
    db = open_db(tmp_path / "s.db")
    score_run(db, "chimera", CHIMERA, spec, run="r", judge_options=options)
    exported = export_json(db, "r")
    judgelog = export_run(db, "r", "judgelog")
    return stored_text(tmp_path / "s.db"), json.dumps(exported) + judgelog, exported


# ---------------------------------------------------------------- 1. one redaction for endpoints


@pytest.mark.parametrize("make_token", [
    lambda: "key-" + secrets.token_hex(8), lambda: "sk-" + secrets.token_urlsafe(24), lambda: secrets.token_hex(20),
    lambda: secrets.token_urlsafe(32).replace("-", "x").replace("_", "y"), lambda: str(uuid.uuid4()),
    lambda: "hf_" + secrets.token_hex(12),
])
@pytest.mark.parametrize("template", ["https://h/v1/{t}", "https://h/{t}/v1", "http://u:p@h:8080/api/key/{t}/v1?x=1",
                                      "https://h/v1/{t}/"])
def test_no_secret_path_segment_survives_redaction(make_token, template: str) -> None:
    for _ in range(20):
        token = make_token()
        url = template.format(t=token)
        shown = redact_url(url)
        assert token not in shown and "[redacted]" in shown and shown.startswith(url.split(":")[0] + "://")
        assert token in url_secrets(url)  # so a message that echoes the URL is scrubbed too
        assert token not in redact_secrets(f"404: no route {url}/chat/completions", url_secrets(url))


@pytest.mark.parametrize("url", [
    "https://api.openai.com/v1", "http://127.0.0.1:8080/v1", "https://x.openai.azure.com/openai/deployments/gpt4o-prod",
    "https://api.together.xyz/v1/Meta-Llama-3.1-70B-Instruct-Turbo", "https://h/serving-endpoints/databricks-meta-"
    "llama-3-1-405b-instruct/invocations", "http://[::1]:8000/v1", "https://h/models/gpt-4o-mini-2024-07-18",
])
def test_ordinary_endpoints_are_shown_as_they_are(url: str) -> None:
    assert redact_url(url) == url


def test_a_key_in_the_endpoint_path_reaches_no_identity_cache_export_or_message(tmp_path: Path) -> None:
    with JudgeServer(api_key=KEY, root=f"/v1/{PATH_TOKEN}") as srv:
        options = JudgeOptions(base_url=srv.base_url, api_key=KEY, concurrency=4)
        stored, exported, data = score_and_export(tmp_path, "openai:test-model", options)
        assert srv.answered > 0 and data["judge"]["stats"]["missing"] == 0
        wrong = OpenAIJudge("m", base_url=srv.base_url.replace("/v1/", "/v2/"), api_key=KEY, concurrency=1,
                            max_retries=0, timeout=5)
        failure = wrong.ask_one(_question())
    assert data["judge"]["base_url"].endswith("/v1/[redacted]")
    for text in (stored, exported, failure.rationale or "", wrong.fatal or "", json.dumps(wrong.identity())):
        assert PATH_TOKEN not in text and KEY not in text
    assert "HTTP 404" in (failure.rationale or "")


# ---------------------------------------------------------------- 2. replay-log sidecars


def _replay_log(tmp_path: Path) -> Path:
    """A replay log of the CHIMERA demo (a run's judgelog export), without a sidecar."""
    db = open_db(tmp_path / "base.db")
    score_run(db, "chimera", CHIMERA, "exact", run="exact")
    log = tmp_path / "logs" / "judge.jsonl"
    log.parent.mkdir()
    log.write_text(export_run(db, "exact", "judgelog"), encoding="utf-8")
    return log


HOSTILE_META = {
    "judge_spec": "replay:/home/ana/secret-project/judge.jsonl",
    "model": {"alias": "m", "endpoint": f"http://ana:pw-SECRET-1@10.0.0.7:8080/v1/{PATH_TOKEN}?key=qk-SECRET-2",
              "api_key": "plain-SECRET-3", "weights": "/home/ana/secret-project/models/m.gguf"},
    "what": "judged with Bearer tok-SECRET-4a9 at C:\\Users\\ana\\secret-project\\run.jsonl",
    "params": {"temperature": 0, "nested": [[[["/srv/secret-project/deep"]]]], "huge": "x" * 40_000},
    "prompt_hash": "13bd4d51dfa0",
}
LEAKS = ("pw-SECRET-1", "qk-SECRET-2", "plain-SECRET-3", "tok-SECRET-4a9", PATH_TOKEN, "secret-project", "ana:")


def test_a_sidecars_endpoints_paths_and_keys_reach_neither_database_nor_export(tmp_path: Path) -> None:
    log = _replay_log(tmp_path)
    log.with_suffix(".meta.json").write_text(json.dumps(HOSTILE_META), encoding="utf-8")
    stored, exported, data = score_and_export(tmp_path, f"replay:{log}")
    source = data["judge"]["source"]
    assert source["prompt_hash"] == "13bd4d51dfa0" and source["model"]["alias"] == "m"  # still says who judged
    assert source["model"]["endpoint"] == "http://10.0.0.7:8080/v1/[redacted]"
    assert source["model"]["weights"] == "m.gguf" and source["judge_spec"] == "replay:judge.jsonl"
    for leak in LEAKS:
        assert leak not in exported, leak
        assert leak not in stored.replace(str(log), ""), leak  # the run's own spec names the log it replayed
    assert len(json.dumps(source)) < 4 * MAX_FIELD_CHARS  # a 40,000-character field is not copied


@pytest.mark.parametrize("size", [MAX_META_BYTES + 1, 2 * 1024 * 1024])
def test_an_oversized_sidecar_is_refused_naming_the_file(tmp_path: Path, size: int) -> None:
    log = _replay_log(tmp_path)
    meta = log.with_suffix(".meta.json")
    meta.write_text(json.dumps({"what": "x" * size}), encoding="utf-8")
    with pytest.raises(InputError, match="metadata is .* bytes; at most 64 KiB") as err:
        ReplayJudge(log, read_span_log_line)
    assert str(meta) in str(err.value)


@pytest.mark.parametrize(("meta", "message"), [
    ('{"params": {"seed": ' + "9" * 5000 + "}}", "integer of 5000 digits is too large"),  # was an internal error
    (b'{"what": "caf\xe9"}', "not valid JSON"), ("[1, 2", "not valid JSON"), ("[1, 2]", "must be a JSON object"),
])
def test_an_unreadable_sidecar_is_refused_clearly(tmp_path: Path, meta: str | bytes, message: str) -> None:
    log = _replay_log(tmp_path)
    sidecar = log.with_suffix(".meta.json")
    sidecar.write_bytes(meta if isinstance(meta, bytes) else meta.encode())
    with pytest.raises(InputError, match=message) as err:
        ReplayJudge(log, read_span_log_line)
    assert str(sidecar) in str(err.value)


def test_a_run_stored_with_an_unredacted_identity_exports_it_redacted(tmp_path: Path) -> None:
    """Runs stored before the redaction: the export redacts the endpoint and the sidecar fields again."""
    db = open_db(tmp_path / "old.db")
    score_run(db, "chimera", CHIMERA, "exact", run="old")
    identity = {"spec": "replay:/home/ana/secret-project/j.jsonl", "base_url": f"http://h/v1/{PATH_TOKEN}",
                "source": HOSTILE_META}
    db.execute("UPDATE runs SET judge_identity = ? WHERE name = 'old'", [json.dumps(identity)])
    db.conn.commit()
    exported = json.dumps(export_json(db, "old"))
    assert all(leak not in exported for leak in LEAKS)


def test_public_value_is_bounded_whatever_it_is_given() -> None:
    deep: object = "/home/ana/x"
    for _ in range(50):
        deep = {"k": [deep] * 60}
    out = json.dumps(public_value({"a": deep, "b": "y" * 10**6, "c": float("nan"), "d": 10**40}))
    assert len(out) < 200_000 and "home" not in out and "NaN" not in out


# ---------------------------------------------------------------- 3. replies that echo the key


def test_a_successful_reply_echoing_the_key_is_stored_without_it(tmp_path: Path) -> None:
    with JudgeServer(api_key=KEY, echo_auth_in_reply=True) as srv:
        options = JudgeOptions(base_url=srv.base_url, api_key=KEY, concurrency=4)
        stored, exported, data = score_and_export(tmp_path, "openai:test-model", options)
        assert srv.answered > 0
    assert data["judge"]["stats"]["invalid"] == 0  # the answers are read before the reply is redacted
    with sqlite3.connect(tmp_path / "s.db") as conn:
        raws = [r[0] for r in conn.execute("SELECT raw FROM judge_cache")]
    assert raws and all("Authorization: ***" in r for r in raws)
    assert KEY not in stored and KEY not in exported and "Bearer sk-" not in stored


def test_a_reply_echoing_basic_auth_from_the_url_is_stored_without_it(tmp_path: Path) -> None:
    with JudgeServer(basic_auth=("ana", "pw-SECRET-5"), echo_auth_in_reply=True, slots=2) as srv:
        url = srv.base_url.replace("http://", "http://ana:pw-SECRET-5@")
        stored, exported, data = score_and_export(tmp_path, "openai:test-model", JudgeOptions(base_url=url))
        assert srv.answered > 0 and data["judge"]["stats"]["missing"] == 0
    basic = base64.b64encode(b"ana:pw-SECRET-5").decode()
    for text in (stored, exported):
        assert "pw-SECRET-5" not in text and basic not in text


@pytest.mark.parametrize("text", [
    "The basic idea is the same: token counts differ.", "Both describe a key-value store with token-level labels.",
    "Keys: <answer>Yes</answer>", "A bearer bond is not a credential here.",
])
def test_ordinary_judge_reasoning_is_stored_as_written(text: str) -> None:
    assert redact_secrets(text, [KEY]) == text


# ---------------------------------------------------------------- 4. the slot probe carries the credentials


def test_the_slot_probe_with_user_info_in_the_url_gets_the_servers_slots() -> None:
    with JudgeServer(basic_auth=("ana", "pw-9"), slots=3, delay=0.05) as srv:
        url = srv.base_url.replace("http://", "http://ana:pw-9@")
        judge = OpenAIJudge("test-model", base_url=url, timeout=5)
        assert judge.concurrency == 3  # not 1: the probe was answered
        answers = judge.ask_many([_question(f"s{i}") for i in range(9)])
        assert {a.value for a in answers} == {"yes"} and srv.max_in_flight > 1
        assert srv.props_auth and set(srv.props_auth) == set(srv.auth_headers)  # the same credentials


def _question(span: str = "graph neural networks"):  # noqa: ANN202 (the family's question type)
    from scoring.families.chimera.questions import span_question

    return span_question("d1", "We combine graph neural networks with contrastive learning.", "comb-element", span,
                         span)
