"""How the pages read (issue 26 "Reading the pages"): numbers in their units, empty cells as `–`, the family's own
nouns, a paged paper page with per-run decision numbers, the queue's skip switch only where decisions can be
certain, TeX accents in source text shown as letters. Expected values are read from the database and the families'
declarations, not copied."""

from __future__ import annotations

import json
import re

import pytest

from audit.outputs.export import export_run
from audit.review.queue import queue_ids
from audit.store.database import open_db
from audit.views import load_view
from scoring.families import TASKS
from tests.app.conftest import open_page, plain
from ui.highlight import highlight_html
from ui.paging import PAGE_SIZE

LITX = "demo-litxbench-drop-meas30"
IDEATION = "demo-ideation-si2024-humans"
RETRIEVAL = "demo-retrieval-wordllama"
DEMO_RUNS = ("demo-chimera-mixed", LITX, IDEATION, RETRIEVAL)


def _cells(frame) -> list:
    return [v for col in frame.columns for v in frame[col].tolist()]


def test_litxbench_scores_tables_show_counts_as_integers_and_no_empty_column(app, app_db):
    at = open_page(app, "scores", run=LITX)
    assert not at.exception
    tables = [d.value for d in at.dataframe if "type" in d.value.columns and "decision kind" not in d.value.columns]
    assert tables
    for frame in tables:
        for v in _cells(frame):
            assert v is not None and str(v) not in ("None", "nan", "NaN"), frame
        for col in frame.columns:  # no column of a section is empty on every row (the all-None hallucination row)
            assert not all(str(v) == "–" for v in frame[col]), (col, frame)
    metrics = json.loads(open_db(app_db).execute("SELECT original_metrics FROM runs WHERE name = ?",
                                                 [LITX]).fetchone()[0])
    value = metrics["overall"]["multi_level"]["value"]
    first = next(f for f in tables if "tp" in f.columns)
    row = first[first["type"] == "value"].iloc[0]
    assert str(row["tp"]) == str(int(value["tp"])) and str(row["target"]) == str(int(value["target"]))
    hallucination = next(f for f in tables if "rate" in f.columns)
    assert "precision" not in hallucination.columns
    assert int(hallucination["numbers checked"].iloc[0]) == metrics["overall"]["hallucination"]["total_numbers"]


@pytest.mark.parametrize("run", DEMO_RUNS)
def test_headline_cards_read_in_their_units(app, app_db, run):
    at = open_page(app, "scores", run=run)
    task = load_view(open_db(app_db), run).task
    cards = {m.label: m.value for m in at.metric}
    for cell in task.headline:
        value = cards[cell.label]
        if cell.unit == "share":
            assert value.endswith("%"), (cell.label, value)
        elif cell.unit == "rank":
            assert re.fullmatch(r"\d+(\.5)?", value), (cell.label, value)
        else:
            assert re.fullmatch(r"-?\d\.\d{4}|–", value), (cell.label, value)


@pytest.mark.parametrize("run", DEMO_RUNS)
def test_latex_table_fits_a_column_and_prints_counts_as_integers(app_db, run):
    tex = export_run(open_db(app_db), run, "latex")
    specs = re.findall(r"\\begin\{tabular\}\{([lrc]+)\}", tex)
    assert specs and all(len(s) <= 8 for s in specs), specs
    count_row = re.compile(r"[^&]*&[^&]*& (n |numbers checked|not in the paper|tp|fp|fn)")
    counts = [line for line in tex.splitlines() if count_row.match(line)]
    for line in counts:  # a count is an integer, never 2091.000
        assert all(re.fullmatch(r"\d+|--", c.strip(" \\")) for c in line.split("&")[3:]), line
    assert "None" not in tex


def test_litxbench_latex_counts_are_the_metrics_counts(app_db):
    tex = export_run(open_db(app_db), LITX, "latex")
    h = load_view(open_db(app_db), LITX).row["original_metrics"]["overall"]["hallucination"]
    assert f"hallucination & numbers & numbers checked & {h['total_numbers']} & {h['total_numbers']} \\\\" in tex
    assert f"hallucination & numbers & not in the paper & {h['numbers_not_found']} & " in tex


