"""Round 3 (issue 34), data loss: every output path of the CLI against the database, its WAL files, the run's inputs
and existing files; the judge log that cannot be written; a full disk under the database and under an output.

The rule under test is `audit/output_paths.py`: never the database (or its -wal / -shm, through links or relative
paths), never an input of the run, never an existing file unless `--force`; written to a temporary file and renamed.
Full-disk cases mount a small tmpfs (root only); without it they are left out and `NOTES` says so.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from devtools.hardening_cases import Case2

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "data" / "chimera"
GOLD, PRED, LOG = DATA / "eval.csv", DATA / "pred_mixed.jsonl", DATA / "judge_mixed.jsonl"
RUN = "base"
KEY = {"OPENAI_API_KEY": "sk-bench-not-a-key"}

NOTES: list[str] = []

EXPORTS = [["export", "--run", RUN, "--format", f] for f in ("json", "csv", "latex", "judgelog")]
WRITERS: dict[str, list[str]] = {
    **{f"export --format {a[-1]}": a for a in EXPORTS},
    "report": ["report", "--run", RUN],
    "export-reviews": ["export-reviews", "--run", RUN],
}
"""Commands whose `--out` names the file they write, with their other arguments."""


def _score(gold: Path = GOLD, pred: Path = PRED, log: Path = LOG, run: str = "r3-new") -> list[str]:
    return ["score", "chimera", "--db", "{db}", "--gold", str(gold), "--pred", str(pred), "--judge", f"replay:{log}",
            "--run", run]


def _batch(gold: Path = GOLD) -> list[str]:
    return ["judge-batch", "export", "--db", "{db}", "--task", "chimera", "--gold", str(gold), "--pred", str(PRED),
            "--judge", "openai:gpt-4o-mini"]


def _with_db(argv: list[str]) -> list[str]:
    return [argv[0], "--db", "{db}", *argv[1:]]


def _cli(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    from devtools.hardening_runner import run_cli

    return run_cli(argv, env or {}, fork=True)


def _reviews(db: Path, immutable: bool = False) -> int:
    """Reviews stored (`immutable`: read without creating the WAL index, which a full disk refuses)."""
    with sqlite3.connect(f"file:{db}?mode=ro{'&immutable=1' if immutable else ''}", uri=True) as c:
        n = c.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    c.close()
    return n


def _runs(db: Path) -> list[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        names = [r[0] for r in c.execute("SELECT name FROM runs ORDER BY name")]
    c.close()
    return names


# ---------------------------------------------------------------- checks of `ok` cases


def replaced(path: Path, old: str, starts: str = "") -> Callable[[Path, Path, str], str | None]:
    def check(_work: Path, _db: Path, _err: str) -> str | None:
        text = path.read_text(encoding="utf-8", errors="replace")
        if text == old or not text.startswith(starts):
            return f"{path.name} not replaced by a whole new file ({text[:40]!r})"
        temps = list(path.parent.glob(f".{path.name}.*.tmp"))
        return f"temporary file left: {temps[0].name}" if temps else None
    return check


def log_with_run(path: Path, run: str) -> Callable[[Path, Path, str], str | None]:
    def check(_work: Path, db: Path, _err: str) -> str | None:
        if run not in _runs(db):
            return f"run {run} not stored"
        return None if path.is_file() and path.stat().st_size > 0 else f"{path.name} missing or empty"
    return check


def exported_then_deleted(path: Path) -> Callable[[Path, Path, str], str | None]:
    def check(_work: Path, db: Path, _err: str) -> str | None:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        if len(lines) != 3:
            return f"{path.name} holds {len(lines)} review lines, not 3"
        return f"run {RUN} still there" if RUN in _runs(db) else None
    return check


# ---------------------------------------------------------------- a full disk (tmpfs, root only)


def _can_mount(work: Path) -> str | None:
    """None when a tmpfs can be mounted here, else why not."""
    if os.geteuid() != 0:
        return "not root"
    probe = work / "mount-probe"
    probe.mkdir(exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True,
                       text=True)
    if p.returncode:
        return p.stderr.strip()[:120] or "mount failed"
    subprocess.run(["umount", str(probe)], check=False)
    return None


@contextmanager
def full_tmpfs(work: Path, name: str, leave: int = 0, db: Path | None = None,
               files: dict[str, str] | None = None) -> Iterator[Path]:
    """A 4 MB tmpfs (with a copy of `db` and the `files` when given), filled until `leave` bytes are free;
    unmounted after."""
    m = work / f"tmpfs-{name}"
    m.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(m)], check=True, capture_output=True)
    try:
        if db is not None:
            shutil.copy(db, m / "audit.db")
        for fname, text in (files or {}).items():
            (m / fname).write_text(text)
        st = os.statvfs(m)
        with open(m / "filler", "wb") as f:
            f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
        yield m
    finally:
        subprocess.run(["umount", "-l", str(m)], check=False)


def _said(err: str, *must: str, never: tuple[str, ...] = ("cannot read", "damaged")) -> str | None:
    line = next((x for x in err.splitlines() if x.startswith("error:")), "")
    missing = [m for m in must if m not in line]
    bad = [n for n in never if n in line]
    return f"message lacks {missing} or says {bad}: {line[:160]}" if missing or bad else None


def review_on_full_disk(leave: int) -> Callable[[Path, Path], tuple[int, str]]:
    def call(work: Path, db: Path) -> tuple[int, str]:
        with full_tmpfs(work, f"review-{leave}", leave, db) as m:
            target = m / "audit.db"
            before = _reviews(target, immutable=True)
            status, err = _cli(["review", "--db", str(target), "--run", RUN, "--decision", "5", "--label", "match",
                                "--reviewer", "ana"])
            (m / "filler").unlink()
            problem = _said(err, "disk full", "nothing stored was lost", str(target))
            if problem or _reviews(target) != before:
                return 3, f"{problem or ''} reviews {before} -> {_reviews(target)}"
        return status, err
    return call


def read_on_full_disk(argv: list[str]) -> Callable[[Path, Path], tuple[int, str]]:
    """A command that opens the database (a WAL database writes its -shm to open): the cause is the full disk."""
    def call(work: Path, db: Path) -> tuple[int, str]:
        with full_tmpfs(work, f"read-{argv[0]}", 0, db) as m:
            target = m / "audit.db"
            status, err = _cli([argv[0], "--db", str(target), *argv[1:]])
            if status == 0:
                return status, err  # reading worked: all the better (judged as silent for a refusal case)
            problem = _said(err, "disk full")
            if problem:
                return 3, problem
        return status, err
    return call


def output_on_full_disk(argv: list[str], name: str, existing: bool) -> Callable[[Path, Path], tuple[int, str]]:
    """An output file written onto a full disk: refused with "disk full"; no truncated or 0-byte file, an existing
    file unchanged."""
    def call(work: Path, db: Path) -> tuple[int, str]:
        with full_tmpfs(work, f"out-{name}", 0, files={name: "old\n"} if existing else None) as m:
            out = m / name
            args = [a.replace("{db}", str(db)) for a in argv]
            status, err = _cli([*args, "--out" if "score" not in args else "--judge-log", str(out),
                                *(["--force"] if existing else [])], KEY)
            left = sorted(p.name for p in m.iterdir() if p.name != "filler")
            want = [name] if existing else []
            problem = _said(err, "disk full", str(out))
            if problem or left != want or existing and out.read_text() != "old\n":
                return 3, f"{problem or ''}; files left {left}"
        return status, err
    return call


# ---------------------------------------------------------------- the cases


def cases(work: Path, base_db: Path) -> list[Case2]:  # noqa: ARG001 - each case gets its own copy
    out: list[Case2] = []
    gold, pred, log = work / "gold.csv", work / "pred.jsonl", work / "judge.jsonl"
    for src, dst in ((GOLD, gold), (PRED, pred), (LOG, log)):
        shutil.copy(src, dst)
    inputs = [gold, pred, log]

    # the database, its WAL files, the database through a link or a relative path
    g = "output = the database"
    for name, argv in WRITERS.items():
        out.append(Case2(g, f"{name} --out DB --force", [*_with_db(argv), "--out", "{db}", "--force"]))
    out.append(Case2(g, "delete-run --exported DB", ["delete-run", "--db", "{db}", "--run", RUN, "--exported",
                                                     "{db}"]))
    out.append(Case2(g, "score --judge-log DB --force", [*_score(), "--judge-log", "{db}", "--force"]))
    out.append(Case2(g, "judge-batch export --out DB --force", [*_batch(), "--out", "{db}", "--force"], env=KEY))
    for suffix in ("-wal", "-shm"):
        for name in ("export --format json", "report", "export-reviews"):
            out.append(Case2(g, f"{name} --out DB{suffix} --force",
                             [*_with_db(WRITERS[name]), "--out", "{db}" + suffix, "--force"]))
        out.append(Case2(g, f"score --judge-log DB{suffix} --force", [*_score(), "--judge-log", "{db}" + suffix,
                                                                       "--force"]))

    def via(kind: str, argv: list[str]) -> Callable[[Path, Path], tuple[int, str]]:
        def call(_work: Path, db: Path) -> tuple[int, str]:
            if kind == "symlink":
                target = db.parent / "link.html"
                target.symlink_to(db)
            elif kind == "hardlink":
                target = db.parent / "hard.html"
                os.link(db, target)
            else:
                target = Path(os.path.relpath(db.parent)) / "sub" / ".." / db.name
                (db.parent / "sub").mkdir()
            try:
                return _cli([a.replace("{db}", str(db)) for a in argv] + ["--out", str(target), "--force"])
            finally:
                if kind == "symlink":
                    target.unlink()
                elif kind == "hardlink":
                    target.unlink()
                else:
                    (db.parent / "sub").rmdir()
        return call

    for kind in ("symlink", "hardlink", "relative path"):
        for name in ("export --format csv", "report", "export-reviews"):
            out.append(Case2(g, f"{name} --out DB through a {kind} --force", None,
                             call=via(kind.split()[0], _with_db(WRITERS[name]))))

    # an input of the run (the store has its SHA-256) or of the command
    g = "output = an input"
    for name in ("export --format json", "report", "export-reviews"):
        out.append(Case2(g, f"{name} --out a copy of the run's gold --force",
                         [*_with_db(WRITERS[name]), "--out", str(gold), "--force"], watch=[gold]))
    for what, path in (("gold", gold), ("predictions", pred), ("replay log", log)):
        out.append(Case2(g, f"score --judge-log = its {what} --force",
                         [*_score(gold, pred, log), "--judge-log", str(path), "--force"], watch=inputs))
    out.append(Case2(g, "judge-batch export --out = its gold --force", [*_batch(gold), "--out", str(gold), "--force"],
                     env=KEY, watch=[gold]))

    # an existing file: refused without --force (unchanged), replaced whole with it
    g = "existing file"
    for name, argv in [*WRITERS.items(), ("judge-batch export", None), ("score --judge-log", None),
                       ("delete-run --exported", None), ("delete-run --exported --force", None)]:
        slug = name.replace(" ", "_").replace("-", "")
        old = work / f"old_{slug}.txt"
        old.write_text("precious\n")
        if argv is not None:
            cmd = [*_with_db(argv), "--out", str(old)]
        elif name == "judge-batch export":
            cmd = [*_batch(), "--out", str(old)]
        elif name == "score --judge-log":
            cmd = [*_score(), "--judge-log", str(old)]
        else:
            cmd = ["delete-run", "--db", "{db}", "--run", RUN, "--exported", str(old),
                   *(["--force"] if name.endswith("--force") else [])]
        out.append(Case2(g, f"{name} onto an existing file without --force" if "force" not in name
                         else f"{name} onto an existing file (its --force deletes reviews)", cmd, env=KEY,
                         watch=[old]))
    for name, argv, starts in (("export --format csv", WRITERS["export --format csv"], ""),
                               ("report", WRITERS["report"], "<!DOCTYPE html>"),
                               ("export-reviews", WRITERS["export-reviews"], "{")):
        f = work / f"force_{name.replace(' ', '_')}.txt"
        f.write_text("precious\n")
        out.append(Case2(g, f"{name} --force replaces an existing file whole", [*_with_db(argv), "--out", str(f),
                                                                                "--force"], expect="ok",
                         check=replaced(f, "precious\n", starts)))
    f = work / "force_judge_log.jsonl"
    f.write_text("precious\n")
    out.append(Case2(g, "score --judge-log --force replaces an existing log, run stored",
                     [*_score(run="r3-forced"), "--judge-log", str(f), "--force"], expect="ok",
                     check=log_with_run(f, "r3-forced")))
    f = work / "exported_new.jsonl"
    out.append(Case2(g, "delete-run --exported NEWFILE writes the reviews, then deletes",
                     ["delete-run", "--db", "{db}", "--run", RUN, "--exported", str(f)], expect="ok",
                     check=exported_then_deleted(f)))

    # the judge log cannot be written: nothing stored (the runner's partial-write check), the file named
    g = "judge log not writable"
    if Path("/dev/full").exists():
        out.append(Case2(g, "score --judge-log /dev/full --force", [*_score(), "--judge-log", "/dev/full",
                                                                     "--force"]))
        out.append(Case2(g, "score --judge-log /dev/full", [*_score(), "--judge-log", "/dev/full"]))
    ro = work / "ro"
    ro.mkdir(exist_ok=True)
    out.append(Case2(g, "score --judge-log into a missing folder", [*_score(), "--judge-log",
                                                                     str(work / "nope" / "x.jsonl")]))
    out.append(Case2(g, "score --judge-log = a folder", [*_score(), "--judge-log", str(ro)]))

    # a full disk
    g = "full disk"
    why = _can_mount(work)
    if why:
        NOTES.append(f"r3_data_loss: full-disk cases left out (mounting a tmpfs: {why})")
        return out
    for leave in (0, 40_000):
        out.append(Case2(g, f"review with {leave} bytes free", None, call=review_on_full_disk(leave)))
    for argv in (["runs"], ["decisions", "--run", RUN], ["export", "--run", RUN], ["agreement", "--run", RUN],
                 ["estimate", "--run", RUN], ["export-reviews", "--run", RUN], ["plan", "--run", RUN],
                 ["review", "--run", RUN, "--decision", "4", "--label", "match", "--reviewer", "bo"]):
        out.append(Case2(g, f"{argv[0]} on a database whose disk is full", None, call=read_on_full_disk(argv)))
    for name, argv in (("report", _with_db(WRITERS["report"])), ("export --format json", _with_db(EXPORTS[0])),
                       ("export-reviews", _with_db(WRITERS["export-reviews"])), ("judge-batch export", _batch()),
                       ("score --judge-log", _score(run="r3-full"))):
        for existing in (False, True):
            out.append(Case2(g, f"{name} onto a full disk{' (replacing a file)' if existing else ''}", None,
                             call=output_on_full_disk(argv, "out.txt", existing)))
    return out
