"""The audit report: for every family's demo run its embedded numbers are the JSON export's (parsed back from the
report's data element, never from its text), its figures plot those numbers, hostile text from the data arrives
escaped, and the CLI writes the HTML, every figure as SVG and PDF, and the LaTeX table."""

from __future__ import annotations

import html
import json
import re

import pandas as pd
import pytest

from audit.cli import main
from audit.demo import demo_runs
from audit.outputs.agreement_rule import any_settled, group_title
from audit.outputs.export import export_json
from audit.outputs.report import DATA_ELEMENT_ID, build_report, report_html
from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import db_file, open_db
from audit.views import load_view
from tests.conftest import GOLD, copy_of, write_jsonl
from ui.families import report_panel

DATA_RE = re.compile(rf'<script type="application/json" id="{DATA_ELEMENT_ID}">(.*?)</script>', re.S)
DEMO_RUNS = [d.name for _, d in demo_runs()]


def embedded(page: str) -> dict:
    found = DATA_RE.findall(page)
    assert len(found) == 1
    return json.loads(found[0])


def rows_of(spec: dict) -> list[dict]:
    return [r for values in spec.get("datasets", {}).values() for r in values]


def without_time(export: dict) -> dict:
    return {k: v for k, v in export.items() if k != "exported"}


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory, demo_template):
    return open_db(copy_of(demo_template, tmp_path_factory.mktemp("report") / "demo.db"))


@pytest.fixture(scope="module")
def reports(demo_db) -> dict[str, tuple[str, object]]:
    out = {}
    for name in DEMO_RUNS:
        view = load_view(demo_db, name)
        report = build_report(view, report_panel(view.task.name))
        out[name] = (report_html(report), report)
    return out


def test_every_family_has_a_demo_run_in_the_check():
    from scoring.families import TASKS

    assert {t for t, _ in demo_runs()} == set(TASKS)


@pytest.mark.parametrize("run", DEMO_RUNS)
def test_embedded_numbers_equal_the_json_export(demo_db, reports, run):
    page, _ = reports[run]
    data = embedded(page)
    export = json.loads(json.dumps(export_json(demo_db, load_view(demo_db, run))))
    assert without_time(data["export"]) == without_time(export)


@pytest.mark.parametrize("run", DEMO_RUNS)
def test_figures_plot_the_exported_numbers(demo_db, reports, run):
    page, report = reports[run]
    data = embedded(page)
    view = load_view(demo_db, run)
    export = data["export"]
    assert set(data["figures"]) == {f.name for f in report.figures}
    # one chart element per figure, every figure placed once
    assert sorted(re.findall(r'<div class="chart" id="fig-([^"]+)"></div>', page)) == sorted(data["figures"])
    headline = {(r["label"], r["series"]): r["value"] for r in rows_of(data["figures"]["headline"])}
    for cell in view.task.headline:
        if cell.value(export["original"]) is not None:
            assert headline[(cell.label, "judge only")] == cell.value(export["original"])
            assert headline[(cell.label, "audited")] == cell.value(export["audited"])
    coverage = rows_of(data["figures"]["coverage"])
    assert sum(r["reviewed"] for r in coverage) == export["reviews"]["reviewed"]
    assert sum(r["total"] for r in coverage) == view.row["n_decisions"]
    hvj = export["agreement"]["human_vs_judge"]
    if "agreement" in data["figures"]:
        points = {(r["label"], r["series"]): r["value"] for r in rows_of(data["figures"]["agreement"]) if "label" in r}
        for g, st in hvj.items():
            head = st["headline"]  # the family's statistic (weighted κ for ordinal groups); undefined: not drawn
            title = group_title(view.task, g)  # named as the page's tables name it
            if head["value"] is not None:
                assert points[(f"{title} ({head['name']})", "human vs judge")] == st[head["key"]]
            else:
                assert (f"{title} ({head['name']})", "human vs judge") not in points
    else:  # nothing settled: the one group says so, and nothing is drawn
        assert not any_settled(hvj) and hvj["all"]["headline"]["value"] is None


def test_sections_cover_the_issue(demo_db, reports):
    from audit.board.store import boards_of_run

    for run, (page, report) in reports.items():
        titles = [s.title for s in report.sections]
        boards = boards_of_run(demo_db, run)  # a demo run on a demo board: a section for its board (issue 36 §4)
        assert [t.split(".")[0] for t in titles] == [str(i) for i in range(1, 7 + len(boards))], (run, titles)
        assert all(f"Board {b}" in t for b, t in zip(boards, titles[6:], strict=True)), (run, titles)
        assert "SHA-256" in page and "What is not the paper's number" in page


def test_the_file_loads_nothing_from_elsewhere(reports):
    page, _ = next(iter(reports.values()))
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    markup = re.sub(r"(<script[^>]*>).*?</script>", r"\1", page, flags=re.S)  # the page without script bodies
    assert markup.count("<script") == 3
    assert not re.findall(r"<(?:script|link|img|iframe|object|embed)[^>]+(?:src|href|data)=", markup)
    assert "vegaEmbed" in page and len(page) > 500_000  # the libraries themselves are in the file


