"""Bench figures with one source: a bench's printed output kept as written, with the commit that produced it.

`record` runs a bench command and writes what it prints to `bench/results/<name>.md` under a header saying the
command, the commit, when, how long and the machine's load. It refuses while the code is not committed (a figure must
name the code it measured). Docs quote a figure by pointing at its results file, so re-running the command is the
only way a figure changes, and `stale` says which results were measured on code that has changed since.

What a figure depends on is recorded with it: the project's Python files the bench had imported when it exited, plus
`data/` and the requirement files (`ALWAYS_READ`). A change to any of those leaves the figure stale; a change
elsewhere (a page, a doc, a test) does not. The bench runs with a fresh `TMPDIR`, so nothing a bench caches between
runs (a scored demo database in `$TMPDIR/rejudge-bench`) was built by other code.

    python bench/record.py NAME -- bench/allocation_bound.py --rounds 100
    python bench/record.py --stale
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS_IN_REPO = Path("bench", "results")
RESULTS = ROOT / RESULTS_IN_REPO
NOT_CODE = (":(exclude)*.md", ":(exclude)bench/results", ":(exclude)tests")
"""Pathspecs of what no bench runs: recording refuses uncommitted changes anywhere else."""
ALWAYS_READ = ("data/", "requirements.txt", "requirements-dev.txt")
"""What every figure depends on besides the modules its bench imported (path prefixes)."""
_RUN = """import atexit, json, os, runpy, sys
root, out, script = os.environ["REJUDGE_FIGURES_ROOT"], os.environ["REJUDGE_FIGURES_CODE"], sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))

def dump():
    files = {os.path.relpath(os.path.abspath(script), root)}
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if f and os.path.abspath(f).startswith(root + os.sep):
            files.add(os.path.relpath(os.path.abspath(f), root))
    with open(out, "w") as fh:
        json.dump(sorted(files), fh)

atexit.register(dump)
runpy.run_path(script, run_name="__main__")
"""
"""How a bench is run: as `python SCRIPT ARGS` would, and at exit the project files it imported are written out."""
NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")
HEADER = re.compile(r"<!-- bench figures: (?P<fields>.*?) -->")


class FiguresError(Exception):
    """A recording or a check that cannot be done, said in one sentence."""


@dataclass(frozen=True)
class Recorded:
    """A results file's header: what made it."""

    path: Path
    commit: str
    command: str
    code: tuple[str, ...] | None = None
    """The project files the bench imported (None: a header without the list; every code file counts)."""

    def depends_on(self, path: str) -> bool:
        return self.code is None or path in self.code or path.startswith(ALWAYS_READ)


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise FiguresError(f"git {' '.join(args)} failed in {root}: {done.stderr.strip() or done.returncode}")
    return done.stdout.strip()


def _code_diff(root: Path, *revs: str) -> list[str]:
    out = _git(root, "diff", "--name-only", *revs, "--", ".", *NOT_CODE)
    return [line for line in out.splitlines() if line.strip()]


def uncommitted_code(root: Path = ROOT) -> list[str]:
    """Tracked code files that differ from HEAD (staged or not)."""
    return _code_diff(root, "HEAD")


def changed_code(commit: str, root: Path = ROOT) -> list[str]:
    """Code files that differ between `commit` and HEAD."""
    return _code_diff(root, commit, "HEAD")


def results_dir(root: Path = ROOT) -> Path:
    return root / RESULTS_IN_REPO


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def record(name: str, command: Sequence[str], *, root: Path = ROOT, results: Path | None = None,
           python: str = sys.executable, echo: bool = True) -> Path:
    """Run `python COMMAND...` in `root` and write its standard output to `results/NAME.md` with the header.

    Nothing is written when the code is uncommitted or the command fails (a failed run leaves the previous figures).
    """
    if not NAME.fullmatch(name):
        raise FiguresError(f"results name {name!r}: use lower-case letters, digits, '.', '_' and '-'")
    if not command:
        raise FiguresError("no bench command given (python bench/record.py NAME -- bench/X.py ARGS)")
    dirty = uncommitted_code(root)
    if dirty:
        raise FiguresError(f"uncommitted code ({', '.join(dirty[:5])}): commit first, so the figures name their code")
    commit = _git(root, "rev-parse", "HEAD")
    results = results or results_dir(root)
    started, load_before, t0 = datetime.now(UTC), _load(), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rejudge-figures-") as tmpdir:
        code_list = Path(tmpdir) / "code.json"
        env = {**os.environ, "TMPDIR": tmpdir, "REJUDGE_FIGURES_ROOT": str(root.resolve()),
               "REJUDGE_FIGURES_CODE": str(code_list)}
        env.pop("REJUDGE_BENCH_DIR", None)
        proc = subprocess.Popen([python, "-c", _RUN, *command], cwd=root, stdout=subprocess.PIPE, text=True, env=env)
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if echo:
                sys.stdout.write(line)
                sys.stdout.flush()
        if proc.wait() != 0:
            raise FiguresError(f"`python {shlex.join(command)}` exited with {proc.returncode}: nothing recorded")
        code = json.loads(code_list.read_text()) if code_list.is_file() else None
    if code is None:
        raise FiguresError(f"`python {shlex.join(command)}` did not say which files it imported: nothing recorded")
    wall = time.perf_counter() - t0
    shown = f"python {shlex.join(command)}"
    fields = json.dumps({"commit": commit, "command": shown, "code": code}, ensure_ascii=False)
    again = f"python bench/record.py {name} -- {shlex.join(command)}"
    header = (f"<!-- bench figures: {fields} -->\n"
              f"<!-- Generated by `{again}`: do not edit; re-run it. -->\n"
              f"# `{shown}`\n\n"
              f"Commit {commit[:12]} (code as committed), {started:%Y-%m-%d %H:%M} UTC, {wall:.0f} s wall, "
              f"{os.cpu_count()} CPUs, 1-minute load {load_before} before and {_load()} after.\n\n")
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{name}.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(header + "".join(lines))
    tmp.replace(path)
    return path


