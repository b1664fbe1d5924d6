"""100,000 reviews written by two concurrent processes (50,000 each) into a scored run; time, and check none lost.

Two write paths the store offers, each on a fresh copy of the scored N-abstract run (default N = 10,000):

- `add_review`: `audit.review.reviews.add_review`, one review per call and per transaction, as the dashboard and the
  CLI write them (what two reviewers clicking at once do);
- `import_reviews`: `audit.review.reviews_io.import_reviews`, each process merging a JSON-lines file of its 50,000
  reviews in one transaction (the batch path: moving reviews between databases).

What-ifs for the recommendation (not what the store does): `--synchronous NORMAL` sets that pragma on the
workers' connections; `--path lean-what-if` writes each review the way a trimmed `add_review` would (one
validating JOIN query instead of `decision()` + `run_row()` twice, then the same one-row transaction).

Both processes (fresh `spawn` interpreters, each with its own connection) wait on a barrier and start
together. Every review carries a note `worker:seq`; afterwards the run must hold exactly the 100,000 notes,
100,000 distinct uids, and no worker may have seen an error.

    python bench/concurrent_reviews.py [--n 10000] [--per-process 50000] [--path add_review|import_reviews|both]
        [--synchronous NORMAL]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import RUN_NAME, print_table, scored_db, verdict, workdir  # noqa: E402

TARGET_S = 30.0
WORKERS = 2


def _decisions(db_path: str) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(db_path) as c:
        return c.execute("SELECT d.id, d.doc_id, d.kind, d.type, d.left, d.right FROM decisions d JOIN runs r "
                         "ON r.id = d.run_id WHERE r.name = ? ORDER BY d.id", [RUN_NAME]).fetchall()


def lean_add_review(conn, run: str, decision_id: int, label: str, reviewer: str, note: str) -> None:
    """What-if: add_review's checks from one query, then the same one-row BEGIN IMMEDIATE transaction."""
    from audit.store.database import now
    from scoring.families import get_task

    r = conn.execute("SELECT d.run_id, d.kind, r.task FROM decisions d JOIN runs r ON r.id = d.run_id "
                     "WHERE d.id = ? AND r.name = ?", [decision_id, run]).fetchone()
    if r is None:
        raise LookupError(f"decision {decision_id} is not in run {run!r}")
    if label not in get_task(r[2]).decision_labels.get(r[1], ()):
        raise ValueError(f"bad label {label!r}")
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT INTO reviews (uid, run_id, decision_id, reviewer, label, role, note, blind, created) "
                     "VALUES (?, ?, ?, ?, ?, 'reviewer', ?, 0, ?)",
                     (uuid.uuid4().hex, r[0], decision_id, reviewer, label, note, now()))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def worker(k: int, db_path: str, path: str, per: int, barrier, results, synchronous: str | None = None) -> None:
    from audit.store.database import now, open_db

    decs = _decisions(db_path)
    rng = random.Random(1000 + k)
    reviewer = f"worker{k}"
    db = open_db(db_path)
    if synchronous:  # what-if only: the store itself keeps SQLite's default (FULL)
        db.conn.execute(f"PRAGMA synchronous = {synchronous}")
    errors: list[str] = []
    if path == "lean-what-if":
        plan = [(rng.choice(decs)[0], rng.choice(("match", "no-match"))) for _ in range(per)]
        barrier.wait()
        t0 = time.perf_counter()
        for i, (dec, label) in enumerate(plan):
            try:
                lean_add_review(db.conn, RUN_NAME, dec, label, reviewer, f"{k}:{i}")
            except Exception as e:  # noqa: BLE001
                errors.append(f"{type(e).__name__}: {e}")
        elapsed = time.perf_counter() - t0
    elif path == "add_review":
        from audit.review.reviews import add_review

        plan = [(rng.choice(decs)[0], rng.choice(("match", "no-match"))) for _ in range(per)]
        barrier.wait()
        t0 = time.perf_counter()
        for i, (dec, label) in enumerate(plan):
            try:
                add_review(db, RUN_NAME, dec, label, reviewer, note=f"{k}:{i}")
            except Exception as e:  # noqa: BLE001 - counted and reported: a lost review
                errors.append(f"{type(e).__name__}: {e}")
        elapsed = time.perf_counter() - t0
    else:
        from audit.review.reviews_io import import_reviews

        file = Path(workdir()) / f"import-{k}.jsonl"
        created = now()
        with file.open("w", encoding="utf-8") as f:
            for i in range(per):
                _, doc, kind, typ, left, right = rng.choice(decs)
                f.write(json.dumps({"uid": uuid.uuid4().hex, "doc": doc, "kind": kind, "type": typ, "left": left,
                                    "right": right, "reviewer": reviewer, "label": rng.choice(("match", "no-match")),
                                    "role": "reviewer", "note": f"{k}:{i}", "blind": 0, "created": created}) + "\n")
        barrier.wait()
        t0 = time.perf_counter()
        try:
            import_reviews(db, RUN_NAME, file)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{type(e).__name__}: {e}")
        elapsed = time.perf_counter() - t0
        file.unlink(missing_ok=True)
    db.conn.close()
    results.put({"worker": k, "elapsed_s": elapsed, "errors": len(errors), "first_errors": errors[:3]})