EVIL = "<script>alert(1)</script><img src=x onerror=alert(2)></script>&amp;"
RUN_NAME = "evil <b onmouseover=alert(3)>run<b> &amp; co"  # run names may not hold a slash


@pytest.fixture
def hostile_run(tmp_path):
    gold = pd.read_csv(GOLD, dtype=str, keep_default_na=False).head(3)
    gold.loc[0, "paper_id"] = EVIL
    gold_path = tmp_path / "gold.csv"
    gold.to_csv(gold_path, index=False)
    pred = write_jsonl(tmp_path / "pred.jsonl", [
        {"paper_id": EVIL, "relations": {"combination": [{"comb-element": [EVIL, "multilingual training"]}]}}])
    db = open_db(tmp_path / "evil.db")
    score_run(db, "chimera", {"gold": str(gold_path), "pred": str(pred)}, "exact", run=RUN_NAME)
    view = load_view(db, RUN_NAME)
    dec = next(d for d in view.decisions() if EVIL in (d["left"], d["right"]))
    other = next(lab for lab in view.task.label_schemes[dec["kind"]].labels if lab != dec["judge"])
    add_review(db, view.name, dec["id"], other, EVIL, note=EVIL)
    return db, view.name


def test_hostile_text_arrives_escaped(hostile_run):
    db, run = hostile_run
    view = load_view(db, run)
    page = report_html(build_report(view, report_panel(view.task.name)))
    assert EVIL not in page and RUN_NAME not in page and "<img src=x" not in page and "<b onmouseover" not in page
    assert page.count("<script") == 3  # the data element, the libraries, the renderer: nothing from the data
    assert html.escape(EVIL) in page  # in the tables: document id, span, reviewer, note
    text = DATA_RE.findall(page)[0]
    assert "<" not in text and ">" not in text and "&" not in text
    data = json.loads(text)
    assert data["export"]["run"] == run and EVIL in data["export"]["reviews"]["reviewers"]  # escaped, not changed


def test_a_bidi_override_is_shown_and_a_long_note_is_cut(hostile_run):
    """A right-to-left override in a note reversed the rest of it on the page ("gnp.exe" read "exe.png"), and a
    4,600-character note squeezed the other columns of its row to a few characters a line."""
    db, run = hostile_run
    view = load_view(db, run)
    dec = next(d for d in view.decisions() if d["human"])
    note = "see \u202egnp.exe " + "long " * 200
    add_review(db, run, dec["id"], dec["effective"], "rtl", note=note)
    page = report_html(build_report(load_view(db, run), report_panel(view.task.name)))
    body = page.split(f'id="{DATA_ELEMENT_ID}"')[0]  # the tables (the data element keeps the text as it is)
    assert "\u202e" not in body and "see ⟨RLO⟩gnp.exe" in body
    assert "characters; the decisions CSV export holds the whole note)" in body
    assert "long " * 200 not in body


def test_cli_writes_the_report_figures_and_latex(demo_db, tmp_path):
    path = db_file(demo_db)
    run = DEMO_RUNS[0]
    out, figs = tmp_path / "r.html", tmp_path / "figs"
    assert main(["--db", path, "report", "--run", run, "--out", str(out), "--figures", str(figs)]) == 0
    data = embedded(out.read_text(encoding="utf-8"))
    for name, spec in data["figures"].items():
        svg = (figs / f"{name}.svg").read_text(encoding="utf-8")
        assert svg.startswith("<svg") and "</svg>" in svg
        assert (figs / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        for r in rows_of(spec):  # the numbers of the figure are drawn in its SVG where the chart prints them
            if "text" in r and isinstance(r["text"], str) and " of " in r["text"]:
                assert r["text"] in svg
    tex = (figs / "table.tex").read_text(encoding="utf-8")
    assert r"\begin{tabular}" in tex and "booktabs" in tex
    assert main(["--db", path, "report", "--run", "no such run", "--out", str(out)]) == 2
    assert main(["--db", path, "report", "--run", run, "--out", str(tmp_path / "missing" / "r.html")]) == 2


def test_cli_report_follows_the_policy(demo_db, tmp_path):
    path = db_file(demo_db)
    out = tmp_path / "m.html"
    run = next(n for n in DEMO_RUNS if load_view(demo_db, n).reviews)
    assert main(["--db", path, "report", "--run", run, "--out", str(out), "--policy", "majority"]) == 0
    data = embedded(out.read_text(encoding="utf-8"))
    assert data["export"]["effective_label_policy"]["name"] == "majority"
    expected = export_json(demo_db, load_view(demo_db, run, "majority"))
    assert data["export"]["audited"] == json.loads(json.dumps(expected["audited"]))


def test_report_help_line_is_a_sentence():
    from audit.cli import cmd_report

    first = cmd_report.__doc__.strip().splitlines()[0]
    assert first.endswith(".") and first[0].isupper()


