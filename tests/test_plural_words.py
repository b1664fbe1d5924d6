"""No message a user reads hedges its number with "(s)" ("3 field(s)"): counts go through `scoring.nouns.Noun` /
`audit.numbers.count_noun`, or the sentence says the word it means. Reads every string literal of the product's
code that is not a docstring; a frozen migration's stored note is the one exception."""

from __future__ import annotations

import ast
import re

from tests.conftest import ROOT

HEDGE = re.compile(r"[A-Za-z]\(s\)")
FOLDERS = ("scoring", "audit", "ui", "pages")
FROZEN = {"audit/store/migrations.py"}  # its notes are stored in databases already; the text is history


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in node.body:  # a docstring, or a string standing alone as an attribute's note
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    out.add(id(stmt.value))
    return out


def hedged(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string literal outside docstrings that says "(s)"."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and HEDGE.search(node.value)]


def test_no_message_hedges_its_number():
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "__pycache__" in path.parts or rel in FROZEN:
                continue
            found += [f"{rel}:{line}: {text[:80]!r}" for line, text in hedged(path.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


def test_the_guard_refuses_a_planted_hedge_and_passes_docstrings():
    planted = 'def f(n):\n    """Counts field(s)."""\n    raise ValueError(f"record has {n} field(s)")\n'
    assert [line for line, _ in hedged(planted)] == [3]
    assert hedged('x = 1\n"""A note on x: the column(s) it names."""\n') == []
