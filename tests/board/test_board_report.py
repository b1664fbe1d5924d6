"""The audit report's board section: every board the run belongs to, its chart plotting the rows `board export`
writes (parsed back from the embedded spec), rank sets and sentences, escaped names, and nothing for a run on no
board."""

from __future__ import annotations

import json
import re

from audit.board.export import board_rows
from audit.board.store import create_board
from audit.board.table import board_table
from audit.outputs.report import DATA_ELEMENT_ID, build_report, report_html
from audit.views import load_view
from tests.board.conftest import review_all

DATA_RE = re.compile(rf'<script type="application/json" id="{DATA_ELEMENT_ID}">(.*?)</script>', re.S)


def _specs(page: str) -> dict:
    return json.loads(DATA_RE.findall(page)[0])["figures"]


def _rows(spec: dict) -> list[dict]:
    return [r for values in spec.get("datasets", {}).values() for r in values]


def test_a_run_on_no_board_has_no_board_section(bdb):
    report = build_report(load_view(bdb, "a"))
    assert not any("Board" in s.title for s in report.sections)


def test_each_board_of_the_run_gets_a_section_whose_chart_plots_the_export_rows(bdb, tmp_path):
    create_board(bdb, "ab", ["a", "b"])
    create_board(bdb, "<all>", ["a", "b", "c"])
    create_board(bdb, "bc", ["b", "c"])
    for i, r in enumerate(["a", "b", "c"]):
        review_all(bdb, r, tmp_path, seed=i)
    report = build_report(load_view(bdb, "a", "majority"))
    titles = [s.title for s in report.sections]
    assert titles[-2:] == ["7. Board <all>: the systems side by side", "8. Board ab: the systems side by side"]
    page = report_html(report)
    assert "Board &lt;all&gt;" in page and "Board <all>" not in page
    specs = _specs(page)
    for i, name in enumerate(["<all>", "ab"]):
        rows = board_rows(board_table(bdb, name, policy="majority"))
        plotted = {(p["label"], p["series"]): p for p in _rows(specs[f"board-{i}"])}
        for r in rows:
            assert plotted[(r["system"], "judge only")]["value"] == r["judge_only"]
            got = plotted[(r["system"], "audited")]
            assert (got["value"], got["low"], got["high"]) == (r["value"], r["lo"], r["hi"])
            assert r["rank_best"] == r["rank_worst"] or len({x["value"] for x in rows}) < len(rows)
    section = next(s for s in report.sections if s.title.startswith("7."))
    html_text = "".join(section.body)
    assert "rank set" in html_text and "majority policy" in html_text
    assert "of 345 decisions reviewed" in html_text


def test_the_report_of_an_ideation_run_shows_its_board(bdb):
    create_board(bdb, "i", ["ideas"])
    report = build_report(load_view(bdb, "ideas"))
    section = report.sections[-1]
    assert section.title == "7. Board i: the systems side by side"
    text = "".join(section.body)
    assert all(s in text for s in ("Human", "AI_Rerank", "no interval is valid"))
    assert {p["label"] for p in _rows(section.figures[0].spec)} == {"Human", "AI", "AI_Rerank"}