def test_litxbench_paper_page_is_paged_and_numbers_decisions_per_run(app, app_db):
    db = open_db(app_db)
    view = load_view(db, LITX)
    doc = max(view.document_ids(), key=lambda d: len(view.decisions(d)))
    n = len(view.decisions(doc))
    assert n > PAGE_SIZE
    at = open_page(app, "document", run=LITX, doc=doc)
    assert not at.exception
    cards = [h.proto.body for h in at.get("html") if "rj-card" in h.proto.body and "<b>#" in h.proto.body]
    assert len(cards) == PAGE_SIZE
    ids = sorted(r[0] for r in db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id", [view.id]))
    shown = [int(m) for c in cards for m in re.findall(r"<b>#(\d+)", c)]
    ids_shown = [int(m) for c in cards for m in re.findall(r"\(id (\d+)\)", c)]
    assert ids[0] > 1 and len(ids_shown) == len(shown)  # the seeded database holds other runs' decisions first
    assert shown == [ids.index(i) + 1 for i in ids_shown]
    picker = at.selectbox(key=f"document.page.{doc}")
    picker.set_value(len(picker.options) - 1).run()
    last = [h.proto.body for h in at.get("html") if "rj-card" in h.proto.body and "<b>#" in h.proto.body]
    assert len(last) == n - PAGE_SIZE * ((n - 1) // PAGE_SIZE)


@pytest.mark.parametrize(("run", "selectbox", "subheader"), [
    ("demo-chimera-mixed", "Open an abstract", "Abstracts"), (RETRIEVAL, "Open a query", "Queries"),
    (LITX, "Open a paper", "Papers"), (IDEATION, "Open a question", "Questions"),
    ("demo-verdicts-inspect", "Open an item", "Items")])
def test_overview_speaks_the_familys_nouns(app, run, selectbox, subheader):
    at = open_page(app, "overview", run=run)
    assert at.selectbox(key="overview.pick").label == selectbox
    assert subheader in [s.value for s in at.subheader]
    words = " ".join(plain(c.value) for c in at.caption)
    assert "querys" not in words.lower() and " a abstract" not in words


def test_the_queue_skips_certain_litxbench_decisions_and_offers_no_switch_for_ideation(app, app_db):
    db = open_db(app_db)
    view = load_view(db, LITX)
    every = queue_ids(db, view, "ana", "unreviewed")
    skipped = queue_ids(db, view, "ana", "unreviewed", skip_trivial=True)
    certain = {d["id"] for d in view.decisions() if view.task.trivial(d)}
    assert certain and set(skipped) == set(every) - certain
    at = open_page(app, "queue", reviewer="ana", run=LITX)
    toggle = at.toggle(key="queue.skip_trivial")
    assert TASKS["litxbench"].certain_decisions in plain(toggle.label)
    at = open_page(at, "queue", reviewer="ana", run=IDEATION)
    assert not at.exception and "queue.skip_trivial" not in [t.key for t in at.toggle]


def test_tex_accents_read_as_letters_and_predicted_marks_keep_spaces_outside():
    text = r"parallel data for V\~oro, and more"
    start = text.index("data")
    out = highlight_html(text, [(text.index("for"), len(text) - 10, "g")], [(start, text.index(","), "p")])
    assert "Võro" in out and r"\~" not in out
    for inner in re.findall(r'<span class="[^"]*rj-pred[^"]*"[^>]*>([^<]*)</span>', out):
        assert inner == inner.strip() and inner


def test_the_queue_numbers_its_card_and_strip_within_the_run(app, app_db):
    db = open_db(app_db)
    view = load_view(db, LITX)
    ids = [r[0] for r in db.execute("SELECT id FROM decisions WHERE run_id = ? ORDER BY id", [view.id])]
    assert ids[0] > 1  # other runs' decisions come first in the seeded database
    at = open_page(app, "queue", reviewer="ana", run=LITX)
    head = re.search(r"decision #(\d+) \(id (\d+)\) · 1 of", " ".join(m.value for m in at.markdown))
    assert head and int(head[1]) == ids.index(int(head[2])) + 1
    at.button(key="queue.label.0").click().run()
    assert not at.exception
    strip = plain(" ".join(c.value for c in at.caption))
    assert f"Stored #{head[1]} → " in strip and f"#{head[2]} →" not in strip


@pytest.mark.parametrize("unit", ["score", "share", "rank", "count"])
def test_a_change_never_reads_as_zero(unit):
    """Any audited value that differs from the original shows a non-zero change, however small."""
    import numpy as np

    from audit.numbers import format_delta

    rng = np.random.default_rng(7)
    for d in np.concatenate([10 ** rng.uniform(-9, 0, 300), -(10 ** rng.uniform(-9, 0, 300))]):
        text = format_delta(float(d), unit)
        assert re.search(r"[1-9]", text), (d, text)
        assert text.startswith("+" if d > 0 else "-"), (d, text)


@pytest.mark.parametrize("run", DEMO_RUNS)
def test_every_scores_chart_plots_something(app, run):
    """No empty chart (LitXBench's per-type chart was drawn with nothing in it): every chart on the Scores page has
    at least one finite value to plot."""
    import math

    import pyarrow as pa

    at = open_page(app, "scores", run=run)
    assert not at.exception
    charts = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    assert charts
    for chart in charts:
        values = []
        for ds in chart.proto.datasets:
            frame = pa.ipc.open_stream(ds.data.data).read_all().to_pandas()
            values += [v for col in frame.columns for v in frame[col].tolist()
                       if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)]
        assert values, (run, chart.proto.spec[:200])


@pytest.mark.parametrize("run", DEMO_RUNS)
def test_metric_tables_name_their_columns_in_words(app_db, run):
    """Every column a family's metric rows give (the Scores tables, the change strip and the LaTeX print them) is
    words, not a field name: `absolute_ci_low`, `median_rank`, `not_found` once reached the page."""
    view = load_view(open_db(app_db), run)
    columns = {k for row in view.task.metric_rows(view.row["original_metrics"]) for k in row}
    assert columns and not [c for c in columns if "_" in c], columns


@pytest.mark.parametrize(("run", "hidden"), [("demo-chimera-mixed", ["true negative"]), (RETRIEVAL, []),
                                             ("demo-verdicts-inspect", []), (LITX, []), (IDEATION, [])])
def test_the_document_list_hides_only_what_the_family_says_has_nothing_to_review(app, run, hidden):
    """The list left out each family's last outcome: the verdicts' failing items ("incorrect") and retrieval's
    "below 100" queries, the ones most worth auditing, were hidden until the reviewer asked for them."""
    at = open_page(app, "overview", run=run)
    picked = at.multiselect(key="overview.outcomes")
    assert [o for o in picked.options if o not in picked.value] == hidden
