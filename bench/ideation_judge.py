"""Ideation judge workload through the live judge engine: Q x N x 3 absolute + Q x C(N,2) x 2 x 3 pairwise calls
against a scripted OpenAI-compatible server with a fixed latency, at two concurrencies; a re-run asks nothing.

    python bench/ideation_judge.py [--questions 4] [--systems 5] [--latency 0.2] [--concurrency 1 32]

Prints requests, wall time and requests/s per concurrency, the re-run's requests, and the full-size projection
(80 questions x 5 systems: 1,200 absolute + 4,800 pairwise calls).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from math import comb
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit.runs import score_run  # noqa: E402
from audit.store.database import open_db  # noqa: E402
from devtools.judge_server import JudgeServer  # noqa: E402


def script(prompt: str) -> str:
    if "Rate the idea" in prompt:
        return "A reasonable idea.\nSCORE: 3"
    return "The first is better.\nWINNER: FIRST"


def write_ideas(folder: Path, q: int, n: int) -> Path:
    path = folder / "ideas.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(q):
            for s in range(n):
                f.write(json.dumps({"question_id": f"q{i}", "question": f"Research question {i}?",
                                    "system": f"sys{s}", "idea": f"Idea {s} for question {i}."}) + "\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=4)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 32])
    args = ap.parse_args()
    q, n = args.questions, args.systems
    expected = q * n * 3 + q * comb(n, 2) * 2 * 3
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ideas = write_ideas(Path(tmp), q, n)
        for c in args.concurrency:
            with JudgeServer(script, delay=args.latency) as srv:
                os.environ["OPENAI_BASE_URL"] = srv.base_url
                os.environ["REJUDGE_JUDGE_CONCURRENCY"] = str(c)
                db = open_db(Path(tmp) / f"c{c}.db")
                start = time.perf_counter()
                score_run(db, "ideation", {"ideas": str(ideas)}, "openai:bench", run="live")
                wall = time.perf_counter() - start
                asked = srv.answered
                score_run(db, "ideation", {"ideas": str(ideas)}, "openai:bench", run="again")
                rows.append((c, asked, wall, asked / wall, srv.answered - asked))
    print(f"{q} questions x {n} systems: {expected} judge calls expected; server latency {args.latency:g} s\n")
    print("| concurrency | requests | wall s | requests/s | re-run requests |")
    print("|---|---|---|---|---|")
    for c, asked, wall, rate, again in rows:
        print(f"| {c} | {asked} | {wall:.1f} | {rate:.1f} | {again} |")
    full = 80 * 5 * 3 + 80 * comb(5, 2) * 2 * 3
    for c, _, _, rate, _ in rows:
        print(f"\nprojected full size (80 x 5: {full} calls) at concurrency {c}: {full / rate / 60:.1f} min")


if __name__ == "__main__":
    main()
