"""The Agreement page under `audit.outputs.agreement_rule`: an undefined κ is said in words and not drawn, ordinal
ratings
show quadratic-weighted κ, α says its level, and the "why" notes use plain words."""

import pyarrow as pa
import pytest

from audit.demo import demo_runs
from audit.outputs.agreement import agreement
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import decisions, load_view
from tests.app.conftest import open_page, plain, table

LITX = "demo-litxbench-drop-meas30"
IDEATION = "demo-ideation-si2024-humans"
INTERNAL_NAMES = ("judge_tpr", "judge_tnr", "kappa_ci", "rows rater", "columns rater", "weighted_kappa")


def chart_values(at) -> list[float]:
    out = []
    for chart in at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart"):
        for ds in chart.proto.datasets:
            frame = pa.ipc.open_stream(ds.data.data).read_all().to_pandas()
            if "value" in frame.columns:
                out += [v for v in frame["value"].tolist() if v == v]
    return out


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_one_label_judge_is_undefined_in_words_and_not_drawn(app, app_db):
    db = open_db(app_db)
    picked = [d for d in decisions(db, LITX) if d["kind"] == "material_pair" and d["judge"] == "match"][:3]
    for d, lab in zip(picked, ("match", "match", "no-match"), strict=True):
        add_review(db, LITX, d["id"], lab, "ana")
    at = open_page(app, "agreement", run=LITX)
    assert not at.exception
    hvj = table(at, "group", "statistic", "value [95%]")
    assert set(hvj["value [95%]"]) == {"undefined (see note)"}
    assert not any(v.startswith("0.000") for v in hvj["value [95%]"])
    text = captions(at)
    assert "the judge said only “match”" in text and "few reviews" not in text  # undefined: no warning needed
    assert not any(name in text for name in INTERNAL_NAMES)
    assert 0.0 not in chart_values(at)


def test_ideation_shows_weighted_kappa_and_ordinal_alpha(app, app_db):
    at = open_page(app, "agreement", run=IDEATION)
    assert not at.exception
    expected = agreement(open_db(app_db), IDEATION)["human_vs_judge"]
    hvj = table(at, "group", "statistic", "value [95%]")
    ratings = hvj[hvj["group"].str.contains("rating", case=False)]
    assert len(ratings) and set(ratings["statistic"]) == {"quadratic-weighted κ"}
    shown = hvj.loc[hvj["group"] == "all decisions", "value [95%]"].item()
    assert shown.startswith(f"{expected['all']['weighted_kappa']:.3f}")
    alpha = table(at, "level", "Krippendorff's α")
    assert set(alpha["level"]) == {"ordinal"} and len(alpha) == 3
    assert expected["rating"]["weighted_kappa"] in chart_values(at)  # the chart plots the weighted κ


def test_the_alternative_annotator_test_is_shown_as_agreement_computes_it(app, app_db):
    at = open_page(app, "agreement", run=IDEATION)
    assert not at.exception
    expected = agreement(open_db(app_db), IDEATION)["alt_test"]["rating"]
    text = " ".join(plain(m.value) for m in at.markdown)
    assert f"ω = {expected['winning_rate']:.2f}" in text and f"ε = {expected['epsilon']:g}" in text
    assert ("the judge passes" in text) == bool(expected["passes"])
    shown = table(at, "left-out human", "decisions", "judge wins")
    assert list(shown["left-out human"]) == [a["annotator"] for a in expected["annotators"]]
    assert list(shown["judge wins"]) == ["yes" if a["judge_wins"] else "no" for a in expected["annotators"]]
    assert "recommends at least 3" in plain(captions(at))


@pytest.mark.parametrize("run", [d.name for _, d in demo_runs()])
def test_no_internal_name_on_any_agreement_page(app, app_db, run):
    """Every family's Agreement page, with two reviewers who agree with the judge on some decisions and overrule it
    on others: no table cell, caption or note uses an internal name (`judge_tpr`, `kappa_ci needs…`)."""
    db = open_db(app_db)
    view = load_view(db, run)
    for i, d in enumerate(view.decisions()[:24]):
        labels = view.task.label_schemes[d["kind"]].labels
        same = d["judge"] if d["judge"] in labels else labels[0]
        other = next(lab for lab in labels if lab != same)
        add_review(db, run, d["id"], same if i % 3 else other, "ana")
        add_review(db, run, d["id"], same if i % 4 else other, "ben")
    at = open_page(app, "agreement", run=run)
    assert not at.exception
    texts = [plain(e.value) for e in (*at.caption, *at.markdown, *at.info, *at.warning)]
    for frame in (df.value for df in at.dataframe):
        texts += [str(c) for c in frame.columns]
        texts += [v for col in frame.columns for v in frame[col].tolist() if isinstance(v, str)]
    assert texts
    found = [(name, t) for t in texts for name in INTERNAL_NAMES if name in t]
    assert found == []


def test_few_reviews_warn_on_the_page_and_say_where_the_minimum_comes_from(app, app_db):
    from audit.outputs.agreement_rule import MIN_DECISIONS, MIN_DOCUMENTS, MINIMUM_SOURCE

    db = open_db(app_db)
    decs = [d for d in decisions(db, LITX) if d["kind"] == "material_pair"]
    picked = [d for d in decs if d["judge"] == "match"][:3] + [d for d in decs if d["judge"] == "no-match"][:3]
    for d in picked:
        add_review(db, LITX, d["id"], d["judge"], "ana")
    at = open_page(app, "agreement", run=LITX)
    assert not at.exception
    text = plain(captions(at))
    assert "few reviews: 6 decisions (fewer than" in text
    assert f"fewer than {MIN_DECISIONS} decisions or {MIN_DOCUMENTS} documents" in text and MINIMUM_SOURCE in text
    hvj = table(at, "group", "statistic", "value [95%]")
    assert hvj.loc[hvj["group"] == "all decisions", "value [95%]"].item().startswith("1.000")  # shown, with a warning


def test_a_raw_agreement_interval_that_is_no_document_bootstrap_is_marked_and_said(app, app_db):
    """A group of one document has no document bootstrap: its raw agreement showed a Wilson interval (1.000 [0.207,
    1.000]) under a caption speaking of document-bootstrap intervals. The cell and a note now say Wilson; the groups
    of several documents keep their bootstrap interval, unmarked."""
    db = open_db(app_db)
    run = "demo-chimera-mixed"
    task = load_view(db, run).task
    every = decisions(db, run)
    trivial = next(d for d in every if task.trivial(d))
    others = [d for d in every if not task.trivial(d) and d["doc"] != trivial["doc"]][:12]
    for d in [trivial, *others]:
        add_review(db, run, d["id"], d["judge"], "ana")
    at = open_page(app, "agreement", run=run)
    assert not at.exception
    hvj = table(at, "group", "raw agreement", "documents").set_index("group")
    assert hvj.loc["trivial decisions", "raw agreement"].endswith("] Wilson")
    assert not hvj.loc["non-trivial decisions", "raw agreement"].endswith("] Wilson")
    assert "raw agreement's interval: Wilson, decisions independent: no document bootstrap" in plain(captions(at))
