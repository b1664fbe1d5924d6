"""Agreement over a run's stored reviews (the numbers behind `python -m audit agreement`)."""

import json

from audit.agreement import agreement
from audit.cli import main
from audit.reviews import add_review
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
    assert a["human_vs_human"] == {} and a["reviewers"] == ["ana"]


def test_two_reviewers_give_human_vs_human_and_cli_prints_it(db_with_run, db_path, capsys):
    decs = list(decisions(db_with_run, "mixed"))[:8]
    for i, d in enumerate(decs):
        add_review(db_with_run, "mixed", d["id"], "match", "ana")
        add_review(db_with_run, "mixed", d["id"], "match" if i % 4 else "no-match", "bo")
    assert main(["agreement", "--db", str(db_path), "--run", "mixed"]) == 0
    out = json.loads(capsys.readouterr().out)
    hvh = out["human_vs_human"]["all"]
    assert hvh["n"] == 8 and hvh["raw_agreement"] == 0.75
    assert set(out["human_vs_judge"]["all"]) >= {"n", "raw_agreement", "kappa", "kappa_ci", "pabak", "ac1", "confusion"}
    assert out["human_vs_judge"]["all"]["n"] == 16
