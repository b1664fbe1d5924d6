"""The alternative annotator test on a run's reviews, through `agreement` (CLI JSON and the JSON export read it)."""

from __future__ import annotations

import pytest

from audit.cli import main
from audit.effective import current_labels
from audit.outputs.agreement import agreement
from audit.outputs.alt_test import alt_test_of_run
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import as_view
from scoring.stats.alt_test import alt_test
from tests.conftest import copy_of

RUN = "demo-ideation-si2024-humans"


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory, demo_template):
    return copy_of(demo_template, tmp_path_factory.mktemp("alt") / "demo.db")


def test_the_si2024_reviews_have_a_verdict_stated_with_epsilon(demo_db):
    res = agreement(open_db(demo_db), RUN, n_resamples=50)["alt_test"]["rating"]
    assert res["scoring"] == "neg_rmse" and res["epsilon"] == 0.2
    tested = [a["annotator"] for a in res["annotators"]]
    assert tested == ["si2024 reviewer 2", "si2024 reviewer 3"] and "si2024 reviewer 4" in res["skipped"]
    assert res["winning_rate"] == sum(a["judge_wins"] for a in res["annotators"]) / 2
    assert res["passes"] == (res["winning_rate"] >= 0.5) and res["warning"]


def _independent(db):
    """The test on the reviews agreement uses, read here apart: blind ones (the run has some) and adjudications."""
    view = as_view(db, RUN)
    labels = view.task.label_schemes["rating"].labels
    pos = {x: i for i, x in enumerate(labels)}
    judge, humans = {}, {}
    for dec_id, revs in view.reviews.items():
        row = view.reviewed.rows[dec_id]
        if row["kind"] != "rating" or row["judge_label"] not in pos:
            continue
        own, _ = current_labels([r for r in revs if r["blind"] or r["role"] == "adjudicator"])
        if own:
            judge[dec_id] = pos[row["judge_label"]]
        for who, lab in own.items():
            humans.setdefault(who, {})[dec_id] = pos[lab]
    return alt_test(judge, humans, scoring="neg_rmse").to_json()


def test_run_items_are_the_reviewers_latest_labels_on_the_scale(demo_db):
    """Invariant: the run-level test equals the pure test on {decision: scale position} read independently."""
    db = open_db(demo_db)
    assert alt_test_of_run(db, RUN)["rating"] == _independent(db)


def test_a_later_review_replaces_the_reviewers_earlier_label(demo_db, tmp_path):
    import shutil

    path = tmp_path / "copy.db"
    shutil.copyfile(demo_db, path)
    db = open_db(path)
    view = as_view(db, RUN)
    shared = [(i, r) for i, r in view.reviews.items()
              if view.reviewed.rows[i]["kind"] == "rating" and len({x["reviewer"] for x in r}) >= 2]
    for dec_id, _revs in shared[:20]:  # reviewer 3 now agrees with the judge wherever both reviewed
        add_review(db, RUN, dec_id, view.reviewed.rows[dec_id]["judge_label"], "si2024 reviewer 3", blind=True)
    after = alt_test_of_run(db, RUN)["rating"]
    assert after == _independent(db)
    r3 = next(a for a in after["annotators"] if a["annotator"] == "si2024 reviewer 3")
    assert r3["n_items"] == 126


def test_the_cli_states_and_checks_epsilon(demo_db, capsys):
    assert main(["--db", str(demo_db), "agreement", "--run", RUN, "--epsilon", "0.1"]) in (0, None)
    assert '"epsilon": 0.1' in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["--db", str(demo_db), "agreement", "--run", RUN, "--epsilon", "1.5"])
    assert e.value.code == 2
    assert "--epsilon" in capsys.readouterr().err


def test_sighted_reviews_of_a_blind_run_stay_out_of_the_test_as_they_stay_out_of_agreement(demo_db, tmp_path):
    """The run's reviews are blind: sighted labels (anchored on the judge's answer) by new people are in neither the
    agreement's pairs nor the alternative annotator test (they were tested, or skipped for their few items)."""
    import shutil

    path = tmp_path / "copy.db"
    shutil.copyfile(demo_db, path)
    db = open_db(path)
    before = alt_test_of_run(db, RUN)
    view = as_view(db, RUN)
    rated = [i for i in view.reviews if view.reviewed.rows[i]["kind"] == "rating"][:40]
    for who in ("ana", "bo"):
        for dec_id in rated:
            add_review(db, RUN, dec_id, view.reviewed.rows[dec_id]["judge_label"], who)
    out = agreement(db, RUN, n_resamples=20)
    assert out["reviews_used"] == "blind" and "ana vs bo" not in out["human_vs_human"]["pairs"]
    assert out["alt_test"] == before == alt_test_of_run(db, RUN, reviews="blind")
    sighted = alt_test_of_run(db, RUN, reviews="sighted")["rating"]
    assert {a["annotator"] for a in sighted["annotators"]} | set(sighted["skipped"]) == {"ana", "bo"}
