"""The paper-facing numbers. The LaTeX table (`audit.outputs.export.export_latex`, also the report's `table.tex`) and
the
report's headline carry the estimated full-review score with both labelled intervals, not only reviewed-so-far
(issue #40 point 4); every LaTeX export compiles (point 6): pdflatex where installed, and always no character
outside ASCII; the bias chart's axis names what it subtracts (point 9)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from audit.outputs import figures
from audit.outputs.export import export_json, export_latex
from audit.outputs.report import build_report
from audit.outputs.tex_ascii import ascii_char, ascii_tex
from audit.review.reviews import add_review
from audit.review.sampling import ALL_KINDS, create_plan
from audit.store.database import open_db
from audit.views import decisions, load_view
from tests.conftest import copy_of
from tests.report.test_sampled_report import review_sampled_blocks

SMOL = "demo-chimera-smollm2"
LITX = "demo-litxbench-drop-meas30"
PDFLATEX = shutil.which("pdflatex")


@pytest.fixture(scope="module")
def db(tmp_path_factory, demo_template):
    """The demo runs; SmolLM2 with 40 sampled documents reviewed (both intervals exist), LitXBench with an
    undefined κ (the judge said only "match" on the reviewed decisions: the caption quotes it)."""
    db = open_db(copy_of(demo_template, tmp_path_factory.mktemp("latex") / "demo.db"))
    create_plan(db, SMOL, seed=3)
    review_sampled_blocks(db, SMOL, 40)
    picked = [d for d in decisions(db, LITX) if d["kind"] == "material_pair" and d["judge"] == "match"][:3]
    for d in picked:
        add_review(db, LITX, d["id"], "match", "ana")
    return db


def all_tables(db) -> dict[str, str]:
    return {r["name"]: export_latex(db, r["name"]) for r in db.query("SELECT name FROM runs ORDER BY id")}


def caption(table: str) -> str:
    return re.search(r"\\caption\{(.*)\}", table).group(1)


def test_the_table_and_caption_carry_the_estimate_with_both_labelled_intervals(db):
    table = export_latex(db, SMOL)
    est = export_json(db, SMOL)["sampling"][ALL_KINDS]["estimate"]["entities/avg/f1"]
    assert est["ci"] and est["anytime"]["ci"] and est["estimate"] != est["judge_only"]
    pct = [f"{100 * v:.1f}" for v in (est["judge_only"], est["reviewed_so_far"], est["estimate"])]
    fixed = "[{:.1f}, {:.1f}]".format(*(100 * v for v in est["ci"]))
    anytime = "[{:.1f}, {:.1f}]".format(*(100 * v for v in est["anytime"]["ci"]))
    assert f"entity F1 (macro avg) & {' & '.join(pct)} & {fixed} & {anytime} \\\\" in table
    assert r"Metric & Judge only & Reviewed so far & Estimate & 95\% fixed-n & 95\% anytime \\" in table
    cap = caption(table)
    tex_fixed, tex_anytime = (s.replace("[", "{[}").replace("]", "{]}") for s in (fixed, anytime))  # tex() braces
    assert f"entity F1 (macro avg) {pct[2]}, 95\\% interval {tex_fixed} (fixed-n), {tex_anytime} (anytime)" in cap
    assert "40 sampled documents" in cap and "reviewed so far" in cap
    # classification F1 takes no judge: said exact, never a zero-width interval
    assert re.search(r"classification F1 \(macro avg\)( & 82\.2){3} & \\multicolumn\{1\}\{c\}\{exact\}", table)
    # the column that used to say "Audited" is reviewed-so-far and says so
    assert "{Audited}" not in table and "& Audited" not in table


def test_without_a_plan_the_caption_says_there_is_no_estimate(db):
    cap = caption(export_latex(db, LITX))
    assert "no sampling plan, so no estimate of a full human review" in cap
    assert "Estimate &" not in export_latex(db, LITX)


def test_every_latex_export_is_ascii(db):
    for name, table in all_tables(db).items():
        bad = sorted({c for c in table if ord(c) > 127})
        assert not bad, (name, bad)
    assert "``match''" in caption(export_latex(db, LITX))  # the curly quotes of the undefined-κ reason


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed (apt-get install texlive-latex-base "
                                               "texlive-latex-recommended); the ASCII test still runs")
def test_every_latex_export_compiles_with_pdflatex(db, tmp_path):
    for name, table in all_tables(db).items():
        (tmp_path / "table.tex").write_text(table, encoding="utf-8")
        (tmp_path / "paper.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                            "\\input{table.tex}\n\\end{document}\n", encoding="utf-8")
        done = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                               "paper.tex"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (name, done.stdout[-2000:])
        assert (tmp_path / "paper.pdf").stat().st_size > 0


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed; the ASCII test still runs")
def test_every_spelling_of_ascii_tex_compiles(tmp_path):
    """Every character ascii_tex spells with a command (Greek, Latin with accents, its fixed table) compiles in a
    default setup: an archaic Greek letter once became `\\heta`, which no LaTeX defines."""
    from audit.outputs.tex_ascii import ascii_tex

    chars = "".join(chr(c) for c in [*range(0x370, 0x400), *range(0xC0, 0x250), *range(0x2010, 0x2200)])
    body = ascii_tex(chars)
    (tmp_path / "paper.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                        f"{body}\n\\end{{document}}\n", encoding="utf-8")
    done = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "paper.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-1500:]


@pytest.mark.parametrize(("char", "want"), [("κ", r"\ensuremath{\kappa}"), ("“", "``"), ("”", "''"),
                                            ("é", r"\'{e}"), ("−", r"\ensuremath{-}"), ("中", "[U+4E2D]"),
                                            ("ﬁ", "fi")])
def test_each_non_ascii_character_gets_an_ascii_spelling(char, want):
    assert ascii_char(char) == want


def test_a_look_alike_of_a_latex_special_never_becomes_live():
    """Full-width $ and \\ fold (NFKC) to the real ones; they must not come out as live LaTeX."""
    out = ascii_tex("＄x＄ ＼input ％")
    assert out.isascii() and "$" not in out and "\\input" not in out and "%" not in out


def test_the_report_headline_gives_the_estimate_with_both_labelled_intervals(db):
    view = load_view(db, SMOL)
    report = build_report(view)
    est = export_json(db, SMOL)["sampling"][ALL_KINDS]["estimate"]
    body = "".join(report.sections[0].body)
    head = re.search(r"<thead>(.*?)</thead>", body).group(1)
    assert re.findall(r"<th>(.*?)</th>", head) == ["metric", "judge only", "audited (reviewed so far)", "estimate",
                                                   "95% interval (fixed-n)", "95% interval (anytime)", "judge bias"]
    e = est["entities/avg/f1"]
    fixed, anytime = ("[{:.4f}, {:.4f}]".format(*ci) for ci in (e["ci"], e["anytime"]["ci"]))
    n = '<td class="num">'  # a number never breaks inside its cell
    assert f"<td>entity F1 (macro avg)</td>{n}{e['judge_only']:.4f}</td>{n}{e['reviewed_so_far']:.4f}</td>" \
           f"{n}{e['estimate']:.4f}</td><td>{fixed}</td><td>{anytime}</td>" in body
    assert f"Estimated full review: entity F1 (macro avg) {e['estimate']:.4f}, 95% interval {fixed} (fixed-n), " \
           f"{anytime} (anytime), from {e['documents']}." in body and e["documents"].startswith("40 sampled")
    # classification F1 takes no judge: exact, not "0.8219 [0.8219, 0.8219]"
    row = re.search(r"<td>classification F1 \(macro avg\)</td>(.*?)</tr>", body).group(1)
    assert "<td>exact</td>" in row and "[0.8219, 0.8219]" not in row
    assert "Exact: classification F1 (macro avg): no review can change it (no judge decision behind it)." in body


def test_the_bias_chart_axis_names_what_it_subtracts(db):
    view = load_view(db, SMOL)
    bias = next(f for f in build_report(view).figures if f.name == "bias")
    titles = json.dumps(bias.spec, ensure_ascii=False)
    assert "judge bias (judge only − estimate)" in titles and "− audited" not in titles
    so_far = figures.bias_intervals([{"label": "F1", "value": 0.1, "low": None, "high": None, "n": 3,
                                      "against": "audited (reviewed so far)"}]).to_dict()
    assert "judge bias (judge only − audited (reviewed so far))" in json.dumps(so_far, ensure_ascii=False)
