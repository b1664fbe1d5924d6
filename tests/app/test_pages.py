"""AppTest walks through every page: demo, new run, overview, abstract review with an overrule, one current run
across pages, settings from the URL, hostile text. Expected counts are read from the database, not copied."""

from collections import Counter

from audit.store.database import open_db
from tests.app.conftest import open_page, plain
from tests.conftest import GOLD, PRED_MIXED, write_jsonl

DEMO = "demo-chimera-mixed"
PAGES = ("overview", "queue", "scores", "agreement", "export", "document", "errata")


def test_runs_page_lists_the_demo_run_with_its_scores(app, app_db):
    assert app.title[0].value.startswith("Rejudge")
    table = app.dataframe[0].value
    assert DEMO in table["run"].tolist()
    scores = table.loc[table["run"] == DEMO, "scores (original)"].item()
    import json
    metrics = json.loads(open_db(app_db).execute("SELECT original_metrics FROM runs WHERE name = ?",
                                                 [DEMO]).fetchone()[0])
    assert f"entity F1 (macro avg) {metrics['entities']['avg']['f1']:.4f}" in scores
    assert "None" not in scores


def test_score_a_new_run_from_the_form_lists_it_and_makes_it_current(app, app_db):
    app.selectbox(key="newrun.chimera.pred.choice").set_value("chimera/pred_perfect.jsonl")
    app.selectbox(key="newrun.chimera.judge").set_value("exact — case/whitespace-insensitive equality")
    app.text_input(key="newrun.name").set_value("perfect-exact")
    app.button(key="newrun.score").click().run()
    assert not app.exception and not app.error
    stored = [plain(s.value) for s in app.success if "Scored and stored run" in plain(s.value)]
    n_decisions = open_db(app_db).execute("SELECT count(*) FROM decisions d JOIN runs r ON r.id = d.run_id "
                                          "WHERE r.name = 'perfect-exact'").fetchone()[0]
    # said once, after the rerun that made the run current, with its counts (it used to be said twice)
    assert len(stored) == 1 and stored[0].startswith("Scored and stored run perfect-exact (")
    assert f"{n_decisions} decisions" in stored[0]
    assert "perfect-exact" in app.dataframe[0].value["run"].tolist()
    assert app.session_state["current_run"] == "perfect-exact"
    row = open_db(app_db).execute("SELECT n_docs, original_metrics FROM runs WHERE name='perfect-exact'").fetchone()
    import csv
    with open(GOLD, newline="") as f:
        assert row[0] == sum(1 for _ in csv.DictReader(f))
    assert '"f1":1.0' in row[1]


