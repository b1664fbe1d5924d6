"""Bench figures with one source (`devtools/figures.py`, issue 39 point 5): a results file names the commit whose
code printed it, nothing is recorded from uncommitted code or a failed run, and `stale` names exactly the code
changed since (a doc or a results file changes no figure)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from devtools.figures import RESULTS, FiguresError, quotes, read_header, record, rerun, stale, unsourced


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "bench").mkdir(parents=True)
    (root / "scoring.py").write_text("RATE = 0.5\n")
    (root / "bench" / "table.py").write_text(
        "import sys\nsys.path.insert(0, '.')\nfrom scoring import RATE\nprint('| rate |')\nprint(f'| {RATE} |')\n")
    (root / "README.md").write_text("figures: bench/results/table.md\n")
    git(root, "init", "-q")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    return root


def commit(root: Path, message: str) -> str:
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", message)
    return git(root, "rev-parse", "HEAD")


def test_a_recording_names_its_commit_and_keeps_the_output(repo: Path) -> None:
    path = record("table", ["bench/table.py"], root=repo, echo=False)
    text = path.read_text()
    assert path == repo / "bench" / "results" / "table.md"
    assert text.endswith("| rate |\n| 0.5 |\n")
    rec = read_header(path)
    assert rec.commit == git(repo, "rev-parse", "HEAD") and rec.command == "python bench/table.py"
    assert rec.code == ("bench/table.py", "scoring.py")  # the script and what it imported from the project
    assert stale(root=repo) == {path: []}


def test_docs_and_results_leave_figures_current_code_makes_them_stale(repo: Path) -> None:
    path = record("table", ["bench/table.py"], root=repo, echo=False)
    (repo / "README.md").write_text("figures: see bench/results/table.md, rate row\n")
    (repo / "pages.py").write_text("TITLE = 'a page the bench never imports'\n")
    git(repo, "add", "bench/results", "pages.py")
    commit(repo, "docs, results and code the bench does not run")
    assert stale(root=repo) == {path: []}
    (repo / "data").mkdir()
    (repo / "data" / "gold.csv").write_text("id\n1\n")
    git(repo, "add", "data")
    commit(repo, "data")
    assert stale(root=repo) == {path: ["data/gold.csv"]}  # data is read by every bench, imported or not
    record("table", ["bench/table.py"], root=repo, echo=False)
    (repo / "scoring.py").write_text("RATE = 0.25\n")
    commit(repo, "code")
    assert stale(root=repo) == {path: ["scoring.py"]}
    record("table", ["bench/table.py"], root=repo, echo=False)  # re-run at the new code: current again
    assert stale(root=repo) == {path: []} and path.read_text().endswith("| 0.25 |\n")


def test_uncommitted_code_or_a_failed_run_records_nothing(repo: Path) -> None:
    path = record("table", ["bench/table.py"], root=repo, echo=False)
    before = path.read_text()
    (repo / "scoring.py").write_text("RATE = 0.75\n")
    with pytest.raises(FiguresError, match="uncommitted code.*scoring.py"):
        record("table", ["bench/table.py"], root=repo, echo=False)
    assert path.read_text() == before
    (repo / "scoring.py").write_text("RATE = (\n")
    commit(repo, "broken")
    with pytest.raises(FiguresError, match="exited with 1: nothing recorded"):
        record("table", ["bench/table.py"], root=repo, echo=False)
    assert path.read_text() == before and not list(path.parent.glob("*.tmp"))
    with pytest.raises(FiguresError, match="results name"):
        record("../x", ["bench/table.py"], root=repo, echo=False)


def test_a_bench_runs_in_a_temporary_folder_of_its_own(repo: Path, tmp_path: Path) -> None:
    """Nothing a bench caches between runs (e.g. `$TMPDIR/rejudge-bench/demo-seeded.db`) was built by other code."""
    (repo / "bench" / "where.py").write_text("import tempfile\nprint(tempfile.gettempdir())\n")
    git(repo, "add", ".")
    commit(repo, "where")
    path = record("where", ["bench/where.py"], root=repo, echo=False)
    folder = Path(path.read_text().splitlines()[-1])
    assert folder.name.startswith("rejudge-figures-") and not folder.exists()


def test_a_results_file_without_a_header_is_named(repo: Path) -> None:
    results = repo / "bench" / "results"
    results.mkdir()
    (results / "hand.md").write_text("| rate |\n| 0.9 |\n")
    with pytest.raises(FiguresError, match="hand.md: line 1 is not a bench figures header"):
        stale(root=repo)
    (results / "hand.md").write_text('<!-- bench figures: {"commit": "abc1234", "command": "python bench/x.py"} -->\n')
    with pytest.raises(FiguresError, match="hand.md: line 1 lacks a full commit or the command"):
        stale(root=repo)


def test_every_results_file_of_the_project_names_a_commit_and_its_command() -> None:
    """The figures docs point at were recorded, not typed: each file's header parses and its command is a bench."""
    for path in sorted(RESULTS.glob("*.md")):
        rec = read_header(path)
        assert rec.command.startswith("python bench/"), (path, rec.command)
        script = rec.command.split()[1]
        assert (RESULTS.parent.parent / script).is_file(), (path, script)


