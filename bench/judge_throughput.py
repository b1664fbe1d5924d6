"""Judge throughput: requests sent vs the paper's scorer, and wall time by concurrency (issue 3).

Starts the scripted local OpenAI-compatible server (devtools/judge_server.py) answering every request after a fixed
delay (200 ms by default), then scores all of CHIMERA eval.csv with a perfect prediction file through
`audit.runs.score_run` and `openai:bench-model`, once per concurrency level, each into a fresh database (so
nothing is cached). Prints one row per level: requests sent, the reference scorer's call count for the same
inputs, wall time, and the ratio of wall time to concurrency 1 (and the speed-up).

Run on demand (not part of the tests; about 1.5 minutes with the defaults):

    python bench/judge_throughput.py [--delay 0.2] [--concurrency 1 8 32]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audit.runs import score_run  # noqa: E402
from audit.store.database import open_db  # noqa: E402
from devtools.judge_server import JudgeServer  # noqa: E402

GOLD = ROOT / "data/chimera/eval.csv"
PERFECT = ROOT / "data/chimera/pred_perfect.jsonl"


def run_level(srv: JudgeServer, concurrency: int, workdir: Path, pred: Path) -> dict:
    os.environ["REJUDGE_JUDGE_CONCURRENCY"] = str(concurrency)
    srv.reset_counts()
    db = open_db(workdir / f"bench-c{concurrency}.db")
    t = time.perf_counter()
    row = score_run(db, "chimera", {"gold": str(GOLD), "pred": str(pred)}, "openai:bench-model", run=f"c{concurrency}")
    wall = time.perf_counter() - t
    stats = row["summary"]["judge"]
    assert stats["cached"] == 0 and stats["failed"] == 0, stats
    return {"concurrency": concurrency, "sent": srv.requests, "requests": stats["requests"],
            "paper_calls": stats["paper_calls"], "wall": wall, "max_in_flight": srv.max_in_flight,
            "f1": row["original_metrics"]["relations"]["avg"]["f1"]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delay", type=float, default=0.2, help="server delay per answer in seconds (default 0.2)")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--pred", type=Path, default=PERFECT, help="prediction file (default: the perfect one)")
    args = ap.parse_args(argv)
    results = []
    with JudgeServer(delay=args.delay) as srv, tempfile.TemporaryDirectory() as tmp:
        os.environ.update(OPENAI_BASE_URL=srv.base_url, OPENAI_API_KEY="bench-key")
        os.environ.pop("REJUDGE_PRICES", None)
        for c in args.concurrency:
            results.append(run_level(srv, c, Path(tmp), args.pred))
            r = results[-1]
            print(f"  concurrency {c}: {r['wall']:.2f} s", file=sys.stderr)
    base = results[0]["wall"]
    print(f"CHIMERA {GOLD.name} x {args.pred.name}, server delay {args.delay * 1000:.0f} ms, fresh DB per level")
    print(f"{'concurrency':>11} {'requests':>8} {'paper calls':>11} {'paper/ours':>10} {'wall s':>8} "
          f"{'wall/c1':>8} {'speed-up':>8} {'max in flight':>13} {'rel. F1':>7}")
    for r in results:
        print(f"{r['concurrency']:>11} {r['sent']:>8} {r['paper_calls']:>11} {r['paper_calls'] / r['sent']:>10.1f} "
              f"{r['wall']:>8.2f} {r['wall'] / base:>8.3f} {base / r['wall']:>8.1f} {r['max_in_flight']:>13} "
              f"{r['f1']:>7.3f}")
    ideal = [r["sent"] * args.delay / r["concurrency"] for r in results]
    print("ideal wall (requests x delay / concurrency): " + ", ".join(f"{x:.1f} s" for x in ideal))


if __name__ == "__main__":
    main()
