"""The board's paper table: one row rule rendered as JSON, CSV and LaTeX — the same numbers in every format
(parsed back), hostile names typeset literally and never run as spreadsheet formulas, and the table compiles."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import audit.board.table as table_mod
from audit.board.export import COLUMNS, board_rows, export_board
from audit.board.store import create_board
from audit.board.table import board_table
from tests.board.conftest import review_all

HOSTILE = "=cmd|' /C calc'!A0 \\input{/etc/passwd} 5% & _x_ #1 {"


def _number(text: str) -> object:
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _same_numbers(bdb, name: str) -> list[dict]:
    rows = board_rows(board_table(bdb, name))
    parsed_json = json.loads(export_board(bdb, name, "json"))["rows"]
    parsed_csv = [{k: _number(v) for k, v in r.items()}
                  for r in csv.DictReader(io.StringIO(export_board(bdb, name, "csv")))]
    assert list(parsed_csv[0]) == list(COLUMNS)
    assert parsed_json == rows
    for got, want in zip(parsed_csv, rows, strict=True):
        for k in COLUMNS:
            if isinstance(want[k], float):
                assert got[k] == want[k], k  # repr round-trips a float exactly
            elif k not in ("system", "run"):
                assert got[k] == want[k], k
    return rows


def test_json_and_csv_carry_the_rows_numbers_unreviewed_and_fully_reviewed(bdb, tmp_path):
    create_board(bdb, "t", ["a", "b", "c"])
    rows = _same_numbers(bdb, "t")
    assert all(r["lo"] is None and r["rank_best"] is None and r["value_is"] == "reviewed so far" for r in rows)
    tex = export_board(bdb, "t", "latex")
    assert "Rank (judge) & Rank (reviewed so far)" in tex and "no bias is shown" in tex and "bias =" not in tex
    for r in rows:  # the LaTeX row carries both ranks the CSV has
        assert f"& {r['rank_judge']} & {r['rank_audited']} & -- \\\\" in tex
    for i, r in enumerate(["a", "b", "c"]):
        review_all(bdb, r, tmp_path, seed=i)
    rows = _same_numbers(bdb, "t")
    assert all(r["lo"] == r["hi"] == r["value"] and r["rank_best"] == r["rank_worst"] for r in rows
               if len({x["value"] for x in rows}) == len(rows))
    assert all(r["bias"] == pytest.approx(r["judge_only"] - r["value"]) for r in rows)
    assert "bias = judge only minus audited." in export_board(bdb, "t", "latex")


def test_a_joint_plans_estimates_reach_every_format(bdb, monkeypatch):
    create_board(bdb, "t", ["a", "b"])
    joint = {"systems": {s: {"entities/avg/f1": {"value": v, "ci": [v - 0.05, v + 0.05],
                                                 "anytime": {"ci": [v - 0.1, v + 0.1]}},
                             "bias": {"entities/avg/f1": {"value": 0.01, "ci": [-0.02, 0.04]}}}
                         for s, v in (("a", 0.6), ("b", 0.4))},
             "pairs": [{"a": "a", "b": "b", "difference": 0.2, "ci": [0.15, 0.25]}], "more_documents": 3}
    monkeypatch.setattr(table_mod, "_joint_estimates", lambda db, name, policy, views=(): joint)
    rows = _same_numbers(bdb, "t")
    for r, s in zip(rows, ("a", "b"), strict=True):
        est = joint["systems"][s]["entities/avg/f1"]
        assert (r["value"], [r["lo"], r["hi"]], r["value_is"]) == (est["value"], est["ci"], "estimate")
        assert (r["bias"], r["rank_best"], r["rank_worst"]) == (0.01, "ab".index(s) + 1, "ab".index(s) + 1)
    tex = export_board(bdb, "t", "latex")
    assert "Estimated" in tex and "[55.0, 65.0]" in tex and "board's sampling plan" in tex


def test_latex_states_policy_review_and_interval_and_escapes_names(bdb, tmp_path):
    bdb.execute("UPDATE runs SET name = ? WHERE name = 'b'", [HOSTILE])
    create_board(bdb, "t", ["a", HOSTILE])
    tex = export_board(bdb, "t", "latex", policy="majority")
    assert "\\input{" not in tex and "\\textbackslash{}input\\{/etc/passwd\\}" in tex
    assert "majority policy" in tex and "0 of " in tex and "decisions reviewed" in tex
    assert "interval: none, since" in tex and "\\toprule" in tex and tex.isascii()
    text = export_board(bdb, "t", "csv")
    assert "\n'=cmd" in text  # csv_cell: a formula starts with a quote
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed: the text checks above stand")
    doc = tmp_path / "t.tex"
    doc.write_text("\\documentclass{article}\\usepackage{booktabs}\\usepackage[T1]{fontenc}\\begin{document}\n"
                   + tex + "\\end{document}\n", encoding="utf-8")
    p = subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", doc.name],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-2000:]
    assert "(/etc/passwd" not in p.stdout
    assert Path(tmp_path / "t.pdf").stat().st_size > 0


def test_an_ideation_boards_table_has_a_row_per_system(bdb, tmp_path):
    create_board(bdb, "i", ["ideas"])
    review_all(bdb, "ideas", tmp_path)
    rows = _same_numbers(bdb, "i")
    assert [r["system"] for r in rows] == ["Human", "AI", "AI_Rerank"]
    assert all(r["value_is"] == "exact" and r["metric"] == "absolute/novelty/mean" for r in rows)
    tex = export_board(bdb, "i", "latex")
    assert "AI\\_Rerank" in tex and "exact" in tex
