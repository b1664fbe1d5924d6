"""A board at paper scale (issue 36, performance): K systems x N CHIMERA abstracts on one gold (default 5 x 10,000).

Systems: `bench/generate.py`'s data for N abstracts (system 1) and K-1 more prediction sets with their judge logs on
the same gold (`generate_system`, seeds 1001...), each scored as a run; one board over them. Measured in one
process, interleaved so machine load hits both sides alike:

- one review of a question all K runs ask, then every system's audited metrics read (`RunView.audit`, what the
  Scores page and `export` show): the issue's target is <= 100 ms median;
- the same for a question only one run asks, then that run's audited metrics: the single-run review it is compared
  with (the ratio says what sharing costs);
- `board_table` (the `board show` JSON, what the Leaderboard page renders; its first call in a process scans what
  the runs ask, then it is cached), and `board export` in each format
  (target <= 5 s), against a single run's `export` (LaTeX) as the ratio's base.

With `--plan K`, then the board with a sampling plan, as a sampled audit has it: the board's plan
(`create_board_plan`), K documents from its queue with every question reviewed (a fifth of the judge's labels
overruled), then: one more review -> the Leaderboard's table (`board_table`, now estimates from the joint plan),
and `board show` / `board export --format latex` as CLI commands in a fresh interpreter (the first read of a planned
board in a process also flattens every document's judge and movable counts), alternated with one run's `export`.

With `--take-all-first`, every document of the plan's take-all strata is reviewed directly before the K served
ones (each known exactly), so the served documents come from the sampled strata and the estimates have intervals.

    python bench/board_speed.py [--n 10000] [--systems 5] [--reviews 15] [--seed 0] [--plan K [--take-all-first]]

The scored database is kept in the bench work directory (`bench/common.py`) and reused by later runs.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audit.store.shared_reviews import SAME_QUESTION  # noqa: E402
from bench.common import copy_db, data_paths, median, print_table, workdir  # noqa: E402
from devtools.generate import generate_system  # noqa: E402

BOARD = "speed"


def _base_db(n: int, k: int, seed: int) -> Path:
    from audit.board.store import create_board
    from audit.runs import score_run
    from audit.store.database import open_db

    base = workdir() / f"board-{n}-{k}-s{seed}.db"
    if base.is_file():
        return base
    first = data_paths(n, seed)
    systems = [(first["pred"], first["log"])]
    for i in range(2, k + 1):
        out = workdir() / f"board-data-{n}-s{seed}" / f"sys{i}"
        if not (out / "judge.jsonl").is_file():
            generate_system(first["gold"], out, seed=1000 + i)
        systems.append((out / "pred.jsonl", out / "judge.jsonl"))
    tmp = base.with_suffix(".tmp.db")
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    db = open_db(tmp)
    for i, (pred, log) in enumerate(systems, start=1):
        t0 = time.perf_counter()
        score_run(db, "chimera", {"gold": str(first["gold"]), "pred": str(pred)}, f"replay:{log}", run=f"sys{i}")
        print(f"scored sys{i} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    create_board(db, BOARD, [f"sys{i}" for i in range(1, k + 1)])
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    copy_db(tmp, base)
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    return base


def _questions(db, k: int, limit: int) -> tuple[list[int], list[int]]:
    """Decision ids in sys1 of span pairs of unequal strings: asked by all k runs, and asked by sys1 alone."""
    rows = db.execute(  # an unkeyed decision counts 0 runs: in neither list
        f"SELECT d1.id, (SELECT COUNT(DISTINCT d2.run_id) FROM decisions d2 WHERE {SAME_QUESTION}) FROM decisions d1 "
        "JOIN runs r ON r.id = d1.run_id WHERE r.name = 'sys1' AND d1.left != d1.right ORDER BY d1.id").fetchall()
    shared = [i for i, n in rows if n == k][:limit]
    alone = [i for i, n in rows if n == 1][:limit]
    return shared, alone


def _judge_labels(db, ids: list[int]) -> dict[int, str]:
    """Decision id -> the judge's label, for these ids."""
    return dict(db.execute(f"SELECT id, judge_label FROM decisions WHERE id IN ({','.join('?' * len(ids))})",
                           ids).fetchall())


