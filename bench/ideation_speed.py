"""Time from one stored review to updated audited ideation scores, on a synthetic run (default 80 questions x 5
systems x 3 criteria, absolute ratings and pairwise calls in both orders, a few invalid answers).

Scores the run into a fresh SQLite file (`audit.runs.score_run`, judge `file`), then 50 times: a random decision
gets a review (a random allowed label) through `audit.review.reviews.add_review`, and `audit.rescoring.audit_run`
returns
the updated metrics (bootstrap intervals over questions included). Prints median and p90; goal <= 50 ms median.

    python bench/ideation_speed.py [--questions 80] [--systems 5] [--reviews 50] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_MS = 50.0
CRITERIA = ("novelty", "feasibility", "effectiveness")


def generate(folder: Path, n_questions: int, n_systems: int, rng: random.Random) -> dict[str, str]:
    """Synthetic ideas, ratings (2% null) and pairwise calls (2% invalid, 1% not asked); returns the input paths."""
    systems = [f"system-{k}" for k in range(n_systems)]
    ideas, ratings, calls = [], [], []
    for q in range(n_questions):
        qid = f"Q{q:03d}"
        for s in systems:
            ideas.append({"question_id": qid, "question": f"Research question {q}?", "system": s,
                          "idea": f"Idea of {s} for question {q}. " * 20})
            for c in CRITERIA:
                score = None if rng.random() < 0.02 else rng.randint(1, 5)
                ratings.append({"question_id": qid, "system": s, "criterion": c, "score": score,
                                "rationale": "synthetic", "raw": f"SCORE: {score}"})
        for c in CRITERIA:
            for a in systems:
                for b in systems:
                    if a == b or rng.random() < 0.01:
                        continue
                    verdict = "invalid" if rng.random() < 0.02 else rng.choice(["first", "first", "second", "tie"])
                    calls.append({"question_id": qid, "criterion": c, "first": a, "second": b, "verdict": verdict,
                                  "rationale": "synthetic", "raw": f"WINNER: {verdict}"})
    paths = {}
    for name, rows in (("ideas", ideas), ("absolute", ratings), ("pairwise", calls)):
        p = folder / f"{name}.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths[name] = str(p)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=80)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--reviews", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from audit.rescoring import audit_run
    from audit.review.reviews import add_review
    from audit.runs import score_run
    from audit.store.database import open_db
    from scoring.families import get_task

    rng = random.Random(args.seed)
    task = get_task("ideation")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = generate(folder, args.questions, args.systems, rng)
        db = open_db(folder / "bench.db")
        t0 = time.perf_counter()
        score_run(db, "ideation", paths, "file", run="bench")
        scored = time.perf_counter() - t0
        rows = list(db.conn.execute("SELECT id, kind FROM decisions ORDER BY id"))
        audit_run(db, "bench")  # warm-up: imports, caches
        total, review_ms, audit_ms = [], [], []
        for _ in range(args.reviews):
            dec_id, kind = rng.choice(rows)
            label = rng.choice(task.label_schemes[kind].labels)
            t1 = time.perf_counter()
            add_review(db, "bench", dec_id, label, "bench")
            t2 = time.perf_counter()
            audit_run(db, "bench")
            t3 = time.perf_counter()
            review_ms.append((t2 - t1) * 1000)
            audit_ms.append((t3 - t2) * 1000)
            total.append((t3 - t1) * 1000)
        db.conn.close()

    def p90(xs: list[float]) -> float:
        return statistics.quantiles(xs, n=10)[-1] if len(xs) > 1 else xs[0]

    med = statistics.median(total)
    print("| questions | systems | decisions | scoring (s) | review+audit median (ms) | p90 (ms) | add_review (ms) "
          "| audit_run (ms) | goal |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {args.questions} | {args.systems} | {len(rows)} | {scored:.2f} | {med:.1f} | {p90(total):.1f} | "
          f"{statistics.median(review_ms):.1f} | {statistics.median(audit_ms):.1f} | "
          f"{'met' if med <= TARGET_MS else 'NOT met'} (≤ {TARGET_MS:g} ms) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
