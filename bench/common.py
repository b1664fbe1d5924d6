"""Shared helpers of the benchmarks: data and database preparation, timing, memory and table printing.

Generated files and scored databases live in a work directory (default `$TMPDIR/rejudge-bench`, or
`$REJUDGE_BENCH_DIR`), keyed by N and seed, and are reused by later benchmarks of the same size.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BENCH = ROOT / "bench"
RUN_NAME = "bench"
DEFAULT_SEED = 0

from devtools.sqlite_files import copy_db  # noqa: E402, F401 (re-exported: the benchmarks copy databases with it)


def workdir() -> Path:
    d = Path(os.environ.get("REJUDGE_BENCH_DIR") or Path(tempfile.gettempdir()) / "rejudge-bench")
    d.mkdir(parents=True, exist_ok=True)
    return d


def data_paths(n: int, seed: int = DEFAULT_SEED) -> dict[str, Path]:
    """Generated gold CSV, prediction JSONL and judge log for N abstracts (created on first use)."""
    out = workdir() / f"data-{n}-s{seed}"
    paths = {"gold": out / "gold.csv", "pred": out / "pred.jsonl", "log": out / "judge.jsonl", "dir": out}
    if not all(paths[k].is_file() for k in ("gold", "pred", "log")):
        from devtools.generate import generate

        generate(n, out, seed=seed)
    return paths


def peak_rss_mb() -> float:
    """This process's peak resident set size (VmHWM) in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def proc_status_kb(pid: int, field: str) -> int:
    """A `kB` field (VmHWM, VmRSS, ...) of /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def run_child(args: Sequence[str], env: dict | None = None) -> dict:
    """Run `python ARGS` in a fresh interpreter; its last stdout line is a JSON report, returned as a dict."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"child {' '.join(args)} failed with exit status {p.returncode}")
    report = json.loads(p.stdout.strip().splitlines()[-1])
    report["process_wall_s"] = wall
    return report


def scored_db(n: int, dst: Path, seed: int = DEFAULT_SEED) -> Path:
    """A fresh copy (at `dst`) of a database holding run `bench` scored on the generated N-abstract data."""
    base = workdir() / f"scored-{n}-s{seed}.db"
    if not base.is_file():
        from audit.runs import score_run
        from audit.store.database import open_db

        paths = data_paths(n, seed)
        tmp = base.with_suffix(".tmp.db")
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        db = open_db(tmp)
        score_run(db, "chimera", {"gold": str(paths["gold"]), "pred": str(paths["pred"])}, f"replay:{paths['log']}",
                  run=RUN_NAME)
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.conn.close()
        copy_db(tmp, base)
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
    copy_db(base, dst)
    return dst


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear interpolation."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt(v: object) -> str:
    if isinstance(v, float):
        if v != v:
            return "n/a"
        return f"{v:,.3f}" if abs(v) < 100 else f"{v:,.1f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A Markdown table (pastes into bench/README.md and issue notes as is)."""
    cells = [[fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print(f"\n### {title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
    sys.stdout.flush()


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


# The scale benches (family_scale, retrieval_scale): one review -> audited metrics, timed in a child process.
REVIEW_CHILD = r"""
import json, statistics, sys, time
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import load_view
db = open_db(sys.argv[1])
n = int(sys.argv[2])
load_view(db, "bench").audit.metrics  # warm: imports, the run's counts
task = load_view(db, "bench").task
rows = db.execute("SELECT id, kind FROM decisions ORDER BY id").fetchall()
picked = rows[:: max(1, len(rows) // n)][:n]
wall, cpu = [], []
for i, (d, kind) in enumerate(picked):
    labels = task.label_schemes[kind].labels
    t, c = time.perf_counter(), time.process_time()
    add_review(db, "bench", d, labels[i % len(labels)], "bench")
    load_view(db, "bench").audit.metrics
    wall.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
wall.sort()
print(json.dumps({"median": statistics.median(wall), "p90": wall[int(0.9 * (len(wall) - 1))],
                  "cpu": statistics.median(cpu)}))
"""


def timed_child(args: list[str], tree: Path, timeout: float) -> dict:
    """`python ARGS` run from `tree` (its code): wall, CPU seconds, peak RSS (MiB) and stdout; killed after
    `timeout` seconds (wall = inf)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, *args], cwd=tree, stdout=out, stderr=err, text=True,
                             env={**os.environ, "PYTHONPATH": str(tree)})
        killed = False
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout and not killed:
                p.kill()
                killed = True
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        rss = usage.ru_maxrss / 1024
        if killed:
            return {"wall": float("inf"), "rss": rss, "cpu": float("nan"), "out": ""}
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{tree}: {' '.join(args)} failed: {err.read()[-2000:]}")
        return {"wall": wall, "rss": rss, "cpu": usage.ru_utime + usage.ru_stime, "out": out.read()}


def commit_of(tree: Path) -> str:
    """The short commit a source tree is at (the tree's path when it is not a git checkout): table headings."""
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return str(tree)
