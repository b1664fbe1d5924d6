"""Every entry point starts in the test environment, and loads only the families it needs.

`scripts/test.sh` runs these in a virtual environment built from the requirement files alone, so an import of a
package no requirement line declares fails here (as `pint` once did on a fresh machine).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from audit.cli import main
from scoring.families import TASKS
from tests.conftest import ROOT, copy_of

ENV = os.environ | {"PYTHONPATH": str(ROOT)}

LOADED = """
import json, sys
from audit.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
from scoring.families import TASKS
print(json.dumps({"families": TASKS.loaded(),
                  "heavy": sorted(m for m in ("sklearn", "pint", "scipy", "streamlit") if m in sys.modules)}),
      file=sys.stderr)
"""


def loaded_by(*argv: str, db: str) -> dict:
    """Families and heavy libraries a fresh interpreter has imported after running `python -m audit ARGV`."""
    p = subprocess.run([sys.executable, "-c", LOADED, "--db", db, *argv], cwd=ROOT, env=ENV, capture_output=True,
                       text=True, timeout=120)
    return json.loads(p.stderr.strip().splitlines()[-1])


HELP_IMPORTS = """
import json, sys
from audit.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("pandas", "numpy", "sqlite_utils", "audit.store.database", "audit.runs", "scoring.families.base",
         "tempfile")  # tempfile: shutil, random and the compression modules, for a file `--help` never writes
print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--help"], ["score", "--help"], ["runs", "--no-such-option"]])
def test_help_and_argument_errors_import_no_pandas_and_no_store(argv: list[str]) -> None:
    """`--help` spent 0.6 of its 0.75 s importing pandas through sqlite_utils (#38): the CLI's entry is light."""
    p = subprocess.run([sys.executable, "-c", HELP_IMPORTS, *argv], cwd=ROOT, env=ENV, capture_output=True,
                       text=True, timeout=120)
    heavy = json.loads(p.stderr.strip().splitlines()[-1])
    assert heavy == [] if argv[0] != "score" else "pandas" not in heavy and "sqlite_utils" not in heavy, heavy


def test_runs_imports_neither_pandas_nor_numpy(tmp_path) -> None:
    """`runs` opens the store, and sqlite_utils imported pandas and numpy for it: most of its start-up (#38)."""
    db = tmp_path / "new.db"
    for _ in range(2):  # a new database, then an existing one (opened with every check)
        p = subprocess.run([sys.executable, "-c", HELP_IMPORTS, "runs", "--db", str(db)], cwd=ROOT, env=ENV,
                           capture_output=True, text=True, timeout=120)
        heavy = json.loads(p.stderr.strip().splitlines()[-1])
        assert "sqlite_utils" in heavy and "audit.store.database" in heavy, heavy  # it did open the store
        assert "pandas" not in heavy and "numpy" not in heavy, heavy


IMPORTED = """
import json, sys
from audit.cli import main
status = main(sys.argv[1:])
prefixes = ("pandas", "numpy", "scipy", "sklearn", "audit.rescoring", "scoring.families.base", "scoring.judges.replay",
            "scoring.judges.transport", "audit.review")
print(json.dumps({"status": status, "modules": sorted(m for m in sys.modules if m.split(".")[0] in prefixes
                                                       or m.startswith(prefixes))}), file=sys.stderr)
"""
RUNS_MAY_NOT_IMPORT = ("pandas", "numpy", "scipy", "audit.rescoring", "scoring.families.base", "scoring.judges.replay",
                       "scoring.judges.transport", "audit.review")
"""`runs` lists rows: none of the array libraries, the re-scoring code, the families or the judges (#38)."""


def imported_by(*argv: str) -> tuple[int, list[str]]:
    """Exit status and the heavy modules (`IMPORTED`'s prefixes) a fresh interpreter imported for ARGV."""
    p = subprocess.run([sys.executable, "-c", IMPORTED, *argv], cwd=ROOT, env=ENV, capture_output=True, text=True,
                       timeout=300)
    found = json.loads(p.stderr.strip().splitlines()[-1])
    return found["status"], found["modules"]


def test_runs_on_a_database_of_every_family_imports_none_of_the_heavy_modules(demo_db: str) -> None:
    status, modules = imported_by("--db", demo_db, "runs")
    assert status == 0
    assert [m for m in modules if m.startswith(RUNS_MAY_NOT_IMPORT)] == []


@pytest.mark.parametrize("stale", ["DELETE FROM audit_state WHERE run_id = (SELECT id FROM runs WHERE name = ?)",
                                   "UPDATE runs SET metrics_stale = 1, original_metrics = '{}' WHERE name = ?"])
