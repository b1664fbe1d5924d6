"""LitXBench speed: ours beside the official `litxbench` 0.1.3 package on the same 19 papers, and review -> audited.

    python bench/litxbench_speed.py [--variant drop_meas30] [--reviews 40] [--seed 0] [--venv DIR] [--python312 EXE]

1. Ours: `audit.runs.score_run(db, "litxbench", {gold, pred, text}, "official")` into a fresh SQLite file in a
   temporary folder (every decision stored), with the family's load / decide / counts / metrics timed on the way
   (the rest is the store: hashing the inputs, JSON, SQLite writes).
2. Official: `bench/litx_official_adapter.py` in a Python 3.12 venv holding `litxbench==0.1.3` (the package needs
   3.12; Rejudge runs on 3.11), which converts the same litx-json files into the package's objects and runs
   compare_experiments + compute_multi_level_metrics + count_hallucinations on every paper. Its import and
   interpreter start-up are reported but not counted; reading / converting the files is counted apart from
   comparing. Its numbers are checked against `tests/fixtures/litxbench/expected_<variant>.json` (OK/DIFF), and so
   are ours, so both timings are of the right work.
3. Review: `--reviews` random `material_pair` / `item_pair` decisions of the stored run, each overruled (a `match`
   forbidden, a `no-match` forced) through `audit.review.reviews.add_review`, then `audit.rescoring.audit_run`
   returns the
   audited metrics; median / p90 / max (goal: median <= 50 ms).

The venv is built on first use (`python3.12 -m venv` + `pip install litxbench==0.1.3`, a few minutes) under
`$REJUDGE_BENCH_DIR` (default `$TMPDIR/rejudge-bench`) and reused; `--venv DIR` picks another (built there if it
does not hold the package). It is never part of CI or the requirements. Python 3.12 is looked up as `--python312`,
`$LITXBENCH_PYTHON`, `python3.12` on PATH, then pyenv's versions.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import median, pct, print_table, verdict, workdir  # noqa: E402
from bench.litx_official_adapter import differences  # noqa: E402

DATA = ROOT / "data" / "litxbench"
FIX = ROOT / "tests" / "fixtures" / "litxbench"
ADAPTER = ROOT / "bench" / "litx_official_adapter.py"
PACKAGE, VERSION = "litxbench", "0.1.3"
RUN = "bench-litxbench"
TARGET_MS = 50.0
PHASES = ("load", "decide", "counts", "metrics")
PAIR_KINDS = ("material_pair", "item_pair")


# ---------------------------------------------------------------- the official package's venv


def _python_version(exe: str) -> tuple[int, int] | None:
    try:
        p = subprocess.run([exe, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None  # e.g. a pyenv shim for a version that is installed but not selected
    major, minor = p.stdout.split()
    return int(major), int(minor)


def find_python312(explicit: str | None = None) -> str:
    """A working Python 3.12 interpreter (see the module docstring for the search order).

    Raises:
        SystemExit: none found.
    """
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    candidates = [explicit, os.environ.get("LITXBENCH_PYTHON"), shutil.which("python3.12"),
                  *sorted(glob.glob(str(pyenv / "versions" / "3.12*" / "bin" / "python3.12")), reverse=True),
                  "/usr/local/bin/python3.12", "/usr/bin/python3.12"]
    for c in candidates:
        if c and _python_version(c) == (3, 12):
            return c
    raise SystemExit("the official litxbench package needs Python 3.12 and none was found: install one (pyenv install "
                     "3.12) and pass --python312 PATH or set $LITXBENCH_PYTHON")


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def venv_ready(venv: Path) -> bool:
    """True when the venv's Python imports litxbench 0.1.3."""
    exe = _venv_python(venv)
    if not exe.is_file():
        return False
    p = subprocess.run([str(exe), "-c", f"import importlib.metadata as m, {PACKAGE}; print(m.version('{PACKAGE}'))"],
                       capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.strip() == VERSION


def ensure_venv(venv: Path, python312: str | None = None) -> tuple[Path, float]:
    """The venv's Python, building the venv first when it does not hold litxbench 0.1.3; (python, build seconds)."""
    if venv_ready(venv):
        return _venv_python(venv), 0.0
    if venv.exists():
        if not (venv / "pyvenv.cfg").is_file():
            raise SystemExit(f"{venv} exists and is not a venv; pass --venv with another folder")
        shutil.rmtree(venv)  # a build that stopped half-way
    exe = find_python312(python312)
    log = venv.with_name(venv.name + "-install.log")
    print(f"building {venv} with {exe} (pip install {PACKAGE}=={VERSION}; log {log}) ...", flush=True)
    t0 = time.perf_counter()
    venv.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        for cmd in ([exe, "-m", "venv", str(venv)],
                    [str(_venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check",
                     f"{PACKAGE}=={VERSION}"]):
            if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                raise SystemExit(f"`{' '.join(cmd)}` failed; see {log}")
    if not venv_ready(venv):
        raise SystemExit(f"{venv} was built but does not import {PACKAGE} {VERSION}; see {log}")
    return _venv_python(venv), time.perf_counter() - t0


def run_official(python: Path, inputs: dict[str, str], expected: Path) -> dict:
    """The adapter's JSON report (its last stdout line), plus `process_wall_s` (interpreter start-up included)."""
    cmd = [str(python), str(ADAPTER), "--gold", inputs["gold"], "--pred", inputs["pred"], "--text", inputs["text"],
           "--expected", str(expected)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"the official adapter failed with exit status {p.returncode}")
    report = json.loads(p.stdout.strip().splitlines()[-1])
    report["process_wall_s"] = wall
    return report


# ---------------------------------------------------------------- ours


@contextlib.contextmanager
def phase_timers(task: object, names: tuple[str, ...]) -> Iterator[dict[str, float]]:
    """Seconds spent in each named method of `task` while the block runs (instance-level wrappers, removed after)."""
    spent = dict.fromkeys(names, 0.0)

    def wrap(name: str, fn: Callable) -> Callable:
        def timed(*args: object, **kwargs: object) -> object:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - t0
        return timed

    for n in names:
        setattr(task, n, wrap(n, getattr(task, n)))
    try:
        yield spent
    finally:
        for n in names:
            delattr(task, n)


def score_ours(db: object, inputs: dict[str, str]) -> tuple[float, dict[str, float], dict]:
    """(total seconds, seconds per family phase, run row) of one `score_run` into `db`."""
    from audit.runs import score_run
    from scoring.families import get_task
    from scoring.families.litxbench import review

    review._DOCS.clear()  # a cold start: nothing parsed or solved yet
    with phase_timers(get_task("litxbench"), PHASES) as spent:
        t0 = time.perf_counter()
        row = score_run(db, "litxbench", inputs, "official", run=RUN)
        total = time.perf_counter() - t0
    return total, dict(spent), row


def time_reviews(db: object, n: int, seed: int) -> dict:
    """Overrule `n` random pair decisions one by one; per review the ms of add_review, audit_run, both."""
    from audit.rescoring import audit_run
    from audit.review.reviews import add_review
    from audit.store.database import run_row

    run_id = run_row(db, RUN)["id"]
    marks = ",".join("?" * len(PAIR_KINDS))
    rows = list(db.conn.execute(f"SELECT id, kind, judge_label FROM decisions WHERE run_id = ? AND kind IN ({marks}) "
                                "ORDER BY id", [run_id, *PAIR_KINDS]))
    rng = random.Random(seed)
    chosen = rng.sample(rows, min(n, len(rows)))
    f1 = audit_run(db, RUN).metrics["multi_level"]["overall_f1"]  # warm-up, and the score before the reviews
    out: dict = {"review": [], "audit": [], "total": [], "forced": 0, "forbidden": 0, "f1_changed": 0,
                 "candidates": len(rows), "kinds": {k: 0 for k in PAIR_KINDS}}
    for dec_id, kind, judge in chosen:
        label = "no-match" if judge == "match" else "match"
        out["forbidden" if judge == "match" else "forced"] += 1
        out["kinds"][kind] += 1
        t0 = time.perf_counter()
        add_review(db, RUN, dec_id, label, "bench")
        t1 = time.perf_counter()
        new_f1 = audit_run(db, RUN).metrics["multi_level"]["overall_f1"]
        t2 = time.perf_counter()
        out["review"].append((t1 - t0) * 1000)
        out["audit"].append((t2 - t1) * 1000)
        out["total"].append((t2 - t0) * 1000)
        out["f1_changed"] += new_f1 != f1
        f1 = new_f1
    out["final_f1"] = f1
    return out


# ---------------------------------------------------------------- report


def _check(diffs: list[str]) -> str:
    return "OK" if not diffs else f"DIFF ({len(diffs)}: {diffs[0]})"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", default="drop_meas30", help="prediction folder data/litxbench/pred_<variant>")
    ap.add_argument("--reviews", type=int, default=40, help="timed reviews (at least 30 for the figure)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--venv", type=Path, help="venv for the official package (default: in the bench work folder)")
    ap.add_argument("--python312", help="Python 3.12 interpreter to build the venv with")
    args = ap.parse_args(argv)

    from audit.store.database import open_db

    inputs = {"gold": str(DATA / "gold"), "pred": str(DATA / f"pred_{args.variant}"), "text": str(DATA / "papers")}
    expected_path = FIX / f"expected_{args.variant}.json"
    expected = json.loads(expected_path.read_text(encoding="utf-8"))["overall"]
    python, build_s = ensure_venv(args.venv or workdir() / f"{PACKAGE}-{VERSION}-venv", args.python312)

    with tempfile.TemporaryDirectory(prefix="litxbench-speed-") as tmp:
        db = open_db(Path(tmp) / "rejudge.db")
        ours_s, phases, row = score_ours(db, inputs)
        ours_diffs = differences(row["original_metrics"]["overall"], expected, "overall")
        off = run_official(python, inputs, expected_path)
        reviews = time_reviews(db, args.reviews, args.seed)
        db.conn.close()

    off_compare = off["compare_s"] + off["metrics_s"]
    off_total = off["read_s"] + off["convert_s"] + off_compare + off["hallucination_s"]
    store_s = ours_s - sum(phases.values())
    print_table(f"Scoring the 19 papers of pred_{args.variant} ({row['n_decisions']:,} decisions stored)",
                ["side", "phase", "seconds"], [
        ["ours", "load: read + validate the JSON (task.load)", phases["load"]],
        ["ours", "decide: solve, pairing alternatives, number check (task.decide)", phases["decide"]],
        ["ours", "counts of every paper (task.counts)", phases["counts"]],
        ["ours", "metrics (task.metrics)", phases["metrics"]],
        ["ours", "store: input hashes, JSON, SQLite writes", store_s],
        ["ours", "**total score_run**", ours_s],
        ["official", "read JSON + paper texts", off["read_s"]],
        ["official", "convert to litxbench objects (adapter)", off["convert_s"]],
        ["official", "compare_experiments", off["compare_s"]],
        ["official", "compute_multi_level_metrics", off["metrics_s"]],
        ["official", "count_hallucinations", off["hallucination_s"]],
        ["official", "**total (read + convert + compare + metrics + hallucinations)**", off_total],
        ["official", "(not counted) import litxbench + pymatgen + pint", off["import_s"]],
        ["official", "(not counted) whole process, interpreter start-up included", off["process_wall_s"]],
        ["ratio", "ours total / official total", f"{ours_s / off_total:.1f}×"],
        ["ratio", "ours total / official compare + metrics only", f"{ours_s / off_compare:.1f}×"],
        ["ratio", "ours decide + counts + metrics / official convert + compare + metrics + hallucinations",
         f"{(phases['decide'] + phases['counts'] + phases['metrics']) / (off_total - off['read_s']):.1f}×"],
    ])
    f1 = expected["multi_level"]["overall"]["f1"]
    print_table(f"Same work? Numbers against tests/fixtures/litxbench/{expected_path.name}",
                ["side", "check", "result"], [
        ["official", f"overall (every number, 1e-9), overall F1 {off['overall']['multi_level']['overall']['f1']:.4f} "
                     f"vs {f1:.4f}", _check(off["overall_diffs"])],
        ["official", "papers equal number for number", f"{off['papers_equal']}/{off['papers_checked']}"],
        ["ours", f"overall (every number, 1e-9), overall F1 "
                 f"{row['original_metrics']['multi_level']['overall_f1']:.4f}", _check(ours_diffs)],
        ["official", "package / Python", f"litxbench {off['litxbench_version']} on Python {off['python']}"
                                         + (f" (venv built in {build_s:.0f} s)" if build_s else "")],
    ])
    t, r, a = reviews["total"], reviews["review"], reviews["audit"]
    print_table(f"One review -> audited metrics ({len(t)} reviews on random pair decisions: "
                f"{reviews['forced']} forced, {reviews['forbidden']} forbidden; "
                f"{reviews['kinds']['material_pair']} material, {reviews['kinds']['item_pair']} item; "
                f"{reviews['f1_changed']} changed the overall F1)",
                ["step", "median ms", "p90 ms", "max ms"], [
        ["add_review + audit_run", median(t), pct(t, 90), max(t)],
        ["  add_review (re-solves the paper)", median(r), pct(r, 90), max(r)],
        ["  audit_run", median(a), pct(a, 90), max(a)],
        ["goal: median <= 50 ms", verdict(median(t) <= TARGET_MS), "", ""],
    ])
    return {"ours_s": ours_s, "phases": phases, "official": off, "reviews": reviews}


if __name__ == "__main__":
    main()
