"""The Improve the judge page (issue #37): the CLI's result, shown; the pre-flight's refusal, said (team mode:
tests/auth/test_improve_judge_team.py)."""

from __future__ import annotations

import re

import pytest

from audit.store.database import open_db
from devtools.paraphrase_run import GOLD, write_paraphrase_predictions
from tests.app.conftest import open_page, plain, table
from tests.cli.test_improve_judge import RUN, review_documents

DEMO_IDEATION = "demo-ideation-si2024-humans"


@pytest.fixture
def strict_run(app_db, tmp_path):
    """A fuzzy:95 run of paraphrase predictions beside the demo runs, 25 of its documents reviewed."""
    from audit.runs import score_run

    truth = write_paraphrase_predictions(tmp_path / "pred.jsonl", seed=1)
    db = open_db(app_db)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(tmp_path / "pred.jsonl")}, "fuzzy:95", run=RUN)
    db.conn.close()
    review_documents(app_db, truth, 25)
    return RUN


def _go(at):
    return at.button(key="improve.go").click().run()


def test_the_page_fits_and_shows_the_out_of_sample_result(app, strict_run):
    at = open_page(app, "improve_judge", run=strict_run)
    assert not at.exception
    assert [t.value for t in at.title] == ["Improve the judge"]
    assert at.selectbox(key="improve.strategy").options == ["threshold"]
    shown = " ".join(plain(c.value) for c in at.caption)
    assert "few-shot: applies to LLM judges" in shown and "calibrate: applies to ordinal ratings" in shown
    at = _go(at)
    assert not at.exception
    assert plain(at.success[0].value).startswith("improvement shown")
    labels = {m.label: m.value for m in at.metric}
    assert float(labels["Δκ"]) >= 0.10
    assert any(re.search(r"Judge after.*\s+fuzzy:\d+$", plain(m.value), re.S) for m in at.markdown)  # whole
    assert any(re.search(r"--judge improved:\d+", c.value) for c in at.code)  # score takes it
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # the κ-vs-threshold curve
    wrong = table(at, "open", "human", "before", "after")
    assert wrong["open"].str.startswith("document?").all() and (wrong["before"] == "wrong").sum() > 0
    # who was wrong and the link come before the texts (a whole abstract in `left` pushed them off the page)
    assert list(wrong.columns) == ["doc", "type", "human", "before", "after", "open", "left", "right"]
    assert table(at, "human label", "judge agrees", "n")["n"].sum() > 0
    assert len(at.get("download_button")) == 1


def test_a_judge_that_did_not_improve_is_not_recommended(app):
    """The bundled few-shot result showed no improvement: the page keeps the run's judge and offers no command to
    score with the fitted one; the fitted judge's spec is written out whole (a metric tile cut it)."""
    at = open_page(app, "improve_judge", run="demo-chimera-smollm2-few-shot")
    assert not at.exception
    assert any(plain(w.value).startswith("no improvement shown") for w in at.warning)
    assert not [c for c in at.code if "--judge improved" in c.value]
    shown = " ".join(plain(c.value) for c in at.caption)
    assert re.search(r"Next runs: keep the run's judge \(the fitted one, stored as improved:\d+, showed no "
                     r"improvement\)", shown)
    assert any(plain(m.value).endswith("openai-json:smollm2-135m") for m in at.markdown if "Judge after" in m.value)


def test_the_pre_flight_refusal_is_said_on_the_page(app):
    at = open_page(app, "improve_judge", run=DEMO_IDEATION)
    assert at.selectbox(key="improve.strategy").options == ["calibrate"]
    at = _go(at)
    assert not at.exception
    assert any("human-human agreement is too low" in plain(e.value) for e in at.error)
    assert not at.metric


def test_a_run_no_strategy_fits_says_so(app):
    at = open_page(app, "improve_judge", run="demo-chimera-mixed")
    assert not at.exception
    assert any("No strategy applies" in plain(i.value) for i in at.info)


