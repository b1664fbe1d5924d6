"""Text from inputs is text (issue #34, third round): a URL, a `www.` address and an e-mail address planted in every
text field of the demo data (document texts and ideas, spans and system names, review notes, errata) becomes no
live link on any page of any run.

Escaping is not enough: Streamlit's Markdown turns URLs into links after escapes are resolved (measured in a real
browser: 21 live links to the planted URL on the ideation document page with `md_literal` as it was, 0 after
`ui.text.no_autolink`). The check here reads every Markdown-bearing string a page sends (bodies, labels, help) as
that pass sees it (escapes resolved) and looks for what GFM autolinks."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from audit.review.errata import add_erratum
from audit.review.reviews import add_review
from audit.store.database import open_db
from devtools.injection_oracles import PLANT, live_links
from tests.conftest import ROOT

TEXT_KEYS = ("text", "abstract", "title", "idea", "query", "question", "note", "description", "content")
PAGES = ("runs", "overview", "queue", "scores", "agreement", "export", "document", "errata", "report", "compare")
MARKDOWN_FIELDS = {"body", "label", "help", "caption", "tooltip"}
MARKDOWN_OPTIONS = {"Radio", "ButtonGroup"}
"""Elements whose options are Markdown too (a selectbox's are plain text)."""
NOT_MARKDOWN = {"Html", "IFrame", "Text", "Code", "Json", "Exception", "Arrow", "ArrowTable"}


def test_the_check_sees_each_planted_address_and_not_a_broken_one() -> None:
    from ui.text import md_literal

    assert len(live_links(PLANT)) == 3 and len(live_links(re.sub(r"([:./@])", r"\\\1", PLANT))) == 3
    assert live_links(md_literal(PLANT)) == []


def _walk(node: object, out: list) -> list:
    for child in (getattr(node, "children", None) or {}).values():
        _walk(child, out)
    proto = getattr(node, "proto", None)
    if proto is not None and hasattr(proto, "ListFields"):
        out.append(proto)
    return out


def markdown_strings(at: AppTest) -> list[str]:
    out = []
    for proto in _walk(at._tree, []):
        if proto.DESCRIPTOR.name in NOT_MARKDOWN:
            continue
        for field, value in proto.ListFields():
            if field.name in MARKDOWN_FIELDS or field.name == "options" and proto.DESCRIPTOR.name in MARKDOWN_OPTIONS:
                out += [v for v in (value if isinstance(value, list | tuple) or hasattr(value, "extend") else [value])
                        if isinstance(v, str)]
    return out


def _planted(v: object) -> object:
    if isinstance(v, dict):
        return {k: x + PLANT if isinstance(x, str) and k in TEXT_KEYS else _planted(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_planted(x) for x in v]
    return v


@pytest.fixture(scope="module")
def planted_db(tmp_path_factory, demo_template):
    path = tmp_path_factory.mktemp("planted") / "planted.db"
    shutil.copyfile(demo_template, path)
    db = open_db(path)
    with db.conn:
        for run_id, doc, payload in list(db.execute("SELECT run_id, doc_id, payload FROM documents")):
            db.execute("UPDATE documents SET payload = ? WHERE run_id = ? AND doc_id = ?",
                       [json.dumps(_planted(json.loads(payload))), run_id, doc])
        db.execute("UPDATE decisions SET left = left || ?, right = right || ?", [PLANT, PLANT])
    runs = {}
    for (name,) in list(db.execute("SELECT min(name) FROM runs GROUP BY task")):  # one run per family
        d, doc = db.execute("SELECT d.id, d.doc_id FROM decisions d JOIN runs r ON r.id = d.run_id WHERE r.name = ? "
                            "ORDER BY d.id LIMIT 1", [name]).fetchone()
        for label in ("match", "yes", "a", "1"):
            try:
                add_review(db, name, d, label, "ana", note="see" + PLANT)
                break
            except Exception:  # noqa: BLE001, S112 - the first label this decision kind allows
                continue
        add_erratum(db, name, doc, "item" + PLANT, "other", "ana", correction="c" + PLANT, note="n" + PLANT)
        runs[name] = doc
    db.conn.close()
    return path, runs


@pytest.mark.parametrize("page", PAGES)
def test_no_page_turns_a_planted_address_into_a_link(page: str, planted_db, monkeypatch) -> None:
    path, runs = planted_db
    monkeypatch.setenv("REJUDGE_DB", str(path))
    monkeypatch.chdir(ROOT)
    seen, live = 0, {}
    for run, doc in runs.items():
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
        if page != "runs":
            at.switch_page(f"pages/{page}.py")
        for k, v in {"run": run, "doc": doc, "reviewer": "ana"}.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, at.exception[0].message
        texts = markdown_strings(at)
        seen += sum("evil" in t for t in texts)
        if found := [x for t in texts for x in live_links(t)]:
            live[run] = found[:3]
    assert live == {}
    if page == "document":
        assert seen  # the planted text reached this page's Markdown (so the check above saw it)
