"""AppTest walks through every page: demo, new run, overview, abstract review with an overrule."""

from audit.store import open_db
from tests.app.conftest import open_page
from tests.conftest import GOLD, write_jsonl

DEMO = "demo-chimera-mixed"


def test_runs_page_lists_the_demo_run(app):
    assert app.title[0].value.startswith("Rejudge")
    table = app.dataframe[0].value
    assert DEMO in table["run"].tolist()


def test_score_a_new_run_from_the_form(app, app_db):
    app.selectbox(key="newrun.pred.choice").set_value("pred_perfect.jsonl (gold spans as predictions)")
    app.selectbox(key="newrun.judge").set_value("exact — case/whitespace-insensitive equality")
    app.text_input(key="newrun.name").set_value("perfect-exact")
    app.button(key="newrun.score").click().run()
    assert not app.exception and not app.error
    assert "perfect-exact" in app.success[0].value
    log = app_db.parent / "perfect-exact.judge.jsonl"  # every run writes its judge log beside the database
    assert len(log.read_text().splitlines()) == 444
    row = open_db(app_db).execute("SELECT n_docs, original_metrics FROM runs WHERE name='perfect-exact'").fetchone()
    assert row[0] == 216 and '"f1":1.0' in row[1]


def test_bad_upload_shows_file_line_and_stores_nothing(app, app_db, tmp_path):
    app.selectbox(key="newrun.pred.choice").set_value("Upload a file…").run()
    bad = b'{"paper_id": "2105.13065", "relations": {}}\n{"paper_id": "nope", "relations": {}}\n'
    app.get("file_uploader")[0].set_value(("mine.jsonl", bad, "application/json"))
    app.selectbox(key="newrun.judge").set_value("exact — case/whitespace-insensitive equality")
    app.button(key="newrun.score").click().run()
    assert app.error and "mine.jsonl:2: unknown paper id 'nope'" in app.error[0].value
    assert "Nothing was stored" in app.error[0].value
    assert app.error[0].value.startswith("Nothing was stored. mine.jsonl:2:")  # not our temporary path
    assert open_db(app_db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


def test_overview_metrics_and_outcome_filter(app):
    at = open_page(app, "overview", run=DEMO)
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert any("Entity extraction" in x for x in labels)
    docs = at.dataframe[-1].value
    assert set(docs["outcome (audited)"]) <= {"perfect", "partial", "missed recombination", "false alarm",
                                               "type mismatch"}
    at.multiselect(key="overview.outcomes").set_value(["missed recombination"]).run()
    only = at.dataframe[-1].value
    assert len(only) == 22 and set(only["outcome (audited)"]) == {"missed recombination"}


def test_open_abstract_overrule_and_see_audited_f1_change(app):
    at = open_page(app, "overview", run=DEMO)
    at.selectbox(key="overview.pick").set_value("2105.13065")
    at.button(key="overview.open").click().run()
    assert at.title[0].value == "Abstract review"
    assert at.selectbox(key="document.doc").value == "2105.13065"
    at = open_page(at, "document", reviewer="ana", run=DEMO, doc="2105.13065")  # AppTest forgets switch_page
    before = {m.label: m.value for m in at.metric}
    confirm, overrule = at.button(key="review.confirm.1"), at.button(key="review.overrule.1")
    assert confirm.label == "✓ Confirm match" and overrule.label == "✗ Overrule → no-match"
    at.text_input(key="review.note.1").set_value("different ideas")
    overrule.click().run()
    assert not at.exception and not at.error
    after = {m.label: m.value for m in at.metric}
    key = next(k for k in before if "Entity extraction" in k)
    assert float(after[key]) < float(before[key])
    assert "vs original" in next(m.delta for m in at.metric if m.label == key)
    html = " ".join(h.proto.body for h in at.get("html"))
    assert "ana" in html and "human" in html
    at.button(key="review.undo.1").click().run()
    assert {m.label: m.value for m in at.metric} == before


def test_review_needs_a_name(app):
    at = open_page(app, "document", run=DEMO, doc="2105.13065")
    at.button(key="review.overrule.1").click().run()
    assert "reviewer name" in at.error[0].value


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


def test_unknown_run_and_document_in_links(app):
    at = open_page(app, "document", run="nope", doc="zzz")
    assert not at.exception
    assert any("not in this database" in w.value for w in at.warning)
    assert any("'zzz' is not in run" in e.value for e in at.error)


def test_openai_judge_from_the_form_with_typed_endpoint_and_key(app, app_db, monkeypatch):
    from tests.judge_server import JudgeServer

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    secret = "sk-typed-in-the-dashboard-0123456789"
    with JudgeServer(api_key=secret) as srv:
        app.selectbox(key="newrun.pred.choice").set_value("pred_perfect.jsonl (gold spans as predictions)")
        app.selectbox(key="newrun.judge").set_value("openai:MODEL — any OpenAI-compatible endpoint")
        app.run()
        app.text_input(key="newrun.model").set_value("local-model")
        app.text_input(key="newrun.base_url").set_value(srv.base_url)
        app.text_input(key="newrun.api_key").set_value(secret)
        app.text_input(key="newrun.name").set_value("llm")
        app.button(key="newrun.score").click().run()
        assert not app.exception and not app.error, [e.value for e in app.error]
        assert srv.answered == 444  # distinct ordered span pairs of the perfect prediction
        assert all(h == f"Bearer {secret}" for h in srv.auth_headers)
    db = open_db(app_db)
    assert db.execute("SELECT judge_spec FROM runs WHERE name = 'llm'").fetchone()[0] == "openai:local-model"
    at = open_page(app, "overview", run="llm")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Judge requests sent"] == "444"
    assert metrics["Estimated cost"] == "—"  # no price for a local model
    assert metrics["Tokens (prompt / completion)"].split(" / ")[0] != "0"
    for suffix in ("", "-wal"):
        path = app_db.parent / (app_db.name + suffix)
        if path.exists():
            assert secret.encode() not in path.read_bytes()
