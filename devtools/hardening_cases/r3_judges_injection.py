"""Issue 34 (third round): judges and load, and injection. Gathered by `bench/hardening.py` with the other
`Case2` modules (see `__init__.py`).

- Judges: a server that drips its reply one byte at a time (each read in time, the request never done), a 60 MB
  reply without a length, the same as a gzip bomb, and a redirect to another host. Each must be refused (exit 2,
  nothing stored) quickly, with an error that names the limit and its setting (or both URLs); the case checks the
  wording and the time itself and reports exit 3 with the reason when they are wrong.
- Injection: formula text in every CSV export (also behind a blank, an invisible character, full width), LaTeX
  commands and unbalanced braces in the LaTeX export, markup in the offline report (its CSP must allow inline
  script by hash only), and a URL in the data on the ideation document page (no live link).

Tests: tests/judges/test_judge_limits.py, tests/hardening/test_r3_csv_injection.py,
tests/hardening/test_r3_latex_injection.py, tests/app/test_r3_no_autolinks.py, tests/e2e/test_r3_report_injection.py.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from devtools.hardening_cases import Case2

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "chimera"
GOLD, PRED = DATA / "eval.csv", DATA / "pred_mixed.jsonl"
RUN = "base"
JUDGES, INJECTION = "r3: judges and load", "r3: injection"
FORMULAS = ["=1+1", " =HYPERLINK(\"http://evil.invalid\")", "\t=1", "\uff1dcmd|'/C calc'!A0", "\u200b@SUM(A1)",
            "\u3000+1+1", "-1+1"]
TEX = [r"\input{/etc/passwd}", r"\immediate\write18{touch /tmp/pwned}", r"\url{http://evil.invalid}", "}}{ {"]
MARKUP = ['<img src=x onerror="window.__pwned=1">', "</script><script>window.__pwned=2</script>"]


def _cli(argv: list[str], env: dict[str, str] | None = None, timeout: float = 300) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", "audit", *argv], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, **(env or {})}, timeout=timeout)
    return p.returncode, p.stderr


def _judge_case(name: str, server: dict, env: dict[str, str], says: Callable[[str, str], list[str]] | list[str],
                within: float) -> Case2:
    """Score a run against the scripted judge server configured by `server`; refused within `within` seconds,
    with an error holding every string `says` lists (or `says(endpoint, other server)` gives)."""
    def call(work: Path, db: Path) -> tuple[int, str]:  # noqa: ARG001
        from devtools.judge_server import JudgeServer

        with JudgeServer() as other:
            opts = {k: (other.base_url.removesuffix("/v1") if v == "{other}" else v) for k, v in server.items()}
            with JudgeServer(**opts) as srv:  # type: ignore[arg-type]
                start = time.monotonic()
                status, err = _cli(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED),
                                    "--judge", "openai:test-model", "--run", "r3"],
                                   {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-r3-hardening",
                                    "REJUDGE_JUDGE_MAX_RETRIES": "0", "REJUDGE_JUDGE_CONCURRENCY": "1", **env})
                took = time.monotonic() - start
                expected = says(srv.base_url, other.base_url) if callable(says) else says
        missing = [s for s in expected if s not in err]
        if status == 2 and (missing or took > within):
            why = f"the error does not say {missing}" if missing else f"took {took:.0f} s (> {within:g} s)"
            return 3, err + f"\ncase: {why}\n"
        return status, err
    return Case2(JUDGES, name, None, "refuse", call=call)


def _planted_export(fmt: str, check: Callable[[str], str | None], plant: Callable) -> Case2:
    def call(work: Path, db: Path) -> tuple[int, str]:
        from audit.store.database import open_db

        conn = open_db(db)
        try:
            plant(conn)
        finally:
            conn.conn.close()
        return _cli(["export", "--db", str(db), "--run", RUN, "--format", fmt, "--out", str(work / f"r3.{fmt}")])

    def judge(work: Path, db: Path, stderr: str) -> str | None:  # noqa: ARG001
        return check((work / f"r3.{fmt}").read_text(encoding="utf-8"))
    return Case2(INJECTION, f"export --format {fmt} with hostile text in every field", None, "ok", call=call,
                 check=judge)


def _plant_text(conn, texts: list[str]) -> None:  # noqa: ANN001 (sqlite_utils Database)
    """`texts` in the base run's spans and types (stored metrics too), and as review notes."""
    from audit.review.reviews import add_review

    run_id = conn.execute("SELECT id FROM runs WHERE name = ?", [RUN]).fetchone()[0]
    ids = [r[0] for r in conn.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id", [run_id])]
    types = [r[0] for r in conn.execute("SELECT DISTINCT type FROM decisions WHERE run_id = ? ORDER BY type",
                                        [run_id])]
    metrics = conn.execute("SELECT original_metrics FROM runs WHERE id = ?", [run_id]).fetchone()[0]
    with conn.conn:
        for i, t in enumerate(texts):
            conn.execute("UPDATE decisions SET left = ?, right = ? WHERE id = ?", [t + f" L{i}", t + f" R{i}", ids[i]])
        for t, h in zip(types, texts, strict=False):
            conn.execute("UPDATE decisions SET type = ? WHERE run_id = ? AND type = ?", [h, run_id, t])
            metrics = metrics.replace(json.dumps(t), json.dumps(h))
        conn.execute("UPDATE runs SET original_metrics = ? WHERE id = ?", [metrics, run_id])
    for i, t in enumerate(texts):
        add_review(conn, RUN, ids[i], "match", f"r3-{i}", note=t)


def _no_formula(text: str) -> str | None:
    from devtools.injection_oracles import runs_as_formula

    live = [c for row in csv.reader(io.StringIO(text)) for c in row if runs_as_formula(c)]
    return f"{len(live)} cells a spreadsheet would run, e.g. {live[0]!r}" if live else None


def _literal_tex(text: str) -> str | None:
    from devtools.injection_oracles import OURS, control_words

    extra = control_words(text) - OURS
    return f"control words of the data survive: {sorted(extra)}" if extra else None


def _report_case() -> Case2:
    def call(work: Path, db: Path) -> tuple[int, str]:
        from audit.store.database import open_db

        conn = open_db(db)
        try:
            _plant_text(conn, MARKUP)
        finally:
            conn.conn.close()
        return _cli(["report", "--db", str(db), "--run", RUN, "--out", str(work / "r3.report.html")])

    def check(work: Path, db: Path, stderr: str) -> str | None:  # noqa: ARG001
        page = (work / "r3.report.html").read_text(encoding="utf-8")
        script_src = re.search(r"script-src ([^;\"]*)", page)
        if script_src is None or "'unsafe-inline'" in script_src.group(1):
            return "the report's CSP allows inline script without a hash"
        if any(m in page for m in MARKUP) or "window.__pwned" not in page:
            return "planted markup is in the report unescaped (or was not planted)"
        return None
    return Case2(INJECTION, "report with markup in spans, types and notes; CSP by hash", None, "ok", call=call,
                 check=check)


def _links_case() -> Case2:
    def call(work: Path, db: Path) -> tuple[int, str]:  # noqa: ARG001
        from devtools.injection_oracles import PLANT, live_links
        from ui.text import md_literal

        found = live_links(md_literal("an idea" + PLANT))
        return (0, "") if not found else (0, f"live: {found}")
    def check(work: Path, db: Path, stderr: str) -> str | None:  # noqa: ARG001
        return stderr or None
    return Case2(INJECTION, "a URL, www. address and e-mail in data shown as Markdown make no link", None, "ok",
                 call=call, check=check)


def cases(work: Path, base_db: Path) -> list[Case2]:  # noqa: ARG001 (every case gets its own database copy)
    limit_says = ("REJUDGE_JUDGE_MAX_REPLY_BYTES", "larger than 1,048,576 bytes")
    return [
        _judge_case("a server that drips its reply at 1 byte per 20 ms (deadline 1 s)", {"drip": 0.02},
                    {"REJUDGE_JUDGE_TIMEOUT": "1"}, ["within 1 s", "REJUDGE_JUDGE_TIMEOUT"], 60),
        _judge_case("a 60 MB reply without a length (limit 1 MiB)", {"pad_reply": 60 * 2**20},
                    {"REJUDGE_JUDGE_MAX_REPLY_BYTES": str(2**20)}, list(limit_says), 60),
        _judge_case("a gzip bomb: 60 MB of reply in 60 kB (limit 1 MiB)", {"pad_reply": 60 * 2**20,
                                                                            "gzip_reply": True},
                    {"REJUDGE_JUDGE_MAX_REPLY_BYTES": str(2**20)}, list(limit_says), 60),
        _judge_case("a redirect to another host", {"redirect_to": "{other}"}, {},
                    lambda u, o: [u, o, "another host"], 60),
        _planted_export("csv", _no_formula, lambda c: _plant_text(c, FORMULAS)),
        _planted_export("latex", _literal_tex, lambda c: _plant_text(c, TEX)),
        _report_case(),
        _links_case(),
    ]