def test_the_command_line_says_what_it_needs() -> None:
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "bench/record.py", "only-a-name"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 2 and "bench/record.py NAME --" in done.stderr


def test_a_quoted_figure_must_be_printed_in_its_results_file(tmp_path: Path) -> None:
    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    (results / "bound.md").write_text("| lenient | 1.09 [0.97, 1.18] |\n")
    doc = tmp_path / "bench" / "README.md"
    doc.write_text("Lenient costs **[1.09 [0.97, 1.18]](results/bound.md)** of SRS.\n"
                   "Typed by hand: [1.07 [0.97, 1.18]](results/bound.md), and [0.5](results/gone.md).\n"
                   "See [the bound](results/bound.md) and [the lost table](results/lost.md).\n")
    assert [(line, figure) for line, figure, _, _ in quotes(doc)] == [
        (1, "1.09 [0.97, 1.18]"), (2, "1.07 [0.97, 1.18]"), (2, "0.5"), (3, "the bound"), (3, "the lost table")]
    assert unsourced([doc]) == [f"{doc}:2: '1.07 [0.97, 1.18]' is not printed in bound.md",
                                f"{doc}:2: gone.md does not exist (quoted: '0.5')",
                                f"{doc}:3: lost.md does not exist (quoted: 'the lost table')"]


def test_a_figure_quoted_with_its_row_must_be_printed_on_that_row(tmp_path: Path) -> None:
    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    (results / "any.md").write_text("| spread | stop on fixed-n | 0.961 | 0.999 |\n"
                                    "|  | stop on anytime | 0.952 | 0.998 |\n")
    doc = tmp_path / "README.md"
    doc.write_text('At the anytime stop: [0.998](bench/results/any.md "stop on anytime").\n'
                   'Read off the neighbouring row: [0.999](bench/results/any.md "stop on anytime").\n'
                   'A row the file does not have: [0.998](bench/results/any.md "stop on nothing").\n')
    assert [(line, figure, row) for line, figure, _, row in quotes(doc)] == [
        (1, "0.998", "stop on anytime"), (2, "0.999", "stop on anytime"), (3, "0.998", "stop on nothing")]
    assert unsourced([doc]) == [
        f"{doc}:2: '0.999' is not printed on a line of any.md that holds every word of 'stop on anytime'",
        f"{doc}:3: '0.998' is not printed on a line of any.md that holds every word of 'stop on nothing'"]


def test_every_figure_the_docs_quote_is_printed_in_its_results_file() -> None:
    root = RESULTS.parent.parent
    docs = [p for p in root.rglob("*.md") if RESULTS not in p.parents and ".venv" not in p.parts
            and "node_modules" not in p.parts]
    assert unsourced(docs) == []


def test_rerun_records_the_stale_files_again_with_their_own_commands(repo: Path) -> None:
    path = record("table", ["bench/table.py"], root=repo, echo=False)
    git(repo, "add", "bench/results")
    commit(repo, "results")
    assert rerun(root=repo, echo=False) == []  # nothing stale, nothing run
    (repo / "scoring.py").write_text("RATE = 0.125\n")
    commit(repo, "code")
    assert rerun(root=repo, echo=False) == [path]
    assert path.read_text().endswith("| 0.125 |\n") and stale(root=repo) == {path: []}
    assert read_header(path).commit == git(repo, "rev-parse", "HEAD")
    with pytest.raises(FiguresError, match="no results file nothing.md"):
        rerun(["nothing"], root=repo, echo=False)
