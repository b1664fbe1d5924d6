"""Hostile text in the pages (issue 27): ideation system names carrying Markdown links, remote images, KaTeX and an
RLO character, rendered on the ideation question page and the Scores page with AppTest; no Markdown-bearing element
(markdown, caption, expander and button labels, metric labels) may hold a live link, image or formula built from
the data, and the RLO must be shown as ⟨RLO⟩, never raw."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from devtools.hardening_cases import Case2

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "![p](http://tracker.invalid/p.png)[x](http://evil.invalid) $e^x$ \u202eevil"
RUN = "demo-ideation-si2024-humans"
LIVE = (re.compile(r"(?<!\\)!\[|(?<!\\)\]\((?!#)"), re.compile(r"(?<!\\)\$"), re.compile("\u202e"))


def hostile_database(base: Path, target: Path) -> str:
    """A copy of a database holding the ideation demo run with one system renamed to HOSTILE (payload and
    decisions alike); returns the system renamed."""
    from audit.demo import load_demo
    from audit.store.database import open_db

    shutil.copyfile(base, target)
    db = open_db(target)
    if not list(db.query("SELECT id FROM runs WHERE name = ?", [RUN])):
        load_demo(db)
    run_id = db.execute("SELECT id FROM runs WHERE name = ?", [RUN]).fetchone()[0]
    doc, payload = db.execute("SELECT doc_id, payload FROM documents WHERE run_id = ? ORDER BY idx LIMIT 1",
                              [run_id]).fetchone()
    payload = json.loads(payload)
    old = payload["ideas"][0]["system"]
    for idea in payload["ideas"]:
        if idea["system"] == old:
            idea["system"] = HOSTILE
    with db.conn:
        db.execute("UPDATE documents SET payload = ? WHERE run_id = ? AND doc_id = ?", [json.dumps(payload), run_id,
                                                                                        doc])
        db.execute("UPDATE decisions SET left = ? WHERE run_id = ? AND left = ?", [HOSTILE, run_id, old])
        db.execute("UPDATE decisions SET right = ? WHERE run_id = ? AND right = ?", [HOSTILE, run_id, old])
    db.conn.close()
    return doc


def markdown_texts(at) -> list[str]:  # noqa: ANN001 (AppTest)
    """Every Markdown-rendered string of a page: markdown / caption / alerts, expander, button and metric labels."""
    out = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success") for e in at.get(kind)]
    out += [e.proto.label for kind in ("expander", "button", "metric") for e in at.get(kind)]
    return out


def live_text(texts: list[str]) -> list[str]:
    """The texts that carry HOSTILE's pieces live (an unescaped image or link, a formula, a raw RLO)."""
    return [t for t in texts if "tracker" in t or "\u202e" in t or "evil" in t
            if any(p.search(t) for p in LIVE)]


def render_pages(work: Path, base_db: Path) -> tuple[int, str]:
    from streamlit.testing.v1 import AppTest

    db = work / "hostile.db"
    doc = hostile_database(base_db, db)
    os.environ["REJUDGE_DB"] = str(db)
    os.chdir(ROOT)
    problems = []
    for page, params in (("document", {"run": RUN, "doc": doc}), ("scores", {"run": RUN}),
                         ("overview", {"run": RUN})):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
        at.switch_page(f"pages/{page}.py")
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        if at.exception:
            problems.append(f"{page}: {at.exception[0].message}")
        shown = markdown_texts(at)
        if page == "document" and not any("tracker" in t for t in shown):
            problems.append(f"{page}: the hostile system name is not shown at all")
        problems += [f"{page}: live {t[:80]!r}" for t in live_text(shown)]
    return (2, "error: " + "; ".join(problems)) if problems else (0, "")


def cases(work: Path, base_db: Path) -> list[Case2]:  # noqa: ARG001 (the case interface; the call gets both)
    return [Case2("hostile text", "ideation system name with link, image, KaTeX and RLO on three pages", None,
                  expect="ok", call=render_pages, check=lambda *_: None)]