def test_bad_upload_shows_file_line_and_stores_nothing(app, app_db):
    app.selectbox(key="newrun.chimera.pred.choice").set_value("Upload…").run()
    bad = (b'{"paper_id": "2105.13065", "relations": {}}\n{"paper_id": "nope", "relations": {}}\n{oops\n'
           b'{"paper_id": 7, "relations": {}}\n')
    app.get("file_uploader")[0].set_value(("mine.jsonl", bad, "application/json"))
    app.selectbox(key="newrun.chimera.judge").set_value("exact — case/whitespace-insensitive equality")
    before = open_db(app_db).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    app.button(key="newrun.score").click().run()
    text = plain(app.error[0].value)
    assert app.error and text.startswith("Nothing was stored. 3 errors; mine.jsonl:2:")  # every error, no temp path
    assert "unknown paper id 'nope'" in text and "mine.jsonl:3: invalid JSON" in text and "mine.jsonl:4:" in text
    assert open_db(app_db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == before


def test_overview_metrics_outcome_filter_and_judge_requests_in_words(app, app_db):
    at = open_page(app, "overview", run=DEMO)
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert "entity F1 (macro avg)" in labels
    outcomes = Counter(r[0] for r in open_db(app_db).execute(
        "SELECT outcome FROM documents d JOIN runs r ON r.id = d.run_id WHERE r.name = ?", [DEMO]))
    at.multiselect(key="overview.outcomes").set_value(["missed recombination"]).run()
    only = at.dataframe[-1].value
    assert len(only) == outcomes["missed recombination"] > 0
    assert set(only["outcome (audited)"]) == {"missed recombination"}
    words = plain(" ".join(m.value for m in at.markdown))
    assert "distinct judge questions" in words and "paper's scorer" in words
    assert not at.json  # no raw dict on screen


def test_open_abstract_overrule_and_see_audited_f1_change(app, app_db):
    at = open_page(app, "overview", run=DEMO)
    at.selectbox(key="overview.pick").set_value("2105.13065")
    at.button(key="overview.open").click().run()
    at = open_page(at, "document", reviewer="ana", run=DEMO, doc="2105.13065")
    first = open_db(app_db).execute("SELECT MIN(d.id) FROM decisions d JOIN runs r ON r.id = d.run_id "
                                    "WHERE r.name = ? AND d.doc_id = '2105.13065'", [DEMO]).fetchone()[0]
    before = {m.label: m.value for m in at.metric}
    at.text_input(key=f"review.note.{first}").set_value("different ideas")
    at.button(key=f"review.overrule.{first}").click().run()
    assert not at.exception and not at.error
    after = {m.label: m.value for m in at.metric}
    assert after != before
    assert any("vs original" in (m.delta or "") for m in at.metric)
    html = " ".join(h.proto.body for h in at.get("html"))
    assert "ana" in html and "span pair" in html and "entity_pair" not in html
    counts = [df.value for df in at.dataframe if "tp" in df.value.columns]
    assert counts and any("→" in str(v) for v in counts[0]["tp"].tolist() + counts[0]["fp"].tolist()
                          + counts[0]["fn"].tolist())
    at.button(key=f"review.undo.{first}").click().run()
    assert {m.label: m.value for m in at.metric} == before


def test_review_needs_a_name(app):
    at = open_page(app, "document", run=DEMO, doc="2105.13065")
    button = next(b for b in at.button if b.key.startswith("review.overrule."))
    button.click().run()
    assert "reviewer name" in at.error[0].value


def test_one_current_run_is_carried_to_every_page(app, app_db):
    from audit.runs import score_run
    score_run(open_db(app_db), "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="mixed-exact")
    at = open_page(app, "overview")
    at.selectbox(key="sidebar.run").set_value("mixed-exact").run()
    assert at.session_state["current_run"] == "mixed-exact"
    for page in PAGES:
        at.switch_page(f"pages/{page}.py")
        at.query_params.clear()  # a sidebar link carries no query parameters
        at.run()
        assert not at.exception, page
        assert at.selectbox(key="sidebar.run").value == "mixed-exact", page
        assert at.query_params["run"] == ["mixed-exact"] or at.query_params["run"] == "mixed-exact", page
    at = open_page(at, "scores")
    import json
    metrics = json.loads(open_db(app_db).execute("SELECT original_metrics FROM runs WHERE name = 'mixed-exact'")
                         .fetchone()[0])
    shown = {m.label: m.value for m in at.metric}
    assert shown["entity F1 (macro avg)"] == f"{metrics['entities']['avg']['f1']:.4f}"


def test_reviewer_blind_and_adjudicator_come_from_the_url(app_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params.update({"reviewer": "ana", "blind": "1", "adj": "1", "run": DEMO})
    at.run()
    assert at.text_input(key="reviewer").value == "ana"
    assert at.toggle(key="blind").value is True and at.toggle(key="adjudicator").value is True
    at.text_input(key="reviewer").set_value("bo").run()
    at.toggle(key="adjudicator").set_value(False).run()
    assert at.query_params["reviewer"] in ("bo", ["bo"])
    assert "adj" not in at.query_params and at.query_params["blind"] in ("1", ["1"])


def test_hostile_text_is_escaped(app, app_db, tmp_path):
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    pred = write_jsonl(tmp_path / "evil.jsonl", [
        {"paper_id": "2105.13065", "relations": {"combination": [{"comb-element": [evil, "multilingual training"]}]}}])
    from audit.runs import score_run
    score_run(open_db(app_db), "chimera", {"gold": str(GOLD), "pred": str(pred)}, "exact", run="evil")
    at = open_page(app, "document", run="evil", doc="2105.13065")
    assert not at.exception
    bodies = " ".join(h.proto.body for h in at.get("html"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in bodies
    assert "<script>" not in bodies and "<img src=x" not in bodies
    shown = " ".join(c.value for c in at.caption)
    assert "\\<img src\\=x" in shown  # "not found verbatim" caption: Markdown-escaped


def test_unknown_run_and_document_in_links(app):
    at = open_page(app, "document", run="nope", doc="zzz")
    assert not at.exception
    assert any("not in this database" in plain(w.value) for w in at.warning)
    assert any("'zzz' is not in run" in plain(e.value) for e in at.error)
