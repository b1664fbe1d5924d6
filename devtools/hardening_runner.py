"""The runner of the hardening cases (`devtools/hardening_cases/`) and the one rule each is judged by: run a case
on a fresh copy of the base database (the CLI forked from this process, or `python -m audit`), then judge its exit
status, stderr, rows and watched files (`judge_case2`). `bench/hardening.py` prints the rounds with it; the tests
under `tests/hardening/` check the runner and the cases with it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from devtools.sqlite_files import copy_db

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 60


def run_cli(argv: list[str | bytes], env: dict[str, str], fork: bool, timeout: float = TIMEOUT_S) -> tuple[int, str]:
    """(exit status, stderr) of `python -m audit ARGV`: in a forked child of this process, or a fresh one."""
    if not fork:
        args = [a if isinstance(a, bytes) else a.encode("utf-8", "surrogateescape") for a in argv]
        try:
            p = subprocess.run([sys.executable.encode(), b"-m", b"audit", *args], capture_output=True, cwd=ROOT,
                               env={**os.environ, **env}, timeout=timeout)
        except subprocess.TimeoutExpired:
            return -9, f"timed out after {timeout:g} s"
        return p.returncode, p.stderr.decode("utf-8", "replace")
    from audit.cli import main

    args = [os.fsdecode(a) if isinstance(a, bytes) else a for a in argv]  # what Python makes of raw argv bytes
    err = tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: run the CLI as `python -m audit` would, stdout discarded
        status = 1
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(err.fileno(), 2)
            # write through the descriptors themselves (a host that captures output, as pytest does, has bound
            # sys.stdout / sys.stderr to files of its own)
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            os.environ.update(env)
            status = main(args)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - exactly what the interpreter would print
            traceback.print_exc()
            status = 1
        finally:
            try:
                import gc

                gc.collect()  # close the CLI's connections as the interpreter's exit would (os._exit does not)
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(status)
    deadline = time.monotonic() + timeout
    while True:
        done, wstatus = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -9, f"timed out after {timeout:g} s"
        time.sleep(0.005)
    err.seek(0)
    return os.waitstatus_to_exitcode(wstatus), err.read().decode("utf-8", "replace")


def snapshot(db: Path) -> tuple | None:
    """What a failed command must not have changed: every run and its row counts, and every review."""
    if not db.is_file():
        return None
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        try:
            runs = c.execute("SELECT name, n_docs, n_decisions FROM runs ORDER BY name").fetchall()
            counts = tuple(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                           for t in ("documents", "decisions", "reviews", "audit_state"))
            reviews = c.execute("SELECT uid, decision_id, label FROM reviews ORDER BY id").fetchall()
        except sqlite3.DatabaseError:
            return ("unreadable",)
    c.close()
    return tuple(runs), counts, tuple(reviews)


@dataclass
class Outcome2:
    case: object  # devtools.hardening_cases.Case2
    module: str
    status: int
    stderr: str
    good: bool
    """A clear refusal (`refuse`) or the documented behaviour (`ok`)."""
    traceback: bool
    silent: bool
    """A refusal case that exited 0, or an `ok` case whose check failed at exit 0."""
    partial: bool
    modified: list[str]
    problem: str = ""


def round2_modules() -> list[str]:
    """Every case module in devtools/hardening_cases/ (inputs, security, store, ... whoever wrote one)."""
    import pkgutil

    import devtools.hardening_cases as pkg

    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith(("_", "r3_")))


def round3_notes() -> list[str]:
    """What the round-3 modules could not try here (e.g. full-disk cases without root), from their `NOTES`."""
    import importlib

    return [n for m in round3_modules() for n in getattr(importlib.import_module(f"devtools.hardening_cases.{m}"),
                                                          "NOTES", [])]


def round3_modules() -> list[str]:
    """Every round-3 case module (issue 34): devtools/hardening_cases/r3_*.py, whoever wrote one; counted apart."""
    import pkgutil

    import devtools.hardening_cases as pkg

    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.startswith("r3_"))


def _tree_hash(path: Path) -> dict[str, str]:
    """sha256 of a file, or of every file under a folder (files appearing or vanishing count as changes)."""
    if path.is_file():
        return {str(path): hashlib.sha256(path.read_bytes()).hexdigest()}
    if path.is_dir():
        return {str(f): hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(path.rglob("*")) if f.is_file()}
    return {str(path): "absent"}


def judge_case2(case: object, module: str, status: int, stderr: str, before: dict, after: dict,
                rows_changed: bool, work: Path, db: Path) -> Outcome2:
    """The one rule every round-2 case is judged by (devtools/hardening_cases/__init__.py)."""
    lines = [x for x in stderr.strip().splitlines() if x.strip()]
    tb = "Traceback (most recent call last)" in stderr or "internal error" in stderr or status == 1
    modified = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    problem = ""
    if case.expect == "refuse":  # type: ignore[attr-defined]
        good = status == 2 and not tb and any(x.startswith("error:") or ": error:" in x for x in lines)
        silent = status == 0
        partial = status != 0 and rows_changed
        modified = modified if status != 0 else []
        if not good:
            problem = f"exit {status}: {lines[-1][:200] if lines else '(no output)'}"
    else:
        check = case.check(work, db, stderr) if status == 0 and case.check else None  # type: ignore[attr-defined]
        good, silent, partial, modified = status == 0 and check is None, status == 0 and check is not None, False, []
        if not good:
            problem = check or f"exit {status}: {lines[-1][:200] if lines else '(no output)'}"
    if modified:
        problem = (problem + "; " if problem else "") + f"modified: {', '.join(Path(m).name for m in modified[:3])}"
    return Outcome2(case, module, status, stderr, good and not modified and not partial, tb, silent, partial,
                    modified, problem)


def run_case2(case: object, module: str, work: Path, base_db: Path, fork: bool, n: int) -> Outcome2:
    """Run one round-2 case on a fresh database copy (in a folder of its own, so its WAL files are watched too)."""
    folder = work / "dbs" / f"case{n}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    db = folder / "case.db"
    copy_db(base_db, db)
    watched = [folder, *case.watch]  # type: ignore[attr-defined]
    before = {k: v for w in watched for k, v in _tree_hash(Path(w)).items()}
    rows = _rows(db)
    try:
        if case.argv is None:  # type: ignore[attr-defined]
            saved = dict(os.environ)
            os.environ.update(case.env)  # type: ignore[attr-defined]
            try:
                status, stderr = case.call(work, db)  # type: ignore[attr-defined]
            finally:
                os.environ.clear()
                os.environ.update(saved)
        else:
            argv = [a.replace("{db}", str(db)) if isinstance(a, str) else a for a in case.argv]  # type: ignore
            status, stderr = run_cli(argv, case.env, fork)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a case that crashes the harness counts as a traceback
        status, stderr = 1, traceback.format_exc()
    after = {k: v for w in watched for k, v in _tree_hash(Path(w)).items()}
    return judge_case2(case, module, status, stderr, before, after, _rows(db) != rows, work, db)


def _rows(db: Path) -> tuple | None:
    """`snapshot` read without leaving files behind: `immutable` when no WAL files are beside the database (a
    `mode=ro` connection would create -wal and -shm files and count as a modification)."""
    if not db.is_file() or any(Path(f"{db}{s}").exists() for s in ("-wal", "-shm")):
        return snapshot(db)
    with sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True) as c:
        try:
            runs = c.execute("SELECT name, n_docs, n_decisions FROM runs ORDER BY name").fetchall()
            counts = tuple(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                           for t in ("documents", "decisions", "reviews", "audit_state"))
            reviews = c.execute("SELECT uid, decision_id, label FROM reviews ORDER BY id").fetchall()
        except sqlite3.DatabaseError:
            return ("unreadable",)
    c.close()
    return tuple(runs), counts, tuple(reviews)


def section_round2(work: Path, base_db: Path, fork: bool, modules: list[str] | None = None,
                   label: str = "round2") -> list[Outcome2]:
    """Run every case of the modules (default: round 2's) on fresh database copies; `label` names the work folder
    (round 3 runs its `r3_*` modules through this same runner and rule)."""
    import importlib

    out: list[Outcome2] = []
    n = 0
    for name in modules if modules is not None else round2_modules():
        mod = importlib.import_module(f"devtools.hardening_cases.{name}")
        mwork = work / label / name
        mwork.mkdir(parents=True, exist_ok=True)
        for case in mod.cases(mwork, base_db):
            n += 1
            out.append(run_case2(case, name, mwork, base_db, fork, n))
    return out


def round2_rows(outcomes: list[Outcome2]) -> list[tuple]:
    """Per group: cases, clear errors / documented-ok, tracebacks, silent acceptances, partial writes, files
    modified on refusal; and the total."""
    groups: dict[str, list[Outcome2]] = {}
    for o in outcomes:
        groups.setdefault(o.case.group, []).append(o)  # type: ignore[attr-defined]

    def row(name: str, os_: list[Outcome2]) -> tuple:
        return (name, len(os_), sum(o.good for o in os_), sum(o.traceback for o in os_), sum(o.silent for o in os_),
                sum(o.partial for o in os_), sum(bool(o.modified) for o in os_))

    return [*(row(g, os_) for g, os_ in groups.items()), row("**all**", outcomes)]
