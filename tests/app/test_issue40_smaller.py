"""The smaller things of issue #40 point 9 a researcher trips over on the pages: wording that reads as a wrong
number, and tables that hide what matters at 1280 px."""

from __future__ import annotations

import re

from scoring.families import TASKS
from tests.app.conftest import open_page, plain, table


def test_the_runs_table_puts_the_link_run_judge_and_scores_first_and_keeps_them_short(app):
    runs = table(app, "open", "run", "judge")
    assert list(runs.columns[:5]) == ["open", "run", "family", "judge", "scores (original)"]
    assert "replay:judge_smollm2_structured.jsonl" in set(runs["judge"])  # the log's name, not its folders
    assert not any("/" in j for j in runs["judge"])
    assert set(runs["family"]) <= set(TASKS)


def test_the_demo_list_never_nests_brackets(app):
    lines = [plain(m.value) for m in app.markdown if "demo-retrieval-wordllama" in plain(m.value)]
    assert lines
    for line in lines:
        assert not re.search(r"\([^()]*\([^()]*\)\)", line), line  # "(CHIMERA ... (ranking))"


def test_the_readme_states_the_alternative_annotator_minimum_the_page_uses():
    from scoring.stats.alt_test import MIN_HUMANS_PER_ITEM, RECOMMENDED_HUMANS
    from tests.conftest import ROOT

    words = {2: "two", 3: "three", 4: "four"}
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    found = re.search(r"alternative annotator test .*? on items with at least (\w+)\s+human labels", text)
    assert found and found.group(1) == words[MIN_HUMANS_PER_ITEM], found and found.group(0)
    assert f"recommends {words[RECOMMENDED_HUMANS]}" in text


def test_compare_says_when_it_compares_predictions_not_judges(app):
    at = open_page(app, "compare", run="demo-litxbench-drop-meas30")
    assert not at.exception
    warnings = [plain(w.value) for w in at.warning]
    assert any(w.startswith("These runs compare two prediction sets, not two judges") and "pred" in w
               and "the judge is the same in both" in w for w in warnings), warnings


def test_compare_of_two_judges_warns_nothing_and_explains_a_zero(app):
    at = open_page(app, "compare", run="demo-chimera-smollm2")
    assert not at.exception
    assert not [w for w in at.warning if "not two judges" in w.value]
    scores = table(at, "metric", "A − B")
    diffs = dict(zip(scores["metric"], scores["A − B"], strict=True))
    assert diffs["classification F1 (macro avg)"] == "0 (no judge decision behind it)"
    assert re.fullmatch(r"[+-]0\.\d{4}", diffs["entity F1 (macro avg)"])


def test_a_wide_score_table_puts_the_change_beside_the_scores(app_db):
    """LitXBench's per-level tables are wider than a 1280 px page: ΔF1 sits right after f1 audited, the counts
    (which scroll) come after it."""
    from audit.store.database import open_db
    from audit.views import load_view
    from ui.metrics import comparison_rows, section_frame

    view = load_view(open_db(app_db), "demo-litxbench-drop-meas30")
    rows = comparison_rows(view.task, view.row["original_metrics"], view.audit.metrics)
    cols = list(section_frame(rows[rows["section"] == "multi-level"]).columns)
    assert cols[:8] == ["type", "precision", "precision audited", "recall", "recall audited", "f1", "f1 audited",
                        "ΔF1"], cols
    assert {"tp", "fp", "fn"} <= set(cols[8:])


def test_only_the_counts_after_the_change_are_narrowed(app_db):
    """Ideation's score pairs ("2.6939 → 2.6327") keep their width; a P / R / F1 table's counts are narrow."""
    from audit.store.database import open_db
    from audit.views import load_view
    from ui.metrics import comparison_rows, number_formats, section_frame

    for run, section, wide in (("demo-ideation-si2024-humans", "Human", None),
                               ("demo-litxbench-drop-meas30", "multi-level", "tp")):
        view = load_view(open_db(app_db), run)
        rows = comparison_rows(view.task, view.row["original_metrics"], view.audit.metrics)
        frame = section_frame(rows[rows["section"] == section])
        narrow = {c for c, cfg in number_formats(frame).items() if cfg.get("width") == "small"}
        if wide is None:
            assert not narrow, narrow
        else:
            assert wide in narrow and not narrow & {"precision", "f1 audited", "ΔF1"}