def _ms(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="abstracts")
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--reviews", type=int, default=15, help="reviews timed on each side")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plan", type=int, default=0, metavar="K",
                    help="then plan the board, review K documents from its queue and time the planned board")
    ap.add_argument("--take-all-first", action="store_true",
                    help="with --plan: first review every document of the plan's take-all strata directly (known "
                         "exactly), so the K documents the queue serves come from the sampled strata and the "
                         "estimates have intervals")
    args = ap.parse_args(argv)

    from audit.board.export import export_board
    from audit.board.table import board_table
    from audit.outputs.export import export_run
    from audit.review.reviews import add_review
    from audit.store.database import open_db
    from audit.views import load_view

    base = _base_db(args.n, args.systems, args.seed)
    work = workdir() / f"board-{args.n}-{args.systems}-work.db"
    copy_db(base, work)
    db = open_db(work)
    runs = [f"sys{i}" for i in range(1, args.systems + 1)]
    shared, alone = _questions(db, args.systems, args.reviews)
    if not shared or not alone:
        raise SystemExit(f"no question shared by all {args.systems} runs ({len(shared)}) or asked by one "
                         f"({len(alone)})")
    judge = _judge_labels(db, [*shared, *alone])
    flip = {"match": "no-match", "no-match": "match"}

    def review_board(i: int) -> None:
        add_review(db, "sys1", i, flip[judge[i]], "bench")
        for r in runs:
            load_view(db, r).audit.metrics  # noqa: B018 - the read is what is timed

    def review_one(i: int) -> None:
        add_review(db, "sys1", i, flip[judge[i]], "bench")
        load_view(db, "sys1").audit.metrics  # noqa: B018

    t_board, t_one = [], []
    for a, b in zip(shared, alone, strict=False):  # interleaved: the same load on both sides
        t_board.append(_ms(lambda a=a: review_board(a)))
        t_one.append(_ms(lambda b=b: review_one(b)))
    first_table = _ms(lambda: board_table(db, BOARD))  # scans what the runs ask once per process (then cached)
    table_ms = [_ms(lambda: board_table(db, BOARD)) for _ in range(5)]
    exports = {fmt: [_ms(lambda fmt=fmt: export_board(db, BOARD, fmt)) for _ in range(3)]
               for fmt in ("json", "csv", "latex")}
    single_export = [_ms(lambda: export_run(db, "sys1", "latex")) for _ in range(3)]
    shown = board_table(db, BOARD)
    one = median(t_one)
    n_dec = db.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    print_table(f"Board of {args.systems} systems x {args.n:,} CHIMERA abstracts ({n_dec:,} decisions, "
                f"{shown['shared_questions']:,} questions shared)", ["measure", "median ms", "ratio to a "
                "single-run review", "target"],
                [[f"one review -> all {args.systems} systems' audited metrics", median(t_board),
                  median(t_board) / one, "<= 100 ms"],
                 ["one review -> its run's audited metrics (single run)", one, 1.0, ""],
                 ["board_table, first call in a process", first_table, first_table / one, ""],
                 ["board_table (board show / Leaderboard)", median(table_ms), median(table_ms) / one, ""],
                 *[[f"board export --format {f}", median(v), median(v) / one, "<= 5000 ms"]
                   for f, v in exports.items()],
                 ["export --format latex of one run", median(single_export), median(single_export) / one, ""]])
    print(f"\nboard export latex / one run's latex export: {median(exports['latex']) / median(single_export):.2f}x; "
          f"reviews timed: {len(t_board)} per side; settled: {shown['settled']}")
    if args.plan:
        _planned(db, work, runs, args)
    db.conn.close()


def _relabel(judge: str, rng: random.Random) -> str:
    """The judge's label, overruled one time in five (a label the scheme has for every pair kind)."""
    flip = {"match": "no-match", "no-match": "match"}
    return judge if rng.random() >= 0.2 else flip.get(judge, judge)


