"""Time from one stored review to updated audited metrics, on a scored run of N generated abstracts.

A fresh copy of the scored run gets 5% of its decisions reviewed first (reviewer `pre`, 30% of them overruling
the judge). Then 50 times: a random decision gets a review from reviewer `bench` (confirm or overrule, even
odds) through `audit.review.reviews.add_review`, and `audit.rescoring.audit_run` returns the updated audited metrics.
Prints median and p90 of the whole step and of its two parts.

    python bench/rescore.py N [--seed S] [--reviews 50] [--pre-reviewed 0.05] [--profile]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import RUN_NAME, median, pct, print_table, scored_db, verdict, workdir  # noqa: E402

TARGET_MS = 50.0
LABELS = ("match", "no-match")


def other(label: str) -> str:
    return "no-match" if label == "match" else "match"


def pre_review(db, run: str, fraction: float, rng: random.Random, reviewer: str = "pre",
               p_overrule: float = 0.3) -> list[int]:
    """Review `fraction` of the run's decisions (through add_review); return their ids."""
    from audit.review.reviews import add_review
    from audit.store.database import run_row

    run_id = run_row(db, run)["id"]
    rows = list(db.conn.execute("SELECT id, judge_label FROM decisions WHERE run_id = ? ORDER BY id", [run_id]))
    chosen = rng.sample(rows, round(len(rows) * fraction))
    for dec_id, judge in chosen:
        label = other(judge) if rng.random() < p_overrule else (judge if judge in LABELS else "no-match")
        add_review(db, run, dec_id, label, reviewer)
    return [d for d, _ in chosen]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reviews", type=int, default=50)
    ap.add_argument("--pre-reviewed", type=float, default=0.05)
    ap.add_argument("--profile", action="store_true", help="print a pyinstrument profile of the timed steps")
    args = ap.parse_args(argv)

    from audit.rescoring import audit_run
    from audit.review.reviews import add_review
    from audit.store.database import open_db, run_row

    path = scored_db(args.n, workdir() / f"rescore-{args.n}.db", args.seed)
    db = open_db(path)
    row = run_row(db, RUN_NAME)
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    pre = pre_review(db, RUN_NAME, args.pre_reviewed, rng)
    pre_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    base = audit_run(db, RUN_NAME)  # warm-up (and the state before the timed reviews)
    warm_ms = (time.perf_counter() - t0) * 1000
    ids = [r[0] for r in db.conn.execute("SELECT id FROM decisions WHERE run_id = ?", [row["id"]])]
    judge_of = dict(db.conn.execute("SELECT id, judge_label FROM decisions WHERE run_id = ?", [row["id"]]).fetchall())

    profiler = None
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005)
        profiler.start()
    review_ms, audit_ms, total_ms, changed = [], [], [], []
    for _ in range(args.reviews):
        dec = rng.choice(ids)
        judge = judge_of[dec]
        label = other(judge) if rng.random() < 0.5 else (judge if judge in LABELS else "no-match")
        t0 = time.perf_counter()
        add_review(db, RUN_NAME, dec, label, "bench")
        t1 = time.perf_counter()
        audit = audit_run(db, RUN_NAME)
        t2 = time.perf_counter()
        review_ms.append((t1 - t0) * 1000)
        audit_ms.append((t2 - t1) * 1000)
        total_ms.append((t2 - t0) * 1000)
        changed.append(len(audit.changed_docs))
    if profiler:
        profiler.stop()

    n_reviews = db.conn.execute("SELECT COUNT(*) FROM reviews WHERE run_id = ?", [row["id"]]).fetchone()[0]
    print_table(f"Review -> audited metrics, N = {args.n:,} abstracts, {row['n_decisions']:,} decisions",
                ["step", "median ms", "p90 ms", "max ms"],
                [["add_review + audit_run", median(total_ms), pct(total_ms, 90), max(total_ms)],
                 ["  add_review", median(review_ms), pct(review_ms, 90), max(review_ms)],
                 ["  audit_run", median(audit_ms), pct(audit_ms, 90), max(audit_ms)]])
    print_table("Setting", ["figure", "value"], [
        ["decisions reviewed beforehand (add_review)", f"{len(pre):,} ({args.pre_reviewed:.0%}) in {pre_s:.1f} s"],
        ["timed reviews", args.reviews],
        ["reviews in the run at the end", n_reviews],
        ["documents re-counted by audit_run (before / median during)",
         f"{len(base.changed_docs):,} / {median(changed):,.0f}"],
        ["first audit_run after the pre-reviews (warm-up) ms", warm_ms],
        [f"median <= {TARGET_MS:g} ms", verdict(median(total_ms) <= TARGET_MS)]])
    if profiler:
        print(profiler.output_text(unicode=False, color=False, show_all=False))
    db.conn.close()
    return {"median_ms": median(total_ms), "p90_ms": pct(total_ms, 90), "review_ms": median(review_ms),
            "audit_ms": median(audit_ms)}


if __name__ == "__main__":
    main()
