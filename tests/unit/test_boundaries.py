"""Import direction is the architecture: scoring/ uses neither Streamlit nor SQLite; audit/ not Streamlit."""

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

FORBIDDEN = {
    "scoring": {"streamlit", "sqlite3", "sqlite_utils", "audit", "ui", "pages"},
    "audit": {"streamlit", "ui", "pages"},
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_forbidden_imports(package):
    files = sorted((ROOT / package).glob("*.py"))
    assert files
    for f in files:
        bad = imported_modules(f) & FORBIDDEN[package]
        assert not bad, f"{f.relative_to(ROOT)} imports {bad}"


def test_pages_run_no_sql():
    for f in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py"))]:
        text = f.read_text()
        assert "SELECT " not in text and "INSERT " not in text, f"{f.name} runs SQL"