def test_runs_still_rebuilds_a_stale_run_which_loads_the_rescoring_code(stale: str, demo_template, tmp_path) -> None:
    """The evasion of the guard above: the light path of `runs` may skip the re-scoring code only when no run is
    stale; a run a migration left stale (no audited state, or metrics to re-aggregate) is rebuilt as before."""
    db = copy_of(demo_template, tmp_path / "stale.db")
    with sqlite3.connect(db) as c:
        c.execute(stale, ["demo-chimera-mixed"])
        before = c.execute("SELECT original_metrics FROM runs WHERE name = 'demo-chimera-mixed'").fetchone()[0]
    c.close()
    status, modules = imported_by("--db", str(db), "runs")
    assert status == 0 and "audit.rescoring" in modules
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM runs WHERE id NOT IN (SELECT run_id FROM audit_state) "
                         "OR metrics_stale = 1").fetchone()[0] == 0
        after = c.execute("SELECT original_metrics FROM runs WHERE name = 'demo-chimera-mixed'").fetchone()[0]
    c.close()
    assert (after != "{}") if before == "{}" else after == before


def test_queue_next_imports_neither_scipy_stats_nor_pandas_nor_another_family(demo_template, tmp_path) -> None:
    """`queue --next` computes with numpy and scipy.special: scipy.stats (0.75 s of CPU to import) and pandas
    are for other commands, and only the run's family is loaded (#38)."""
    db = str(copy_of(demo_template, tmp_path / "queue.db"))
    assert main(["--db", db, "plan", "--run", "demo-retrieval-bm25", "--seed", "1"]) == 0
    status, modules = imported_by("--db", db, "queue", "--run", "demo-retrieval-bm25", "--next")
    assert status == 0
    assert [m for m in modules if m.startswith(("scipy.stats", "pandas", "sklearn"))] == [], modules
    got = loaded_by("queue", "--run", "demo-retrieval-bm25", "--next", db=db)
    assert got["families"] == ["retrieval"] and not {"sklearn", "streamlit", "pint"} & set(got["heavy"])


def test_sqlite_utils_alone_is_refused_pandas_and_others_are_not() -> None:
    """The finder refuses pandas to sqlite_utils' own optional import only: a module that imports pandas after
    it gets pandas."""
    code = ("import sys, audit, sqlite_utils.db as s; import pandas, numpy; "
            "print(s.pd is None, s.np is None, pandas.DataFrame is not None, numpy.zeros(1).size)")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert p.stdout.split() == ["True", "True", "True", "1"], p.stderr


def test_python_m_audit_help_in_a_real_process() -> None:
    p = subprocess.run([sys.executable, "-m", "audit", "--help"], cwd=ROOT, env=ENV, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "score" in p.stdout and "judge-batch" in p.stdout and p.stderr == ""


@pytest.mark.parametrize("task", list(TASKS))
def test_score_task_help_lists_the_familys_inputs(task: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["score", task, "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    for spec in TASKS[task].inputs:
        assert f"--{spec.name}" in out


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory, demo_template) -> str:
    """A database holding every family's demo run."""
    return str(copy_of(demo_template, tmp_path_factory.mktemp("entry") / "demo.db"))


@pytest.mark.parametrize("argv", [["--help"], ["runs"], ["export-reviews", "--run", "demo-chimera-mixed"],
                                  ["export-reviews", "--run", "demo-ideation-si2024-humans"], ["review", "--help"]])
def test_commands_that_need_no_family_import_none(argv: list[str], demo_db: str) -> None:
    got = loaded_by(*argv, db=demo_db)
    assert got == {"families": [], "heavy": []}


@pytest.mark.parametrize(("argv", "family"), [
    (["score", "chimera", "--help"], "chimera"),
    (["review", "--run", "demo-chimera-mixed", "--decision", "1", "--label", "match", "--reviewer", "entry"],
     "chimera"),
    (["decisions", "--run", "demo-litxbench-drop-meas30"], "litxbench"),
])
def test_a_command_imports_the_family_it_works_on_alone(argv: list[str], family: str, demo_db: str) -> None:
    """`score TASK` imports that family; `review` and `decisions` the run's family (its labels and counts)."""
    got = loaded_by(*argv, db=demo_db)
    assert got["families"] == [family]
    assert family == "ideation" or "sklearn" not in got["heavy"]


def test_an_unknown_family_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["score", "nope", "--gold", "x"])
    assert e.value.code == 2 and "invalid choice: 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["show"], ["export", "--format", "latex"], ["export", "--format", "csv"]])
def test_board_show_and_export_import_neither_scipy_stats_nor_sklearn(argv: list[str], demo_db: str,
                                                                      tmp_path) -> None:
    """A board's table needs numpy and scipy.special; the agreement statistics (SciPy's stats, scikit-learn: 2 s of
    the 5 s a 5 x 10,000 board's export may take, #36) belong to other commands. The cells every export writes come
    from `audit.outputs.cells`."""
    from audit.demo import demo_boards

    board = next(iter(demo_boards()))
    out = ["--out", str(tmp_path / "table"), "--force"] if argv[0] == "export" else []
    status, modules = imported_by("--db", demo_db, "board", argv[0], board, *argv[1:], *out)
    assert status == 0
    assert "numpy" in modules  # the table was computed
    assert [m for m in modules if m.startswith(("scipy.stats", "sklearn"))] == [], modules
