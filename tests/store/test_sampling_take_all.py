"""A family's declared take-all strata (`sampling_take_all`) in the plan `audit plan` builds (issue 24 leftovers):
CHIMERA's rare-type `inspiration/…` strata and retrieval's high-leverage ones are reviewed whole first.

Invariants on the demo runs: the plan's take-all strata are the family's declaration (plus `invalid`), the plan's
design text and summary name them; the sample queue serves every take-all block before any block of another
stratum, whatever the seed; full review through the queue still gives the scorer exactly with a zero-width interval.
"""

from __future__ import annotations

import json
import random

import pytest

from audit.cli import main
from audit.rescoring import audit_run
from audit.review.reviews import add_review
from audit.review.sampling import create_plan, estimate, load_plan, next_sample, plans
from audit.views import as_view
from scoring.families.chimera.family import ChimeraTask
from scoring.families.retrieval.family import TAIL_STRATA, RetrievalTask
from scoring.stats.sampling import INVALID_STRATUM


def _review_pick(db, run: str, pick: dict, rng: random.Random) -> None:
    for i in pick["decisions"]:
        add_review(db, run, i, rng.choice(["match", "no-match"]), "ana", sampled=True)


@pytest.mark.parametrize("seed", [0, 7])
def test_chimera_plan_takes_its_inspiration_strata_whole_and_serves_them_first(db_with_run, seed):
    db = db_with_run
    summary = create_plan(db, "mixed", seed=seed)
    plan = load_plan(db, "mixed")
    strata = set(plan.strata())
    rare = {h for h in strata if h.startswith("inspiration/")}
    assert rare, "the demo has documents with inspiration entities: the check needs them"
    assert plan.take_all == rare | ({INVALID_STRATUM} & strata)
    assert summary["take_all"] == sorted(plan.take_all)
    assert all(h in summary["design"] for h in rare) and "reviews whole" in summary["design"]
    # the stored plan keeps them (plans() reads the JSON)
    (stored,) = plans(db, "mixed").values()
    assert set(stored["take_all"]) == plan.take_all
    rng = random.Random(seed)
    served = []
    while (pick := next_sample(db, "mixed")) is not None:
        assert (pick["why"] == "take-all") == (pick["stratum"] in plan.take_all)
        served.append(pick["stratum"])
        _review_pick(db, "mixed", pick, rng)
    n_take = sum(1 for b in plan.blocks if b.stratum in plan.take_all)
    assert set(served[:n_take]) <= plan.take_all and not set(served[n_take:]) & plan.take_all
    assert len(served) == len(plan.blocks)
    audited = audit_run(db, "mixed").metrics
    for path, e in estimate(db, "mixed").items():
        section, t, metric = path.split("/")
        assert e["estimate"] == pytest.approx(audited[section][t][metric], abs=1e-12)
        assert e["ci"][1] - e["ci"][0] == pytest.approx(0, abs=1e-12)


def test_cli_plan_prints_the_take_all_strata(db_with_run, capsys):
    db = db_with_run
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    assert main(["plan", "--db", path, "--run", "mixed", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    for h in load_plan(db, "mixed").take_all:
        assert h in out


def test_a_family_without_a_declaration_takes_only_invalid(db_with_run, monkeypatch):
    """The declaration is what changes the plan: without it (the default), only `invalid` is take-all."""
    monkeypatch.setattr(ChimeraTask, "sampling_take_all", lambda self, strata: set())
    create_plan(db_with_run, "mixed", seed=1)
    plan = load_plan(db_with_run, "mixed")
    assert plan.take_all <= {INVALID_STRATUM}
    assert "reviews whole" not in plan.design


def test_retrieval_takes_every_stratum_with_decisions_but_the_tail():
    fam = RetrievalTask()
    with_decisions = {fam.sampling_stratum([{}] * n) for n in range(1, 60)}
    assert set(TAIL_STRATA) <= with_decisions
    assert fam.sampling_take_all(with_decisions) == with_decisions - set(TAIL_STRATA)
    assert fam.sampling_take_all([*TAIL_STRATA, fam.sampling_stratum([])]) == set()


def test_a_stored_plan_without_declared_strata_still_serves(db_with_run):
    """Plans stored before the declaration (take_all = invalid only) keep working: the queue reads the plan's own
    take_all, not the family's current declaration."""
    db = db_with_run
    create_plan(db, "mixed", seed=2)
    view = as_view(db, "mixed")
    raw = db.execute("SELECT plan FROM sampling_plans WHERE run_id = ?", [view.id]).fetchone()[0]
    data = json.loads(raw)
    data["take_all"] = [h for h in data["take_all"] if h == INVALID_STRATUM]
    db.execute("UPDATE sampling_plans SET plan = ? WHERE run_id = ?", [json.dumps(data), view.id])
    pick = next_sample(db, "mixed")
    assert pick["why"] != "take-all" or pick["stratum"] == INVALID_STRATUM
