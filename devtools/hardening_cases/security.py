"""Issue 27, Security: secrets in judge endpoints, replay-log sidecars and judge replies (and the slot probe).

Each `ok` case scores a CHIMERA run through the CLI against the scripted judge server (devtools/judge_server.py) or a
replay log, exports it (JSON and judge log), and its check greps the database file (and its WAL) and the exports
for every secret the case planted. The oversized sidecars must be refused naming the file. Tests:
tests/hardening/test_secrets.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from devtools.hardening_cases import Case2

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "chimera"
GOLD, PRED, LOG = DATA / "eval.csv", DATA / "pred_mixed.jsonl", DATA / "judge_mixed.jsonl"
KEY = "sk-hardening-key-5e1f0c9a7b3d"
PATH_TOKEN = "key-9c4e2a7f13b8d605"
GROUP = "security: secrets"


def _cli(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", "audit", *argv], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, **(env or {})}, timeout=120)
    return p.returncode, p.stderr


def _score_and_export(work: Path, db: Path, judge: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Score run `r` with `judge`, then export it as JSON and as a judge log into `work`."""
    status, err = _cli(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED),
                        "--judge", judge, "--run", "r"], env)
    if status != 0:
        return status, err
    for fmt, name in (("json", "export.json"), ("judgelog", "export.jsonl")):
        # every case exports into the same file: each replaces the one before (issue 34: only with --force)
        status, more = _cli(["export", "--db", str(db), "--run", "r", "--format", fmt, "--out", str(work / name),
                             "--force"])
        err += more
        if status != 0:
            return status, err
    return 0, err


def _stored(work: Path, db: Path) -> dict[str, bytes]:
    """What the case left behind: the database file, its WAL (if any) and the two exports."""
    files = [db, db.with_name(db.name + "-wal"), work / "export.json", work / "export.jsonl"]
    return {p.name: p.read_bytes() for p in files if p.is_file()}


def _no_secret(*secrets: str, allowed: Callable[[Path], list[str]] | None = None
               ) -> Callable[[Path, Path, str], str | None]:
    """A check: none of `secrets` in the database, its WAL, the exports or the command's stderr (`allowed(work)`:
    strings removed first, e.g. the replay log's own path, which the run's spec names)."""
    def check(work: Path, db: Path, stderr: str) -> str | None:
        if not (work / "export.json").is_file():
            return "no JSON export was written"
        keep = allowed(work) if allowed else []
        for name, data in {**_stored(work, db), "stderr": stderr.encode()}.items():
            for a in keep:
                data = data.replace(a.encode(), b"")
            leaked = [s for s in secrets if s.encode() in data]
            if leaked:
                return f"{', '.join(leaked)} found in {name}"
        return None
    return check


def _with_server(work: Path, db: Path, judge: str, url: Callable[[str], str], env: dict[str, str] | None = None,
                 **server: object) -> tuple[int, str]:
    from devtools.judge_server import JudgeServer

    with JudgeServer(**server) as srv:  # type: ignore[arg-type]
        status, err = _score_and_export(work, db, judge, {"OPENAI_BASE_URL": url(srv.base_url),
                                                          "REJUDGE_JUDGE_MAX_RETRIES": "1", **(env or {})})
        (work / "server.json").write_text(json.dumps({"slots": server.get("slots"), "answered": srv.answered,
                                                      "max_in_flight": srv.max_in_flight}))
    return status, err


def _judge_block(work: Path) -> dict:
    return json.loads((work / "export.json").read_text(encoding="utf-8"))["judge"]


def _all(*checks: Callable[[Path, Path, str], str | None]) -> Callable[[Path, Path, str], str | None]:
    def check(work: Path, db: Path, stderr: str) -> str | None:
        return next((p for c in checks if (p := c(work, db, stderr)) is not None), None)
    return check


def _slots_used(work: Path, _db: Path, _stderr: str) -> str | None:
    judge, server = _judge_block(work), json.loads((work / "server.json").read_text())
    if judge.get("concurrency") != server["slots"]:
        return f"concurrency {judge.get('concurrency')}, the server has {server['slots']} slots (probe failed?)"
    return None


def _usage_ignored(work: Path, _db: Path, _stderr: str) -> str | None:
    stats = _judge_block(work)["stats"]
    if stats.get("missing") or stats.get("prompt_tokens"):
        return f"usage 'n/a' was not ignored: {stats}"
    return None


# ---------------------------------------------------------------- sidecars

