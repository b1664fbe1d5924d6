"""Agreement groups that pool decision kinds with different labels (ideation's ratings 1–5 and comparisons a / b /
tie; LitXBench's pairs match / no-match and numbers found / not-found) have no chance-corrected statistic: a κ over
the pooled labels counts the kind itself as agreement (the helper's ideation run read κ 0.058 over 8 labels, the
LaTeX caption's first figure). Invariant over random reviews of every family's demo run: a pooled group or
reviewer pair is marked `mixed_labels`, with κ, PABAK and AC1 null, exactly when its kinds' label sets differ."""

from __future__ import annotations

import random

import pytest

from audit.outputs.agreement import UNIT_PER_CALL, UNIT_PER_DECISION, agreement, agreement_rows
from audit.outputs.export import export_latex
from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import as_view
from tests.conftest import copy_of

RUNS = ["demo-chimera-mixed", "demo-ideation-si2024-humans", "demo-litxbench-drop-meas30", "demo-verdicts-inspect",
        "demo-retrieval-bm25"]
POOLED = ("all", "trivial", "non-trivial")


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_template):
    return tmp_path_factory.mktemp("mixed"), demo_template


def _review_at_random(db, run: str, rng: random.Random, n: int = 40) -> None:
    view = as_view(db, run)
    task = view.task
    by_kind: dict[str, list[dict]] = {}
    for d in view.decisions():
        by_kind.setdefault(d["kind"], []).append(d)
    for kind, decs in by_kind.items():  # every kind gets reviews, so pooled groups are there to check
        labels = task.label_schemes[kind].labels
        for d in rng.sample(decs, min(n, len(decs))):
            for who in rng.sample(["ana", "bo", "cy"], rng.randint(1, 2)):
                add_review(db, run, d["id"], rng.choice(labels), who, blind=True)


@pytest.mark.parametrize("run, seed", [(r, 0) for r in RUNS] + [(RUNS[1], 1), (RUNS[2], 1)])
def test_a_group_pooling_different_labels_has_no_chance_corrected_statistic(demo, run, seed):
    folder, template = demo
    db = open_db(copy_of(template, folder / f"{run}-{seed}.db"))
    _review_at_random(db, run, random.Random(seed))
    task = as_view(db, run).task
    out = agreement(db, run, n_resamples=20)
    hvj = out["human_vs_judge"]
    kinds_of = {g: {r for r in task.label_schemes if (hvj.get(r) or {}).get("n")} for g in POOLED}
    labels = {k: tuple(task.label_schemes[k].labels) for k in task.label_schemes}
    checked = 0
    for group, stats in hvj.items():
        if group in POOLED and group != "all":
            continue  # their kinds are not listed apart; `all` is checked, and every pair below
        kinds = kinds_of["all"] if group == "all" else {group.partition("/")[0]}
        mixed = len({labels[k] for k in kinds}) > 1
        assert bool(stats.get("mixed_labels")) == mixed, (run, group, kinds)
        if mixed:
            assert all(stats[k] is None for k in ("kappa", "kappa_ci", "weighted_kappa", "pabak", "ac1"))
            assert stats["headline"]["value"] is None and "labels differ" in stats["headline"]["undefined"]
            assert stats["raw_agreement"] is not None  # the share of equal labels still pools
            checked += 1
    pair_kinds: dict[str, set[str]] = {}
    for r in agreement_rows(db, run)["hvh"]:
        pair_kinds.setdefault(r["pair"], set()).add(r["kind"])
    assert set(pair_kinds) == set(out["human_vs_human"]["pairs"])
    for pair, stats in out["human_vs_human"]["pairs"].items():
        mixed = len({labels[k] for k in pair_kinds[pair]}) > 1
        assert bool(stats.get("mixed_labels")) == mixed, (run, pair)
        assert not mixed or (stats["kappa"] is None and stats["pabak"] is None and stats["ac1"] is None)
    if run in ("demo-ideation-si2024-humans", "demo-litxbench-drop-meas30"):
        assert checked == 1  # the case at stake: `all` pools two label sets
        tex = export_latex(db, run)
        head = next(line for line in tex.splitlines() if "human--judge" in line)
        assert "human--judge Cohen's $\\kappa$ =" not in head.split("(")[0]  # no pooled κ leads the caption
        for kind in kinds_of["all"]:
            assert "({})".format(kind.replace("_", r"\_")) in head
    else:
        assert checked == 0
    comparisons = run == "demo-ideation-si2024-humans"
    assert out["unit"] == (UNIT_PER_CALL if comparisons else UNIT_PER_DECISION)
