"""Every piece of data the dashboard shows is text: no Markdown call of pages/ or ui/ gets a value that is not
made literal first (`ui.text.md_literal` / `show_text`).

The check reads the source (AST): for each `*.markdown / caption / warning / error / info / success / title /
header / subheader / toast(...)` call, the first argument must be built only from string constants, calls of
`md_literal`, and numbers (`len(...)`, `sum(...)`, a value with a numeric format spec such as `{x:.3f}`, or an
expression listed in SAFE with the reason it cannot carry user text).
"""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from tests.conftest import ROOT
from ui.text import md_literal

MARKDOWN_CALLS = {"markdown", "caption", "warning", "error", "info", "success", "title", "header", "subheader",
                  "toast",
                  # widget and container labels are Markdown too (links, images, KaTeX): issue 27
                  "expander", "button", "download_button", "metric", "toggle", "checkbox", "popover", "page_link",
                  "link_button"}
ST_ONLY = {"title", "header", "subheader", "toast"}  # also names of ordinary methods (LabelScheme.title)
LABEL_KWARG = {"page_link": "label"}  # the Markdown argument of a call is this keyword, not the first one
SAFE_CALLS = {"md_literal", "len", "sum", "int", "round", "min", "max"}
SAFE = {
    # counts and numbers read from the store or computed by the page
    "rc['reviewed']", "rc['overruled']", "rc['confirmed']", "rc['conflicted']", "rc['adjudicated']",
    "rc['reviews']", "result['excluded_judge_invalid']", "d['id']", "pos",
    "res['imported']", "res['skipped_duplicates']",
    # words chosen by the code, never by data: a family's document noun, a page name, a section key, a family's
    # declared metric label, a button text the code builds from a label scheme's titles
    "noun", "page", "section", "noun.capitalize()", "noun.plural", "noun.a", "noun.plural.capitalize()",
    "cell.label", "title", "text",
    # a statistic's name, a view's panel title, a decision kind's label constants
    "kappa.name", "family.RUN_PANEL_TITLE", "labels[0]", "labels[1]",
    # already made literal, or a number formatted by the code
    "format(alpha['alpha'], '.3f')",
}
FILES = sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("ui/families/*.py"), ROOT / "app.py"])


def _unsafe_parts(node: ast.AST, src: str) -> list[str]:
    """Source of the sub-expressions of a Markdown argument that could carry data unescaped."""
    if isinstance(node, ast.Constant):
        return []
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.FormattedValue) and v.format_spec is None:
                out += _unsafe_parts(v.value, src)
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult):
        return _unsafe_parts(node.left, src) + _unsafe_parts(node.right, src)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SAFE_CALLS:
        return []
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "count_noun"
            and all(isinstance(a, ast.Constant) for a in node.args[1:])):
        return []  # a count and a noun written in the code (`audit.numbers.count_noun(n, "decision")`)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and isinstance(node.func.value, ast.Constant):
        arg = node.args[0] if node.args else None
        inner = arg.elt if isinstance(arg, ast.GeneratorExp | ast.ListComp) else arg
        return _unsafe_parts(inner, src) if inner is not None else []
    if isinstance(node, ast.IfExp):
        return _unsafe_parts(node.body, src) + _unsafe_parts(node.orelse, src)
    if _is_count(node):
        return []
    text = ast.get_source_segment(src, node) or ast.dump(node)
    return [] if text in SAFE else [text]


def _is_count(node: ast.AST) -> bool:
    """`x.n_items`, `row["n_docs"]`: by the code's naming convention a count."""
    if isinstance(node, ast.Attribute):
        return node.attr.startswith("n_")
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value).startswith("n_")
    return False


def _receiver(func: ast.Attribute) -> str:
    return func.value.id if isinstance(func.value, ast.Name) else ""


def markdown_calls(path: Path) -> list[tuple[int, str]]:
    src = path.read_text()
    found = []
    for node in ast.walk(ast.parse(src)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in MARKDOWN_CALLS
                and (node.func.attr not in ST_ONLY or _receiver(node.func) == "st")):
            continue
        kw = LABEL_KWARG.get(node.func.attr)
        arg = next((k.value for k in node.keywords if k.arg == kw), None) if kw else (
            node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "label"), None))
        if arg is not None:
            for part in _unsafe_parts(arg, src):
                found.append((node.lineno, part))
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_markdown_calls_render_data_as_text(path):
    bad = markdown_calls(path)
    assert not bad, "\n".join(f"{path.relative_to(ROOT)}:{line}: {part!r} reaches Markdown unescaped; wrap it in "
                              "md_literal() or use show_text()" for line, part in bad)


def test_the_check_catches_data_in_markdown(tmp_path):
    sample = tmp_path / "page.py"
    sample.write_text('import streamlit as st\nname = "x"\nst.caption(f"run {name}")\nst.warning("a " + name)\n'
                      'st.info(f"ok {md_literal(name)} {len(name)} {0.5:.2f}")\ncol.markdown(name)\n'
                      'st.expander(f"{g.label()} x")\nc.button(label=name)\nst.page_link("p.py", label=name)\n'
                      'st.expander(md_literal(name))\n'
                      'st.caption(count_noun(3, name))\n')
    assert [p for _, p in markdown_calls(sample)] == ["name", "name", "name", "g.label()", "name", "name",
                                                      "count_noun(3, name)"]


@pytest.mark.parametrize("hostile", ["![x](http://evil.example/p.png)", "[click](javascript:alert(1))",
                                     ":red[alert] :material/warning:", "<img src=x onerror=alert(1)>",
                                     "**bold** _it_ `code` # head", "a\u202eb\u200bc", "back\\slash"])
def test_md_literal_escapes_every_markdown_character(hostile):
    """CommonMark treats a backslash-escaped ASCII punctuation character as that literal character: every one in
    the output is escaped, so no link, image, emphasis, directive or HTML tag can form."""
    out = md_literal(hostile)
    i = 0
    while i < len(out):
        if out[i] == "\\":
            assert i + 1 < len(out) and out[i + 1] in string.punctuation, out
            i += 2
            continue
        assert out[i] not in string.punctuation, (out, i)
        i += 1
    assert "\u202e" not in out and "\u200b" not in out and "⟨RLO⟩" in md_literal("\u202e")
