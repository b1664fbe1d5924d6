"""A page's URL path is its file's name: on a freshly started server the first deep link (`/compare?run=...`) is
looked up as `pages/<path>.py` before `app.py` has run its navigation (`ui.state._enter_through_app`), so a page
whose path differs opens as "Page not found" (seen in a browser on the Improve the judge page)."""

from __future__ import annotations

import ast

from tests.conftest import ROOT


def test_every_page_url_path_is_its_file_name():
    pages = []
    for node in ast.walk(ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            keywords = {k.arg: k.value for k in node.keywords}
            default = isinstance(keywords.get("default"), ast.Constant) and keywords["default"].value is True
            if default or not isinstance(node.args[0], ast.Constant):
                continue  # the default page is served at the root; a hidden redirect page names its file in code
            pages.append((node.args[0].value, keywords["url_path"].value))
    assert len(pages) >= 10
    assert [(p, u) for p, u in pages if p != f"pages/{u}.py"] == []