HOSTILE_META = {
    "judge_spec": "replay:/home/ana/secret-project/judge.jsonl",
    "model": {"alias": "m", "endpoint": f"http://ana:pw-SIDECAR-1@10.0.0.7:8080/v1/{PATH_TOKEN}?key=qk-SIDECAR-2",
              "api_key": "plain-SIDECAR-3", "weights": "/home/ana/secret-project/models/m.gguf"},
    "what": "judged with Bearer tok-SIDECAR-4a9 at C:\\Users\\ana\\secret-project\\run.jsonl",
    "params": {"temperature": 0, "huge": "x" * 40_000},
    "prompt_hash": "13bd4d51dfa0",
}
SIDECAR_LEAKS = ("pw-SIDECAR-1", "qk-SIDECAR-2", "plain-SIDECAR-3", "tok-SIDECAR-4a9", PATH_TOKEN, "secret-project",
                 "x" * 1000)


def _replay_folder(work: Path, name: str, meta: str | bytes) -> Path:
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "judge.jsonl"
    shutil.copyfile(LOG, log)
    sidecar = log.with_suffix(".meta.json")
    (sidecar.write_bytes if isinstance(meta, bytes) else sidecar.write_text)(meta)  # type: ignore[operator]
    return log


def _sidecar_case(work: Path) -> Case2:
    log = _replay_folder(work, "hostile-sidecar", json.dumps(HOSTILE_META))
    return Case2(GROUP, "replay sidecar: user:key@ URL, key in the path, local paths, api_key field, 40 KB field",
                 None, expect="ok", call=lambda w, db: _score_and_export(w, db, f"replay:{log}"),
                 check=_no_secret(*SIDECAR_LEAKS, allowed=lambda _w: [str(log)]))


def _refused_sidecar(work: Path, name: str, label: str, meta: str | bytes) -> Case2:
    log = _replay_folder(work, name, meta)
    return Case2(GROUP, label, ["score", "chimera", "--db", "{db}", "--gold", str(GOLD), "--pred", str(PRED),
                                "--judge", f"replay:{log}", "--run", "sidecar"], watch=[log.parent])


def cases(work: Path, base_db: Path) -> list[Case2]:  # noqa: ARG001 (every case gets its own database copy)
    server = {"api_key": KEY}
    out = [
        Case2(GROUP, "key in the endpoint path (…/v1/key-…): run identity, cache, export, messages", None, "ok",
              call=lambda w, db: _with_server(w, db, "openai:test-model", lambda u: u, {"OPENAI_API_KEY": KEY},
                                              root=f"/v1/{PATH_TOKEN}", **server),
              check=_no_secret(KEY, PATH_TOKEN)),
        Case2(GROUP, "successful replies echo the Authorization header (Bearer key)", None, "ok",
              call=lambda w, db: _with_server(w, db, "openai:test-model", lambda u: u, {"OPENAI_API_KEY": KEY},
                                              echo_auth_in_reply=True, **server),
              check=_no_secret(KEY, f"Bearer {KEY}")),
        Case2(GROUP, "user info in the URL: replies echo Basic auth; the slot probe gets the server's 3 slots", None,
              "ok", call=lambda w, db: _with_server(w, db, "openai:test-model",
                                                    lambda u: u.replace("http://", "http://ana:pw-BASIC-77@"),
                                                    echo_auth_in_reply=True, basic_auth=("ana", "pw-BASIC-77"),
                                                    slots=3),
              check=_all(_no_secret("pw-BASIC-77", "YW5hOnB3LUJBU0lDLTc3"), _slots_used)),
        Case2(GROUP, "query string credentials (?api_key=…) and a key in the path", None, "ok",
              call=lambda w, db: _with_server(w, db, "openai:test-model",
                                              lambda u: u + "?api_key=qk-QUERY-5150", {"OPENAI_API_KEY": KEY},
                                              root=f"/{PATH_TOKEN}/v1", **server),
              check=_no_secret(KEY, PATH_TOKEN, "qk-QUERY-5150")),
        Case2(GROUP, "a reply whose usage block is non-numeric ('n/a')", None, "ok",
              call=lambda w, db: _with_server(w, db, "openai:test-model", lambda u: u, {"OPENAI_API_KEY": KEY},
                                              usage_value="n/a"),
              check=_all(_no_secret(KEY), _usage_ignored)),
        _sidecar_case(work),
        _refused_sidecar(work, "sidecar-64k", "replay sidecar of 64 KiB + 1 byte",
                         json.dumps({"what": "x" * (64 * 1024)})),
        _refused_sidecar(work, "sidecar-2mb", "replay sidecar with a 2 MB field",
                         json.dumps({"judge_spec": "openai:m", "what": "y" * (2 * 1024 * 1024)})),
        _refused_sidecar(work, "sidecar-bigint", "replay sidecar with a 5,000-digit integer",
                         '{"judge_spec": "openai:m", "params": {"seed": ' + "9" * 5000 + "}}"),
        _refused_sidecar(work, "sidecar-latin1", "replay sidecar with a Latin-1 byte", b'{"what": "caf\xe9"}'),
    ]
    return out
