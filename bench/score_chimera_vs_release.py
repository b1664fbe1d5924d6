"""Full CHIMERA scoring of N generated abstracts, this working tree against an earlier release, side by side.

Both sides run `audit.runs.score_run` with the replay judge into a fresh SQLite file (every decision stored) on
the same generated files, each in a fresh interpreter whose `sys.path` starts at its own source tree: this
working tree, and a git worktree of REV (default 316438c = 0.1.0) created on demand outside the repository
(`$TMPDIR/rejudge-<label>`, detached, never committed; `--worktree DIR` picks another). The runs alternate
(current, release, current, ...) so machine noise falls on both; the table shows the median wall time, the range,
the median CPU time (user + system of the child: less sensitive to other jobs on a shared machine) and the largest
peak RSS (`ru_maxrss`) of `--repeat` runs each, the ratios current / release, the median of each phase, and
checks that both give the same paper-code metrics (the release has no strict 1-to-1 variant).

The child adapts to either API: `scoring.families.get_task` and `score_run(db, task, inputs, judge)` now,
`scoring.tasks.get_task` and `score_run(db, task, gold, pred, judge)` at 0.1.0.

    python bench/score_chimera_vs_release.py N [--against REV] [--repeat 3] [--seed S] [--json]
    python bench/score_chimera_vs_release.py N --cli [--repeat 3]

`--cli` times the whole command instead, as a user runs it (`python -m audit --db DB score chimera --gold G --pred P
--judge replay:LOG --run bench`, a fresh interpreter started in each tree: start-up, input parsing, progress bar,
scoring, storing): wall and CPU of the child (`wait4`), alternating, and the runs' stored decisions compared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REV = "316438c"
RELEASE_LABELS = {"316438c": "0.1.0"}
PAPER_SECTIONS = ("classification", "entities", "relations")


# ---------------------------------------------------------------- child (fresh interpreter, one source tree)


def child(root: str, gold: str, pred: str, log: str, db_path: str) -> dict:
    """Score the files with the `audit` / `scoring` packages of `root` (nothing of another tree is imported)."""
    import inspect
    import resource
    from collections import Counter

    sys.path[0] = root  # replaces this script's folder: only `root`'s packages are importable
    t_start = time.perf_counter()
    import audit.runs as runs
    from audit.store.database import open_db

    try:
        from scoring.families import get_task
    except ImportError:  # 0.1.0
        from scoring.tasks import get_task  # type: ignore[no-redef]
    import_s = time.perf_counter() - t_start

    phases: Counter[str] = Counter()

    def timed(name, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                phases[name] += time.perf_counter() - t
        return wrapper

    task = get_task("chimera")
    task.load = timed("load inputs", task.load)
    task.make_judge = timed("read judge log", task.make_judge)
    task.decide = timed("decide (judge lookups)", task.decide)
    runs._store = timed("store (counts + SQL)", runs._store)
    orig_tx = runs.transaction

    class TimedTx:
        def __init__(self, db):
            self.inner = orig_tx(db)

        def __enter__(self):
            self.t = time.perf_counter()
            return self.inner.__enter__()

        def __exit__(self, *exc):
            try:
                return self.inner.__exit__(*exc)
            finally:
                phases["  of which SQL transaction"] += time.perf_counter() - self.t

    runs.transaction = TimedTx
    for suffix in ("", "-wal", "-shm"):
        Path(db_path + suffix).unlink(missing_ok=True)
    t0, cpu0 = time.perf_counter(), time.process_time()
    db = open_db(db_path)
    phases["open database"] += time.perf_counter() - t0
    if "inputs" in inspect.signature(runs.score_run).parameters:
        row = runs.score_run(db, "chimera", {"gold": gold, "pred": pred}, f"replay:{log}", run="bench")
    else:  # 0.1.0: gold and pred positional
        row = runs.score_run(db, "chimera", gold, pred, f"replay:{log}", run="bench")
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    n_dec = db.conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    n_docs = db.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    size = Path(db_path).stat().st_size / 2**20
    for suffix in ("", "-wal", "-shm"):
        Path(db_path + suffix).unlink(missing_ok=True)
    return {"wall_s": wall, "cpu_s": cpu, "import_s": import_s, "phases": dict(phases), "decisions_stored": n_dec,
            "documents_stored": n_docs, "source": str(Path(runs.__file__).resolve().parent.parent),
            "metrics": row["original_metrics"], "db_mib": size,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


# ---------------------------------------------------------------- parent


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def ensure_worktree(rev: str, where: Path | None) -> Path:
    """A detached git worktree of `rev` outside the repository, created when missing (never committed)."""
    full = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    path = where or Path(tempfile.gettempdir()) / f"rejudge-{RELEASE_LABELS.get(rev, rev)}"
    if (path / ".git").exists():
        have = _git("rev-parse", "HEAD", cwd=path)
        if have != full:
            raise SystemExit(f"{path} is a worktree of {have[:12]}, not {rev}; remove it "
                             f"(`git worktree remove {path}`) or pass --worktree DIR")
        return path
    if path.exists():
        raise SystemExit(f"{path} exists and is not a git worktree; pass --worktree DIR")
    print(f"creating worktree {path} at {rev} ...", flush=True)
    _git("worktree", "add", "--detach", str(path), full)
    return path


def describe(root: Path) -> str:
    head = _git("rev-parse", "--short", "HEAD", cwd=root)
    dirty = _git("status", "--porcelain", "--", "audit", "scoring", cwd=root)
    return head + (" + uncommitted changes in audit/ scoring/" if dirty else "")


def paper_metrics_diff(a: dict, b: dict) -> tuple[int, list[str]]:
    """(numbers compared, differing paths) over the paper-code sections both releases compute."""
    n = 0
    bad: list[str] = []
    for section in PAPER_SECTIONS:
        for t, cells in b.get(section, {}).items():
            for k, v in cells.items():
                n += 1
                mine = a.get(section, {}).get(t, {}).get(k)
                if not isinstance(mine, int | float) or abs(mine - v) > 1e-9:
                    bad.append(f"{section}/{t}/{k}: {mine} vs {v}")
    return n, bad


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--against", default=DEFAULT_REV, metavar="REV", help="release commit (default: 0.1.0)")
    ap.add_argument("--worktree", type=Path, help="where the release's worktree is (created when missing)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    ap.add_argument("--cli", action="store_true", help="time the whole `python -m audit score chimera` command")
    ap.add_argument("--child", nargs=5, metavar=("ROOT", "GOLD", "PRED", "LOG", "DB"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        rep = child(*args.child)
        print(json.dumps(rep))
        return rep

    sys.path.insert(0, str(ROOT))
    from bench.common import data_paths, median, print_table, run_child, verdict, workdir

    paths = data_paths(args.n, args.seed)
    release = ensure_worktree(args.against, args.worktree)
    label = RELEASE_LABELS.get(args.against, args.against)
    sides = {"current": ROOT, label: release}
    if args.cli:
        return cli_main(args, paths, sides, label)
    me = str(Path(__file__).resolve())
    runs: dict[str, list[dict]] = {s: [] for s in sides}
    for i in range(args.repeat):
        for side, root in sides.items():
            db = str(workdir() / f"vs-release-{args.n}-{side}-{i}.db")
            runs[side].append(run_child([me, str(args.n), "--child", str(root), str(paths["gold"]),
                                         str(paths["pred"]), str(paths["log"]), db]))
    for side, root in sides.items():
        if any(r["source"] != str(root.resolve()) for r in runs[side]):
            raise SystemExit(f"the {side} child imported audit from {runs[side][0]['source']}, not {root}")
    walls = {s: [r["wall_s"] for r in rs] for s, rs in runs.items()}
    cpus = {s: [r["cpu_s"] for r in rs] for s, rs in runs.items()}
    t_cur, t_rel = median(walls["current"]), median(walls[label])
    rows = []
    for side, root in sides.items():
        rs = runs[side]
        rows.append([f"{side} ({describe(root)})", median(walls[side]),
                     f"{min(walls[side]):.2f}–{max(walls[side]):.2f}", median(cpus[side]),
                     max(r["peak_rss_mb"] for r in rs),
                     median([r["import_s"] for r in rs]),
                     f"{rs[0]['decisions_stored']:,} decisions, {rs[0]['documents_stored']:,} docs, "
                     f"{rs[0]['db_mib']:.1f} MiB"])
    rows.append([f"ratio current / {label}", t_cur / t_rel, f"min {min(walls['current']) / min(walls[label]):.3f}",
                 median(cpus["current"]) / median(cpus[label]), max(r["peak_rss_mb"] for r in runs["current"])
                 / max(r["peak_rss_mb"] for r in runs[label]), "", ""])
    print_table(f"Full CHIMERA scoring, N = {args.n:,}, current vs {label} (median of {args.repeat} fresh "
                "processes each, alternating)",
                ["side", "wall s", "range s", "CPU s", "peak RSS MiB", "imports s (not in wall)", "stores"], rows)
    order = ["open database", "load inputs", "read judge log", "decide (judge lookups)", "store (counts + SQL)",
             "  of which SQL transaction"]
    print_table("Phases (median over the repeats, seconds)", ["phase", "current", label],
                [[k, median([r["phases"].get(k, 0.0) for r in runs["current"]]),
                  median([r["phases"].get(k, 0.0) for r in runs[label]])] for k in order])
    n_cmp, bad = paper_metrics_diff(runs["current"][0]["metrics"], runs[label][0]["metrics"])
    has_strict = "strict_1to1" in runs["current"][0]["metrics"]
    print_table("Checks", ["check", "result"], [
        [f"paper-code metrics identical (current vs {label})",
         f"{'OK' if not bad else 'DIFF'} ({n_cmp} numbers)" + ("" if not bad else "; " + "; ".join(bad[:5]))],
        ["current computes the strict 1-to-1 variant", verdict(has_strict)],
        [f"current <= {label} (median wall)", verdict(t_cur <= t_rel)],
        [f"current <= {label} (median CPU)", verdict(median(cpus["current"]) <= median(cpus[label]))]])
    for rs in runs.values():
        for r in rs:
            r.pop("metrics", None)
    out = {"n": args.n, "against": args.against, "runs": runs, "current_s": t_cur, "release_s": t_rel,
           "current_cpu_s": median(cpus["current"]), "release_cpu_s": median(cpus[label]),
           "ratio": t_cur / t_rel, "metrics_identical": not bad}
    if args.json:
        print(json.dumps(out, indent=1))
    return out


def stored_metrics(db_path: str) -> dict:
    import sqlite3

    with sqlite3.connect(db_path) as conn:
        (text,) = conn.execute("SELECT original_metrics FROM runs WHERE name = 'bench'").fetchone()
    return json.loads(text)


def cli_main(args: argparse.Namespace, paths: dict, sides: dict[str, Path], label: str) -> dict:
    """Both trees' `python -m audit score chimera` command on the same files, alternating, `--repeat` times each."""
    from bench.common import median, print_table, timed_child, workdir

    runs: dict[str, list[dict]] = {s: [] for s in sides}
    metrics: dict[str, dict] = {}
    for i in range(args.repeat):
        for side, root in sides.items():
            db = str(workdir() / f"vs-release-cli-{args.n}-{side}-{i}.db")
            for suffix in ("", "-wal", "-shm"):
                Path(db + suffix).unlink(missing_ok=True)
            runs[side].append(timed_child(["-m", "audit", "--db", db, "score", "chimera", "--gold", str(paths["gold"]),
                                           "--pred", str(paths["pred"]), "--judge", f"replay:{paths['log']}",
                                           "--run", "bench"], root, timeout=3600))
            metrics[side] = stored_metrics(db)
            for suffix in ("", "-wal", "-shm"):
                Path(db + suffix).unlink(missing_ok=True)
    med = {s: (median([r["wall"] for r in rs]), median([r["cpu"] for r in rs])) for s, rs in runs.items()}
    rows = [[f"{side} ({describe(root)})", med[side][0],
             f"{min(r['wall'] for r in runs[side]):.2f}–{max(r['wall'] for r in runs[side]):.2f}", med[side][1],
             max(r["rss"] for r in runs[side])] for side, root in sides.items()]
    ratio_wall, ratio_cpu = med["current"][0] / med[label][0], med["current"][1] / med[label][1]
    rows.append([f"ratio current / {label}", ratio_wall, "", ratio_cpu, ""])
    print_table(f"`python -m audit score chimera`, N = {args.n:,}, current vs {label} (median of {args.repeat} "
                f"fresh processes each, alternating; load {os.getloadavg()[0]:.1f})",
                ["side", "wall s", "range s", "CPU s", "peak RSS MiB"], rows)
    n_cmp, bad = paper_metrics_diff(metrics["current"], metrics[label])
    print(f"paper-code metrics identical: {'OK' if not bad else 'DIFF'} ({n_cmp} numbers)")
    return {"n": args.n, "ratio_wall": ratio_wall, "ratio_cpu": ratio_cpu, "metrics_identical": not bad}


if __name__ == "__main__":
    main()
