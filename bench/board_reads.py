"""A planned board's reads, before and after a change (issue 36 performance): paired source trees on copies of one
database holding a board with a sampling plan (e.g. the one `bench/board_speed.py --plan 90 --take-all-first`
leaves in the bench work directory: 5 systems x 10,000 CHIMERA abstracts, intervals for every system).

Per round and tree, alternating the trees, each on a fresh copy of the database, each step a fresh interpreter
running that tree's code:

- `board show` and `board export --format latex` as CLI commands (a planned board's first read in a process;
  target <= 5 s);
- in one process: `board_table` (the Leaderboard's table) after each of `--reviews` reviews of a question of the
  first system, the first call cold;
- the Leaderboard page (AppTest) re-rendered after each of `--reviews` more reviews (target <= 1 s).

The board's `board show` JSON and LaTeX must be the same for every tree (checked, the run fails otherwise). With
`--replan-with TREE`, the board's plan in the source database is first deleted and made again by TREE's code with
its seed (checked to give the same plan), so a plan that stores what an older one did not is measured as made.

    python bench/board_reads.py --db DB --board NAME [--tree BEFORE --tree AFTER] [--rounds 2] [--reviews 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import commit_of, copy_db, median, print_table, timed_child, workdir  # noqa: E402

REPLAN = r"""
import json, sys
from audit.board.joint import create_board_plan
from audit.store.database import open_db
db = open_db(sys.argv[1])
board = sys.argv[2]
runs, seed, created, before = db.execute("SELECT runs, seed, created, plan FROM board_plans WHERE board = ?",
                                         [board]).fetchone()
db.execute("DELETE FROM board_plans WHERE board = ?", [board])
db.conn.commit()
create_board_plan(db, board, json.loads(runs), seed=seed)
after = json.loads(db.execute("SELECT plan FROM board_plans WHERE board = ?", [board]).fetchone()[0])
before = json.loads(before)
assert after["plan"] == before["plan"] and after["documents"] == before["documents"], "the plan made again differs"
db.execute("UPDATE board_plans SET created = ? WHERE board = ?", [created, board])  # its draws keep their plan
db.conn.commit()
"""

READS = r"""
import json, logging, os, statistics, sys, time
from audit.board.table import board_table
from audit.review.reviews import add_review
from audit.store.database import open_db
path, board, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = open_db(path)
runs = json.loads(db.execute("SELECT runs FROM boards WHERE name = ?", [board]).fetchone()[0])
ids = iter(db.execute(
    "SELECT d.id, d.judge_label FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? AND d.left != d.right "
    "AND NOT EXISTS (SELECT 1 FROM reviews v WHERE v.decision_id = d.id) ORDER BY d.id LIMIT ?",
    [runs[0], 2 * n]).fetchall())
flip = {"match": "no-match", "no-match": "match"}

def review():
    i, judge = next(ids)
    add_review(db, runs[0], i, flip.get(judge, "no-match"), "bench")

t = time.perf_counter(); board_table(db, board); cold = time.perf_counter() - t
table = []
for _ in range(n):
    review()
    t = time.perf_counter(); board_table(db, board); table.append(time.perf_counter() - t)
from streamlit.testing.v1 import AppTest
from audit.demo import _mark_seeded
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
    lambda rec: "missing ScriptRunContext" not in rec.getMessage())  # AppTest's bare-mode noise
_mark_seeded(db)  # no demo runs scored into the bench database on the first render
os.environ["REJUDGE_DB"] = path
at = AppTest.from_file(os.path.join(os.getcwd(), "app.py"), default_timeout=600)
at.run()
at.switch_page("pages/leaderboard.py")
at.query_params["board"] = board
at.run()  # warm-up: the page's own caches
page = []
for _ in range(n):
    review()
    t = time.perf_counter(); at.run(); page.append(time.perf_counter() - t)
errors = [str(e.message)[:300] for e in at.exception]
print(json.dumps({"cold": cold, "table": table, "page": page, "errors": errors,
                  "title": [t.value for t in at.title]}))
"""


def copy_database(src: Path, dst: Path) -> Path:
    copy_db(src, dst)
    return dst


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--board", required=True)
    ap.add_argument("--tree", action="append", type=Path, help="source tree (repeatable; default: this one)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reviews", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--replan-with", type=Path, metavar="TREE")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    work = workdir() / "board-reads"
    work.mkdir(parents=True, exist_ok=True)
    source = args.db
    if args.replan_with:
        source = copy_database(args.db, work / "replanned.db")
        timed_child(["-c", REPLAN, str(source), args.board], args.replan_with.resolve(), args.timeout)
    print(f"load before: {os.getloadavg()[0]:.1f}")
    runs: dict[Path, dict[str, list[float]]] = {t: {} for t in trees}
    outputs: dict[Path, tuple[str, str]] = {}
    for _ in range(args.rounds):
        for tree in trees:
            got = runs[tree]
            db = str(copy_database(source, work / "reads.db"))
            tex = work / "table.tex"
            show = timed_child(["-m", "audit", "--db", db, "board", "show", args.board], tree, args.timeout)
            export = timed_child(["-m", "audit", "--db", db, "board", "export", args.board, "--format", "latex",
                                  "--out", str(tex), "--force"], tree, args.timeout)
            outputs.setdefault(tree, (json.dumps(json.loads(show["out"]), sort_keys=True), tex.read_text()))
            reads = timed_child(["-c", READS, db, args.board, str(args.reviews)], tree, args.timeout)
            found = json.loads(reads["out"].strip().splitlines()[-1])
            if found["errors"] or found["title"] != ["Leaderboard"]:
                raise SystemExit(f"{tree}: the Leaderboard page did not render: {found['errors'] or found['title']}")
            for key, values in (("board show (CLI)", [show["wall"]]), ("board export latex (CLI)", [export["wall"]]),
                                ("board_table, first call", [found["cold"]]),
                                ("board_table after a review", found["table"]),
                                ("Leaderboard page after a review", found["page"])):
                got.setdefault(key, []).extend(values)
    first = outputs[trees[0]]
    for tree in trees[1:]:
        if outputs[tree] != first:
            raise SystemExit(f"{tree}: board show JSON or LaTeX differs from {trees[0]}'s")
    targets = {"board show (CLI)": 5.0, "board export latex (CLI)": 5.0, "Leaderboard page after a review": 1.0}
    rows = []
    for key in runs[trees[0]]:
        base = median(runs[trees[0]][key])
        row: list[object] = [key]
        for tree in trees:
            m = median(runs[tree][key])
            row.append(f"{m:.2f} s ({', '.join(f'{v:.2f}' for v in runs[tree][key])})"
                       + ("" if tree == trees[0] else f", {m / base:.2f}x"))
        row.append(f"<= {targets[key]:g} s: {'met' if median(runs[trees[-1]][key]) <= targets[key] else 'missed'}"
                   if key in targets else "")
        rows.append(row)
    print_table(f"A planned board's reads: {args.board} ({args.rounds} rounds, {args.reviews} reviews each; medians, "
                "then every timing; ratio to the first tree)",
                ["measure", *[commit_of(t) for t in trees], "target (last tree)"], rows)
    print("board show JSON and LaTeX identical across the trees")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
