"""Wall time of the openai judge by concurrency against the scripted server (moved here from
tests/judges/test_llm_judge.py, where a wall-time bound is no test on a shared machine).

    python bench/judge_concurrency.py [--delay 0.05] [--queries 24] [--concurrency 1 4 8]

Each level asks the same N distinct questions with a fresh judge (no cache) from a server that answers every
request after `delay` seconds, and prints wall time, the most requests the server had in flight, and the
speed-up over concurrency 1 (ideal: the concurrency itself, while the server keeps up).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from devtools.judge_server import JudgeServer  # noqa: E402
from scoring.families.chimera.questions import span_question  # noqa: E402
from scoring.judges.openai_compat import OpenAIJudge  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--queries", type=int, default=24)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    args = ap.parse_args()
    qs = [span_question("d", "text", "comb-element", f"span {i}", f"other {i}") for i in range(args.queries)]
    base = None
    with JudgeServer(delay=args.delay) as srv:
        for c in args.concurrency:
            srv.reset_counts()
            judge = OpenAIJudge("bench-model", base_url=srv.base_url, api_key="bench", concurrency=c)
            t0 = time.perf_counter()
            answers = judge.ask_many(qs)
            wall = time.perf_counter() - t0
            base = base or wall
            print(json.dumps({"concurrency": c, "queries": len(answers), "wall_s": round(wall, 3),
                              "max_in_flight": srv.max_in_flight, "speedup": round(base / wall, 2),
                              "serial_s": round(args.queries * args.delay, 2)}))


if __name__ == "__main__":
    main()
