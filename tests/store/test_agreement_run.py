"""Agreement over a run's stored reviews (the numbers behind `python -m audit agreement`)."""

import json

from audit.cli import main
from audit.outputs.agreement import agreement
from audit.review.reviews import add_review
from audit.views import decisions


def test_one_reviewer_pairs_with_the_judge(db_with_run):
    decs = [d for d in decisions(db_with_run, "mixed") if d["judge"] != "invalid"][:10]
    for i, d in enumerate(decs):
        flip = {"match": "no-match", "no-match": "match"}[d["judge"]]
        add_review(db_with_run, "mixed", d["id"], flip if i < 3 else d["judge"], "ana")
    a = agreement(db_with_run, "mixed", n_resamples=200)
    hvj = a["human_vs_judge"]
    assert hvj["all"]["n"] == 10 and hvj["all"]["raw_agreement"] == 0.7
    assert "entity_pair" in hvj and any(k.startswith("entity_pair/") for k in hvj)
    assert a["human_vs_human"]["pairs"] == {} and a["reviewers"] == ["ana"]
    trivial = sum(d["left"] == d["right"] for d in decs)
    if 0 < trivial < 10:
        assert hvj["trivial"]["n"] == trivial and hvj["non-trivial"]["n"] == 10 - trivial


def test_two_reviewers_one_unit_per_decision_and_alpha(db_with_run, db_path, capsys):
    decs = [d for d in decisions(db_with_run, "mixed") if d["judge"] != "invalid"][:8]
    for i, d in enumerate(decs):
        add_review(db_with_run, "mixed", d["id"], "match", "ana")
        add_review(db_with_run, "mixed", d["id"], "match" if i % 4 else "no-match", "bo")
    assert main(["agreement", "--db", str(db_path), "--run", "mixed"]) == 0
    out = json.loads(capsys.readouterr().out)
    pair = out["human_vs_human"]["pairs"]["ana vs bo"]
    assert pair["n"] == 8 and pair["raw_agreement"] == 0.75
    assert out["human_vs_human"]["alpha"]["n_pairable_units"] == 8
    hvj = out["human_vs_judge"]["all"]
    assert set(hvj) >= {"n", "n_clusters", "raw_agreement", "raw_agreement_cluster_ci", "kappa", "kappa_ci", "pabak",
                        "ac1", "confusion", "degenerate"}
    assert hvj["n"] == 6 and out["excluded_conflicted"] == 2  # one unit per decision; the 2 conflicts left out


def test_blind_reviews_are_used_when_any_exist(db_with_run):
    decs = [d for d in decisions(db_with_run, "mixed") if d["judge"] != "invalid"][:6]
    for d in decs[:4]:
        add_review(db_with_run, "mixed", d["id"], d["judge"], "ana")  # sighted: anchored on the judge
    for d in decs[4:]:
        add_review(db_with_run, "mixed", d["id"], d["judge"], "bo", blind=True)
    a = agreement(db_with_run, "mixed", n_resamples=0)
    assert a["reviews_used"] == "blind" and a["human_vs_judge"]["all"]["n"] == 2
    assert agreement(db_with_run, "mixed", n_resamples=0, reviews="all")["human_vs_judge"]["all"]["n"] == 6


def test_a_one_label_table_says_so_instead_of_kappa_zero(db_with_run):
    decs = [d for d in decisions(db_with_run, "mixed") if d["judge"] == "match"][:6]
    for i, d in enumerate(decs):
        add_review(db_with_run, "mixed", d["id"], "no-match" if i < 2 else "match", "ana")
    hvj = agreement(db_with_run, "mixed", n_resamples=200)["human_vs_judge"]["all"]
    assert hvj["degenerate"] and "only 'match'" in hvj["degenerate"]


def test_a_two_one_split_is_a_unit_under_majority_and_left_out_under_unanimous(db_with_run):
    decs = [d for d in decisions(db_with_run, "mixed") if d["judge"] != "invalid"][:5]
    for d in decs:
        for who, lab in (("ana", "no-match"), ("bo", "no-match"), ("cy", "match")):
            add_review(db_with_run, "mixed", d["id"], lab, who)
    unanimous = agreement(db_with_run, "mixed", n_resamples=0)
    majority = agreement(db_with_run, "mixed", n_resamples=0, policy="majority")
    assert unanimous["excluded_conflicted"] == 5 and list(unanimous["human_vs_judge"]) == ["all"]
    left_out = unanimous["human_vs_judge"]["all"]
    assert left_out["n"] == 0 and left_out["kappa"] is None and left_out["headline"]["value"] is None
    assert left_out["kappa_undefined"] == left_out["headline"]["undefined"]
    assert "every reviewed decision is left out: 5 conflicted" in left_out["kappa_undefined"]
    assert majority["excluded_conflicted"] == 0 and majority["human_vs_judge"]["all"]["n"] == 5
    assert majority["human_vs_judge"]["all"]["confusion"] and majority["effective_label_policy"] == "majority"
    assert majority["human_vs_human"] == unanimous["human_vs_human"]  # reviewer pairs know no policy


def test_nothing_reviewed_is_null_with_its_reason_as_the_readme_says(db_with_run):
    """README: when nothing was reviewed, κ is undefined and JSON has null with an `undefined` reason (not `{}`)."""
    result = agreement(db_with_run, "mixed", n_resamples=0)
    assert list(result["human_vs_judge"]) == ["all"]
    nothing = result["human_vs_judge"]["all"]
    assert nothing["n"] == 0 and nothing["kappa"] is None and nothing["raw_agreement"] is None
    assert nothing["kappa_undefined"] == "no decisions reviewed yet" == nothing["headline"]["undefined"]
    assert nothing["headline"]["value"] is None
