"""The Report page: the same HTML the CLI writes, shown in the page and offered as a one-click download."""

from __future__ import annotations

import json
import re

import pytest

from tests.app.conftest import open_page

DEMO_IDEATION = "demo-ideation-si2024-humans"


def test_report_page_shows_and_offers_the_report(app):
    at = open_page(app, "report", run=DEMO_IDEATION)
    assert not at.exception
    assert [t.value for t in at.title] == ["Audit report"]
    buttons = at.get("download_button")
    assert len(buttons) == 1 and "Download the report" in buttons[0].proto.label
    frames = at.get("iframe")
    assert len(frames) == 1
    page = frames[0].proto.srcdoc
    data = json.loads(re.search(r'id="rejudge-data">(.*?)</script>', page, re.S).group(1))
    assert data["run"] == DEMO_IDEATION and data["figures"]
    assert any(f"{len(data['figures'])} figures" in c.value for c in at.caption)


def test_report_page_is_hidden_while_reviewing_blind(app):
    app.session_state["blind_mode"] = True
    at = open_page(app, "report", reviewer="ana", run=DEMO_IDEATION)
    assert not at.exception
    assert not at.get("download_button")
    assert any("hidden while you review blind" in i.value for i in at.info)


# ---------------------------------------------------------------- the pages draw the report's charts


def chart_rows(element) -> list[tuple]:
    """Every inline data row of a chart on the page (Streamlit moves the spec's datasets into the proto, as Arrow),
    normalised for comparison: NaN as None, floats to 12 digits, one sorted tuple per row."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    spec = json.loads(element.proto.spec)
    rows = [r for values in spec.get("datasets", {}).values() for r in values]
    for d in element.proto.datasets:
        rows += convert_arrow_bytes_to_pandas_df(d.data.data).to_dict("records")
    return normalised(rows)


def normalised(rows: list[dict]) -> list[tuple]:
    import math

    def value(v: object) -> object:
        if isinstance(v, float):
            return None if math.isnan(v) else round(v, 12)
        return v.item() if hasattr(v, "item") else v

    return sorted((tuple(sorted((k, value(v)) for k, v in r.items())) for r in rows), key=repr)


def report_rows(spec: dict) -> list[tuple]:
    return normalised([r for values in spec.get("datasets", {}).values() for r in values])


def sample_some_blocks(app_db, run: str) -> None:
    from audit.review.sampling import create_plan, plans
    from audit.store.database import open_db
    from tests.report.test_sampled_report import blocks_to_every_stratum, review_sampled_blocks

    db = open_db(app_db)
    create_plan(db, run, seed=3)
    (plan,) = plans(db, run).values()
    review_sampled_blocks(db, run, blocks_to_every_stratum(plan))
    db.conn.close()


@pytest.mark.parametrize("run,sampled", [(DEMO_IDEATION, False), ("demo-chimera-mixed", True)])
def test_scores_and_agreement_pages_draw_the_reports_charts_from_the_same_data(app, app_db, run, sampled):
    from audit.outputs.report import build_report
    from audit.store.database import open_db
    from audit.views import load_view

    if sampled:
        sample_some_blocks(app_db, run)
    db = open_db(app_db)
    figs = {f.name: f.spec for f in build_report(load_view(db, run)).figures}
    db.conn.close()
    assert {"headline", "bias", "agreement"} <= set(figs)
    if sampled:
        assert ("series", "estimated") in {cell for r in report_rows(figs["headline"]) for cell in r}

    scores = open_page(app, "scores", run=run).get("vega_lite_chart")
    per_type = [n for n in figs if n.startswith("per-type-")]
    want = [report_rows(figs[n]) for n in ("headline", "bias", *per_type)]
    assert [chart_rows(c) for c in scores] == want

    agreement = open_page(app, "agreement", run=run)
    assert not agreement.exception
    assert chart_rows(agreement.get("vega_lite_chart")[0]) == report_rows(figs["agreement"])


@pytest.mark.parametrize("policy", ["unanimous", "majority"])
def test_the_command_the_page_names_writes_the_report_of_its_policy(app, app_db, tmp_path, monkeypatch, policy):
    """Under the majority policy the page named `report --run … --out …`, which writes the unanimous report."""
    import shlex

    from audit.cli import main

    app.session_state["effective_policy"] = policy  # as the Scores page's choice sets it
    at = open_page(app, "report", run=DEMO_IDEATION)
    assert not at.exception
    page = json.loads(re.search(r'id="rejudge-data">(.*?)</script>', at.get("iframe")[0].proto.srcdoc, re.S).group(1))
    [code] = [c.value for c in at.code]
    argv = shlex.split(code)
    assert argv[:4] == ["python", "-m", "audit", "report"] and ("--policy" in argv) == (policy != "unanimous")
    monkeypatch.chdir(tmp_path)
    assert main(["--db", str(app_db), *argv[3:]]) in (0, None)
    written = (tmp_path / argv[argv.index("--out") + 1]).read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="rejudge-data">(.*?)</script>', written, re.S).group(1))
    said = [d["export"]["effective_label_policy"]["name"] for d in (data, page)]
    assert said == [policy, policy]