def _review_take_all(db, rng: random.Random) -> int:
    """Review every decision of every document in the plan's take-all strata (not served: hand-picked, so each
    counts exactly, as a take-all stratum does once reviewed whole); the number of reviews."""
    from audit.board.joint import load_board_plan
    from audit.review.reviews import add_review

    stored = load_board_plan(db, BOARD)
    n = 0
    for block in (b.id for b in stored.plan.blocks if b.stratum in stored.plan.take_all):
        for run, docs in stored.documents[block].items():
            run_id = db.execute("SELECT id FROM runs WHERE name = ?", [run]).fetchone()[0]
            for doc in docs:
                for dec, judge in db.execute("SELECT id, judge_label FROM decisions WHERE run_id = ? AND doc_id = ?",
                                             [run_id, doc]).fetchall():
                    add_review(db, run, dec, _relabel(judge, rng), "bench")
                    n += 1
    return n


def _cli_s(*argv: str) -> float:
    """Wall seconds of one `python -m audit ...` in a fresh interpreter (it must succeed)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "audit", *argv], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _planned(db, work: Path, runs: list[str], args: argparse.Namespace) -> None:
    """The board with a plan and K sampled documents reviewed (see the module docstring)."""
    from audit.board.joint import create_board_plan, next_board_document
    from audit.board.table import board_table
    from audit.review.reviews import add_review

    rng = random.Random(args.seed)
    flip = {"match": "no-match", "no-match": "match"}
    create_board_plan(db, BOARD, runs, seed=args.seed)
    reviewed = _review_take_all(db, rng) if args.take_all_first else 0
    t0 = time.perf_counter()
    served = 0
    for _ in range(args.plan):
        nxt = next_board_document(db, BOARD, runs)
        if nxt is None:
            break
        served += 1
        for part in nxt["review_in"]:
            ids = part["decisions"]
            judged = _judge_labels(db, ids)
            for dec in ids:
                label = _relabel(judged[dec], rng)
                add_review(db, part["run"], dec, label, "bench")
                reviewed += 1
    queue_s = (time.perf_counter() - t0) / max(served, 1)
    open_ids = [i for i, in db.execute(
        "SELECT d.id FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = 'sys1' AND d.left != d.right "
        "AND NOT EXISTS (SELECT 1 FROM reviews v WHERE v.decision_id = d.id) ORDER BY d.id LIMIT ?",
        [args.reviews])]
    judged = _judge_labels(db, open_ids)
    after_review = []
    for i in open_ids:
        add_review(db, "sys1", i, flip.get(judged[i], judged[i]), "bench")
        after_review.append(_ms(lambda: board_table(db, BOARD)))
    table = board_table(db, BOARD)
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out = work.with_suffix(".tex")
    show, export, single = [], [], []
    for _ in range(3):  # alternated: the same load on each command
        show.append(_cli_s("board", "show", BOARD, "--db", str(work)))
        export.append(_cli_s("board", "export", BOARD, "--format", "latex", "--out", str(out), "--force",
                             "--db", str(work)))
        single.append(_cli_s("export", "--run", "sys1", "--format", "latex", "--out", str(out), "--force",
                             "--db", str(work)))
    ref = median(single)
    with_ci = sum(1 for s in table["systems"] if any(isinstance(e, dict) and e.get("ci")
                                                     for e in (s.get("estimate") or {}).values()))
    print_table(f"The board with a plan: {served} documents served ({queue_s:.2f} s per queue step), {reviewed:,} "
                f"reviews{' (the take-all strata first)' if args.take_all_first else ''}; interval: "
                f"{table['interval']}; estimates with an interval: {with_ci} of {len(table['systems'])} systems; "
                f"rank sets {[s['rank_set'] for s in table['systems']]}",
                ["measure", "median", "ratio to one run's export (CLI)", "target"],
                [["one review -> board_table (Leaderboard), planned board", f"{median(after_review):.0f} ms", "",
                  "<= 1000 ms"],
                 ["board show (CLI, fresh interpreter)", f"{median(show):.2f} s", median(show) / ref, ""],
                 ["board export --format latex (CLI, fresh interpreter)", f"{median(export):.2f} s",
                  median(export) / ref, "<= 5 s"],
                 ["export --format latex of one run (CLI)", f"{ref:.2f} s", 1.0, ""]])


if __name__ == "__main__":
    main()
