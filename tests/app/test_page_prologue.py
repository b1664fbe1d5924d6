"""Every page's first call is `ui.entry.page_prologue`: a first deep link into a fresh server runs the page's script
without app.py (Streamlit's `pages/` folder), and the prologue sends it through app.py (the first start's demo runs,
the navigation) and the sign-in gate. A page that opened its database first showed "No runs in this database yet"
with Streamlit's bare page list on a fresh server, and skipped the gate (the Improve the judge page did)."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT

PAGES = sorted((ROOT / "pages").glob("*.py"))


def first_call(source: str) -> str | None:
    """The top-level statement that calls something first (imports, docstrings, definitions and constants do not),
    as source; None when none does."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef):
            continue
        if any(isinstance(n, ast.Call) for n in ast.walk(node)):
            return ast.unparse(node)
    return None


def calls_prologue_first(source: str) -> bool:
    found = first_call(source)
    return found is not None and "page_prologue()" in found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_pages_first_call_is_the_prologue(page):
    assert calls_prologue_first(page.read_text(encoding="utf-8")), f"{page.name}: {first_call(page.read_text())}"


@pytest.mark.parametrize("source", [
    "import streamlit as st\nfrom ui.state import db\nconn = db()\nst.title('x')\n",  # the improve page's old head
    "import streamlit as st\nst.title('x')\nconn = page_prologue()\n",
    "X = {'a': sorted([1])}\nconn = page_prologue()\n",  # a constant made by a call runs before it
    "import streamlit as st\n",
])
def test_the_check_refuses_a_page_that_calls_anything_before_the_prologue(source):
    assert not calls_prologue_first(source)


def test_the_check_passes_constants_and_definitions_before_the_prologue():
    assert calls_prologue_first('"""doc"""\nimport x\nHELP = {"n": "labels"}\ndef f():\n    return g()\n'
                                "conn = page_prologue()\nst.title('x')\n")
