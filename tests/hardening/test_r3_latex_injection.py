"""LaTeX injection (issue #34, third round): hostile strings (`\\input`, `\\write18`, `\\url`, unbalanced braces,
an optional argument after a row's `\\\\`, every special character) in every text that reaches the LaTeX export
(entity types, the judge spec, the run name in the label) typeset literally: no control word of theirs survives,
and, where pdflatex is installed, the table compiles without shell escape."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from audit.outputs.cells import tex
from audit.outputs.export import export_latex
from devtools.injection_oracles import OURS, control_words

HOSTILE = [r"[-40cm] row", "}}{{ unbalanced {", r"\input{/etc/passwd}", r"\immediate\write18{touch /tmp/pwned}",
           r"\url{http://evil.invalid}", "*star", "% comment & col # $x$ ^ _ ~ < > |", "a\\\\b\nnew\rline",
           "\\catcode`\\@=11 \\def\\x{y}"]
def row_starts(latex: str) -> list[str]:
    """The first characters of every line that follows a row end `\\\\`: what `\\\\` reads as its argument."""
    lines = latex.splitlines()
    return [nxt[:1] for line, nxt in zip(lines, lines[1:], strict=False) if line.rstrip().endswith("\\\\")]


def test_tex_leaves_no_control_word_of_the_data() -> None:
    for h in HOSTILE:
        out = tex(h)
        assert control_words(out) <= OURS, (h, out)
        assert out.count("{") - out.count(r"\{") == out.count("}") - out.count(r"\}"), out
        assert not out.startswith(("[", "*")), out  # would be read by a preceding `\\`


def _plant(db) -> None:  # noqa: ANN001 (sqlite_utils Database)
    """HOSTILE as entity type names (in the stored and the audited metrics) and in the judge spec and run name."""
    types = [r[0] for r in db.execute("SELECT DISTINCT type FROM decisions WHERE kind = 'entity_pair' ORDER BY type")]
    row, identity = db.execute("SELECT original_metrics, judge_identity FROM runs WHERE name = 'mixed'").fetchone()
    spec = "replay:/x/" + HOSTILE[2] + HOSTILE[1] + ".jsonl"
    with db.conn:
        for t, h in zip(types, HOSTILE, strict=False):
            db.execute("UPDATE decisions SET type = ? WHERE type = ?", [h, t])
            row = row.replace(json.dumps(t), json.dumps(h))
        db.execute("UPDATE runs SET original_metrics = ?, judge_spec = ?, judge_identity = ?, name = ? "
                   "WHERE name = 'mixed'", [row, spec, json.dumps(json.loads(identity) | {"spec": spec}),
                                            "mixed}" + HOSTILE[3]])


def test_the_latex_export_typesets_every_planted_text_literally(db_with_run, tmp_path: Path) -> None:
    _plant(db_with_run)
    out = export_latex(db_with_run, "mixed}" + HOSTILE[3])
    assert control_words(out) <= OURS, control_words(out) - OURS
    assert not {"[", "*"} & set(row_starts(out)), row_starts(out)
    assert tex("}}{{ unbalanced {") in out and tex(r"\input{/etc/passwd}") in out  # the planted texts reached it
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed: the text checks above stand")
    doc = tmp_path / "t.tex"
    doc.write_text("\\documentclass{article}\\usepackage{booktabs}\\usepackage[T1]{fontenc}\\begin{document}\n"
                   + out + "\\end{document}\n", encoding="utf-8")
    p = subprocess.run(["pdflatex", "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", doc.name],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-2000:]
    assert "(/etc/passwd" not in p.stdout  # TeX lists every file it reads as "(path"
    assert not Path("/tmp/pwned").exists()
