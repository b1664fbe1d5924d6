"""Import direction is the architecture: scoring/ uses neither Streamlit nor SQLite; audit/ not Streamlit; pages and
ui/ run no SQL and do not reach into family logic; the shell (audit/, ui/ outside ui/families/, pages/) names no
family."""

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

FORBIDDEN = {
    "scoring": {"streamlit", "sqlite3", "sqlite_utils", "audit", "ui", "pages"},
    "audit": {"streamlit", "ui", "pages"},
}
SHELL = ("audit", "ui", "pages")


def py_files(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def imported_modules(path: Path, *, full: bool = False) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name if full else a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module if full else node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_forbidden_imports(package):
    files = py_files(package)
    assert files
    for f in files:
        bad = imported_modules(f) & FORBIDDEN[package]
        assert not bad, f"{f.relative_to(ROOT)} imports {bad}"


def test_pages_run_no_sql():
    for f in [ROOT / "app.py", *py_files("pages"), *py_files("ui")]:
        text = f.read_text()
        assert "SELECT " not in text and "INSERT " not in text, f"{f.name} runs SQL"


def test_pages_do_not_import_family_logic():
    for f in [ROOT / "app.py", *py_files("pages")]:
        bad = {m for m in imported_modules(f, full=True) if m.startswith("scoring.families.")}
        assert not bad, f"{f.relative_to(ROOT)} imports family logic {bad}; go through the family's views"


def _shell_files() -> list[Path]:
    return [f for folder in SHELL for f in py_files(folder) if "families" not in f.relative_to(ROOT).parts]


def test_shell_names_no_family():
    """Adding a family touches no file of the shell: no family name, kind or label literal there."""
    from scoring.families import TASKS

    words = set(TASKS)
    for fam in TASKS.values():
        words |= set(fam.label_schemes)
    pattern = re.compile(r"""["']({})["']""".format("|".join(re.escape(w) for w in sorted(words))))
    # Migrations are history: each names, frozen, the families and kinds it was written for (a new family never
    # touches them).
    for f in [ROOT / "app.py", *(f for f in _shell_files() if f != ROOT / "audit" / "migrations.py")]:
        hits = pattern.findall(f.read_text())
        assert not hits, f"{f.relative_to(ROOT)} names family literals {sorted(set(hits))}"


def test_boundary_walk_is_recursive():
    assert any(len(p.relative_to(ROOT / "scoring").parts) > 2 for p in py_files("scoring"))