def read_header(path: Path) -> Recorded:
    with path.open(errors="replace") as fh:
        m = HEADER.match(fh.readline())
    if not m:
        raise FiguresError(f"{path}: line 1 is not a bench figures header (made by bench/record.py?)")
    try:
        fields = json.loads(m.group("fields"))
    except ValueError:
        fields = None
    if not isinstance(fields, dict) or not re.fullmatch(r"[0-9a-f]{40}", str(fields.get("commit", ""))) \
            or not isinstance(fields.get("command"), str) \
            or not isinstance(fields.get("code", []), list):
        raise FiguresError(f"{path}: line 1 lacks a full commit or the command")
    code = fields.get("code")
    return Recorded(path, fields["commit"], fields["command"], None if code is None else tuple(map(str, code)))


def stale(results: Path | None = None, root: Path = ROOT) -> dict[Path, list[str]]:
    """Results file -> the files it depends on changed since its commit (empty: current). Unknown commit: said as a
    file."""
    out = {}
    for path in sorted((results or results_dir(root)).glob("*.md")):
        rec = read_header(path)
        try:
            out[path] = [f for f in changed_code(rec.commit, root) if rec.depends_on(f)]
        except FiguresError:
            out[path] = [f"(commit {rec.commit[:12]} is not in this repository)"]
    return out


QUOTE = re.compile(r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])+)\]\(([^)\s]*results/[a-z0-9][a-z0-9_.-]*\.md)"
                   r"(?:\s+\"([^\"\n]+)\")?\)")
"""A link to a results file. With a digit in its text it quotes a figure, which the file must print, e.g.
`[1.09 [0.97, 1.18]](results/allocation-bound.md)` (one level of brackets inside the text); without one it only
names the file (`[bench/results/allocation-bound.md](results/allocation-bound.md)`), which must exist. A link title
names the row: `[0.998](results/anytime-coverage.md "stop on anytime")` must be printed on a line of the file that
also holds every word of the title (so a figure read off the neighbouring row is caught)."""


def quotes(doc: Path) -> list[tuple[int, str, Path, str | None]]:
    """(line, figure, results file, the row its link title names or None) of every figure `doc` quotes from a
    results file."""
    out = []
    for lineno, line in enumerate(doc.read_text(errors="replace").splitlines(), 1):
        for m in QUOTE.finditer(line):
            out.append((lineno, m.group(1), (doc.parent / m.group(2)).resolve(), m.group(3)))
    return out


def unsourced(docs: Sequence[Path]) -> list[str]:
    """Every quoted figure its results file does not print, and every link to a missing one, as `doc:line: why`."""
    problems, texts = [], {}
    for doc in docs:
        for lineno, figure, target, row in quotes(doc):
            if target not in texts:
                texts[target] = target.read_text(errors="replace") if target.is_file() else None
            text = texts[target]
            if text is None:
                problems.append(f"{doc}:{lineno}: {target.name} does not exist (quoted: {figure!r})")
            elif any(c.isdigit() for c in figure) and figure not in text:
                problems.append(f"{doc}:{lineno}: {figure!r} is not printed in {target.name}")
            elif row and not any(figure in line and all(w in line for w in row.split()) for line in text.splitlines()):
                problems.append(f"{doc}:{lineno}: {figure!r} is not printed on a line of {target.name} that holds "
                                f"every word of {row!r}")
    return problems


def rerun(names: Sequence[str] = (), *, root: Path = ROOT, echo: bool = True) -> list[Path]:
    """Record again, with the command its header names, each results file named (all stale ones when none is)."""
    results = results_dir(root)
    if names:
        paths = [results / f"{n}.md" for n in names]
        missing = [p.name for p in paths if not p.is_file()]
        if missing:
            raise FiguresError(f"no results file {', '.join(missing)} in {results}")
    else:
        paths = [p for p, files in stale(results, root).items() if files]
    done = []
    for path in paths:
        argv = shlex.split(read_header(path).command)
        if len(argv) < 2 or argv[0] != "python":
            raise FiguresError(f"{path}: its command is not `python bench/...`: {shlex.join(argv)}")
        done.append(record(path.stem, argv[1:], root=root, results=results, echo=echo))
    return done