def test_a_judge_improved_on_withdrawn_reviews_is_shown_stale(app, app_db, strict_run, tmp_path):
    from audit.outputs.improve_judge import improve_judge
    from audit.review.reviews import add_review
    from audit.runs import score_run

    db = open_db(app_db)
    after = improve_judge(db, strict_run, "threshold", n_resamples=50)["judge_after"]
    pred = tmp_path / "pred.jsonl"  # written by the strict_run fixture
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(pred)}, after["spec"], run="improved",
              learnt_from=after["learnt_from"])
    at = open_page(app, "improve_judge", run="improved")
    assert any("learnt from" in plain(i.value) for i in at.info)
    add_review(db, strict_run, after["learnt_from"]["decisions"][0], None, "ann")
    db.conn.close()
    at = open_page(app, "improve_judge", run="improved")
    assert not at.exception
    assert any("it is stale, improve it again" in plain(w.value) for w in at.warning)


def test_calibrate_shows_its_maps_and_claims_nothing_on_the_ideation_demo(app):
    at = open_page(app, "improve_judge", run=DEMO_IDEATION)
    at.number_input(key="improve.min_alpha").set_value(0.0)
    at = _go(at)
    assert not at.exception
    assert plain(at.warning[0].value).startswith("no improvement shown")
    said = " ".join(plain(m.value) for m in (*at.markdown, *at.caption))
    assert "its ratings mapped through the fitted calibration" in said  # not the bare "file"
    assert "keep the run's ratings as they are (the calibration fitted" in said and "improved:" not in said
    maps = table(at, "effectiveness", "feasibility", "novelty")
    assert len(maps) == 5
    assert not at.get("arrow_vega_lite_chart") and not at.get("vega_lite_chart")


def test_a_stored_result_shows_again_in_a_new_session_with_the_same_folds(app, strict_run, app_db):
    from audit.store.improvements import stored_improvements
    from audit.views import load_view

    at = _go(open_page(app, "improve_judge", run=strict_run))
    assert not at.exception
    db = open_db(app_db)
    kept = stored_improvements(db, load_view(db, strict_run).id)
    db.conn.close()
    assert len(kept) == 1
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()  # a new session: nothing fitted in it
    again = open_page(fresh, "improve_judge", run=strict_run)
    assert not again.exception
    assert any(plain(i.value).startswith(f"The last stored result (#{kept[0]['id']}") for i in again.info), [
        plain(i.value) for i in again.info]
    assert {m.label: m.value for m in again.metric} == {m.label: m.value for m in at.metric}
    # the stored result names itself as the fit did: the same next step in both sessions
    assert kept[0]["result"]["stored_as"] == kept[0]["id"]
    assert [c.value for c in again.code] == [c.value for c in at.code]
    assert [plain(c.value) for c in again.caption if "Next runs" in c.value] == \
        [plain(c.value) for c in at.caption if "Next runs" in c.value]


def test_the_bundled_improved_demo_run_fills_the_page_without_a_server(app, monkeypatch):
    """The demo's few-shot improvement of the SmolLM2 judge was measured against the real server and is bundled
    (data/chimera/improve_smollm2_few-shot.json): the page shows it with no server to ask."""
    import json

    from tests.conftest import ROOT

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    bundled = json.loads((ROOT / "data/chimera/improve_smollm2_few-shot.json").read_text())
    at = open_page(app, "improve_judge", run="demo-chimera-smollm2-few-shot")
    assert not at.exception
    assert any("measured against the real SmolLM2 server" in plain(i.value) for i in at.info)
    labels = {m.label: m.value for m in at.metric}
    assert labels["κ before"] == f"{bundled['evaluation']['kappa_before']:.3f}"
    assert labels["Δκ"] == f"{bundled['evaluation']['delta_kappa']:+.3f}"
    assert any("Few-shot: each question is shown the" in plain(c.value) for c in at.caption)
