"""`python -m audit` leaves by `os._exit` after a command (audit/__main__.py, #38): everything it printed still
arrives whole through a pipe, its exit status is the command's, the exit handlers still run, and a profiler watching
the process still gets to write what it saw. OpenBLAS runs on one thread unless the environment says otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from audit.store.database import open_db
from tests.conftest import copy_of

ROOT = Path(__file__).resolve().parents[2]


def _audit(*args: str, env: dict | None = None, code: str | None = None) -> subprocess.CompletedProcess:
    command = ["-c", code, *args] if code else ["-m", "audit", *args]
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=120)


def test_a_long_output_arrives_whole_and_the_status_is_the_commands(tmp_path, mixed_template):
    db = copy_of(mixed_template, tmp_path / "m.db")
    n, = open_db(db).execute("SELECT COUNT(*) FROM decisions").fetchone()
    done = _audit("--db", str(db), "decisions", "--run", "mixed")
    assert done.returncode == 0
    assert len(done.stdout.splitlines()) == n > 100  # every line through the pipe, the last one included
    assert done.stdout.endswith("}\n")
    refused = _audit("--db", str(db), "decisions", "--run", "nosuch")
    assert refused.returncode == 2 and refused.stderr.startswith("error: unknown run 'nosuch'")


def test_exit_handlers_run_and_a_tracer_sees_the_end(tmp_path, mixed_template):
    db = copy_of(mixed_template, tmp_path / "m.db")
    mark = tmp_path / "handler-ran"
    code = ("import atexit, runpy, sys; p = sys.argv[1]; atexit.register(lambda: open(p, 'w').write('ran')); "
            "sys.argv = ['audit', *sys.argv[2:]]; runpy.run_module('audit', run_name='__main__')")
    done = _audit(str(mark), "--db", str(db), "runs", code=code)
    assert done.returncode == 0 and mark.read_text() == "ran"
    # a tracer installed (as coverage or a profiler is): the interpreter's own exit, which lets it finish
    traced = ("import sys, runpy; sys.settrace(lambda *a: None); sys.argv = ['audit', *sys.argv[1:]]\n"
              "try:\n    runpy.run_module('audit', run_name='__main__')\nfinally:\n    print('after the module')")
    done = _audit("--db", str(db), "runs", code=traced)
    assert done.returncode == 0 and done.stdout.rstrip().endswith("after the module")


def test_openblas_runs_on_one_thread_unless_told():
    code = "import os, runpy, sys; sys.argv = ['audit', '--help']; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    assert _audit(code=code + "; runpy.run_module('audit', run_name='__main__')").stdout.splitlines()[0] == "None"
    probe = ("import os, sys; sys.argv = ['audit', '--db', sys.argv[1], 'runs']; import atexit; "
             "atexit.register(lambda: sys.stderr.write('threads=' + os.environ['OPENBLAS_NUM_THREADS'])); "
             "import runpy; runpy.run_module('audit', run_name='__main__')")
    assert "threads=1" in _audit(":memory:", code=probe).stderr
    assert "threads=2" in _audit(":memory:", code=probe, env={"OPENBLAS_NUM_THREADS": "2"}).stderr
