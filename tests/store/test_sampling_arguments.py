"""Issue 27: `queue --half-width` and `plan --seed` refuse what they cannot mean with one clear line, and a review is
recorded as a sample draw only for the document the sample queue serves (no plan, a hand-picked block, a block
reviewed by hand: refused, nothing stored)."""

from __future__ import annotations

import json

import pytest

from audit.cli import main
from audit.errors import AuditError
from audit.review.reviews import add_review
from audit.review.sampling import create_plan, estimate, load_plan, next_sample


def reviews(db) -> list[tuple]:
    return db.execute("SELECT decision_id, label, sampled FROM reviews ORDER BY id").fetchall()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "1e308", "1.5"])
def test_queue_refuses_a_half_width_it_cannot_mean(db_with_run, db_path, capsys, value):
    create_plan(db_with_run, "mixed", seed=1)
    assert main(["queue", "--db", str(db_path), "--run", "mixed", f"--half-width={value}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --half-width must be a number above 0 and at most 1"), err


def test_queue_takes_a_half_width_in_range(db_with_run, db_path, capsys):
    create_plan(db_with_run, "mixed", seed=1)
    assert main(["queue", "--db", str(db_path), "--run", "mixed", "--half-width", "0.05"]) == 0
    assert json.loads(capsys.readouterr().out)["target_half_width"] == 0.05


@pytest.mark.parametrize("seed", [str(2**70), str(2**63), "-1"])
def test_plan_refuses_a_seed_sqlite_cannot_store(db_with_run, db_path, capsys, seed):
    assert main(["plan", "--db", str(db_path), "--run", "mixed", "--seed", seed]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --seed must be a whole number from 0 to"), err
    assert load_plan(db_with_run, "mixed") is None


def test_plan_takes_the_largest_seed(db_with_run, db_path):
    assert main(["plan", "--db", str(db_path), "--run", "mixed", "--seed", str(2**63 - 1)]) == 0
    assert load_plan(db_with_run, "mixed").seed == 2**63 - 1


def test_review_sampled_without_a_plan_is_refused(db_with_run, db_path, capsys):
    assert main(["review", "--db", str(db_path), "--run", "mixed", "--decision", "1", "--label", "match",
                 "--reviewer", "ana", "--sampled"]) == 2
    assert "has no sampling plan, so no review is a sample draw" in capsys.readouterr().err
    assert reviews(db_with_run) == []


def test_only_the_queues_own_suggestion_is_recorded_as_a_draw(db_with_run):
    create_plan(db_with_run, "mixed", seed=2)
    served = next_sample(db_with_run, "mixed")
    plan = load_plan(db_with_run, "mixed")
    later = next(b for b in reversed(plan.blocks) if b.stratum == served["stratum"] and b.id != served["doc"])
    with pytest.raises(AuditError, match="is not what the sample queue serves"):
        add_review(db_with_run, "mixed", int(later.units[0]), "match", "ana", sampled=True)
    assert reviews(db_with_run) == []
    for dec in served["decisions"]:
        add_review(db_with_run, "mixed", dec, "match", "ana", sampled=True)
    add_review(db_with_run, "mixed", served["decisions"][0], "no-match", "bo", sampled=True)  # a block served already
    assert [r[2] for r in reviews(db_with_run)] == [1] * (len(served["decisions"]) + 1)


def test_a_block_reviewed_by_hand_never_becomes_a_draw(db_with_run):
    create_plan(db_with_run, "mixed", seed=2)
    served = next_sample(db_with_run, "mixed")
    for dec in served["decisions"]:
        add_review(db_with_run, "mixed", dec, "no-match", "ana")  # by hand: an exactly known block
    before = reviews(db_with_run)
    known = {k: v["n_documents_known"] for k, v in estimate(db_with_run, "mixed").items()}
    with pytest.raises(AuditError, match="was reviewed by hand, so it is no sample draw"):
        add_review(db_with_run, "mixed", served["decisions"][0], "match", "bo", sampled=True)
    assert reviews(db_with_run) == before
    assert {k: v["n_documents_known"] for k, v in estimate(db_with_run, "mixed").items()} == known
    assert all(v["n_documents_sampled"] == 0 for v in estimate(db_with_run, "mixed").values())


def test_a_rating_metric_takes_a_half_width_on_its_own_scale(demo_template, tmp_path, capsys):
    """Ideation's headline is a mean rating on 1-5: ±2 is a target it can mean (it was refused as "a proportion"),
    more than the scale's span (4) is not."""
    from tests.conftest import copy_of

    db = copy_of(demo_template, tmp_path / "d.db")
    run = "demo-ideation-si2024-humans"
    assert main(["plan", "--db", str(db), "--run", run, "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(["queue", "--db", str(db), "--run", run, "--half-width", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["target_half_width"] == 2
    assert main(["queue", "--db", str(db), "--run", run, "--half-width", "4.5"]) == 2
    err = capsys.readouterr().err
    assert "at most 4 (" in err and "it lies in [1, 5]" in err, err


def test_queue_and_estimate_name_the_plan_of_the_kind_they_lack(db_with_run, db_path, capsys):
    """With a plan over all kinds only, `queue --kind entity_pair` said "no sampling plan; create one with plan --run
    mixed --kind entity_pair": a second plan whose draws the first would share (a draw is recorded per decision).
    Now it says the plan covers the kind; without any plan it names the command; an unknown kind is unknown."""
    for command in ("queue", "estimate"):
        assert main([command, "--db", str(db_path), "--run", "mixed", "--kind", "entity_pair"]) == 2
        err = capsys.readouterr().err
        assert "no sampling plan for decision kind entity_pair; create one with `python -m audit plan --run mixed " \
               "--kind entity_pair`" in err, err
    create_plan(db_with_run, "mixed", seed=1)
    for command in ("queue", "estimate"):
        assert main([command, "--db", str(db_path), "--run", "mixed", "--kind", "entity_pair"]) == 2
        err = capsys.readouterr().err
        assert "one sampling plan for every decision kind, which covers entity_pair: leave out --kind" in err, err
        assert main([command, "--db", str(db_path), "--run", "mixed", "--kind", "foo"]) == 2
        assert "unknown decision kind 'foo'; chimera has " in capsys.readouterr().err
    assert main(["plan", "--db", str(db_path), "--run", "mixed", "--kind", "entity_pair", "--seed", "1"]) == 2
    assert "covers this kind too" in capsys.readouterr().err
    assert main(["queue", "--db", str(db_path), "--run", "mixed"]) == 0


def test_a_plan_is_refused_beside_another_scope_or_after_sample_draws(db_with_run):
    """A per-kind plan made after an all-kinds plan's draws counted them as its own random sample (the helper's
    ideation run: 33 documents drawn under other strata and order). One scope per run (a sampled review without a
    plan of its scope cannot be made: `review --sampled` and `import-reviews` both need one)."""
    create_plan(db_with_run, "mixed", kind="entity_pair", seed=2)
    with pytest.raises(AuditError, match="a plan of every kind would take its draws as its own"):
        create_plan(db_with_run, "mixed", seed=2)
    with pytest.raises(AuditError, match="already has a sampling plan for entity_pair"):
        create_plan(db_with_run, "mixed", kind="entity_pair", seed=3)