def run_path(path: str, n: int, per: int, seed: int, synchronous: str | None = None) -> dict:
    db_path = str(scored_db(n, workdir() / f"concurrent-{path}.db", seed))
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(WORKERS + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(k, db_path, path, per, barrier, results, synchronous))
             for k in range(WORKERS)]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.perf_counter()
    reports = [results.get() for _ in procs]
    wall = time.perf_counter() - t0
    for p in procs:
        p.join()
    import sqlite3

    with sqlite3.connect(db_path) as c:
        rows, uids = c.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM reviews WHERE reviewer LIKE 'worker%'"
                               ).fetchone()
        notes = {r[0] for r in c.execute("SELECT note FROM reviews WHERE reviewer LIKE 'worker%'")}
    want = {f"{k}:{i}" for k in range(WORKERS) for i in range(per)}
    return {"path": path, "wall_s": wall, "workers": sorted(reports, key=lambda r: r["worker"]), "rows": rows,
            "distinct_uids": uids, "missing": len(want - notes), "unexpected": len(notes - want),
            "errors": sum(r["errors"] for r in reports), "total": WORKERS * per}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="abstracts in the scored run")
    ap.add_argument("--per-process", type=int, default=50_000)
    ap.add_argument("--path", choices=("add_review", "import_reviews", "both", "lean-what-if"), default="both")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--synchronous", choices=("OFF", "NORMAL", "FULL"),
                    help="what-if: set PRAGMA synchronous on the workers' connections (the store does not)")
    args = ap.parse_args(argv)
    paths = ["add_review", "import_reviews"] if args.path == "both" else [args.path]
    rows = []
    for path in paths:
        r = run_path(path, args.n, args.per_process, args.seed, args.synchronous)
        none_lost = r["rows"] == r["distinct_uids"] == r["total"] and r["missing"] == 0 and r["errors"] == 0
        label = path + (f" (synchronous={args.synchronous}, what-if)" if args.synchronous else "")
        rows.append([label, r["total"], r["wall_s"], r["total"] / r["wall_s"],
                     " / ".join(f"{w['elapsed_s']:.1f}" for w in r["workers"]), r["rows"], r["missing"],
                     r["errors"], f"<= {TARGET_S:g} s: {verdict(r['wall_s'] <= TARGET_S)}; none lost: "
                                  f"{verdict(none_lost)}"])
        for w in r["workers"]:
            for e in w["first_errors"]:
                print(f"worker {w['worker']} ({path}): {e}", file=sys.stderr)
    print_table(f"{WORKERS} concurrent processes x {args.per_process:,} reviews into a scored run of "
                f"{args.n:,} abstracts", ["write path", "reviews", "wall s", "reviews/s", "per process s",
                                          "rows stored", "missing", "errors", "targets"], rows)


if __name__ == "__main__":
    main()
