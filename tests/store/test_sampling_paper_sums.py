"""LitXBench's sample estimators read every paper's counts summed into one (`sampling_counts`, #38): 36 count paths
at any number of papers, instead of 36 per paper (18,000 at 500 papers: a numerical gradient of 36,000 metric
evaluations and an 18,000² covariance). Invariants:

- every headline cell has the same value on the summed counts, at whole and at estimated (fractional) totals;
- its gradient along the summed paths is the per-paper gradient (every paper's count moves a micro sum alike);
- the stratified estimate, its interval and the power-tuned one are the per-paper ones;
- the sample queue serves the same document with the same advice as on per-paper vectors.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from audit.review.count_vectors import flatten, leaf_paths
from audit.review.reviews import add_review
from audit.review.sampling import _blocks_state, create_plan, load_plan, metric_of_totals, next_sample
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import as_view
from scoring.families import get_task
from scoring.families.litxbench.family import ALL_PAPERS, LitXBenchTask
from scoring.families.litxbench.score import LEVELS
from scoring.stats.difference import difference_totals
from scoring.stats.estimators import VARIANCE, metric_estimate, tuned_estimate

DATA = Path(__file__).resolve().parents[2] / "data" / "litxbench"
TASK = get_task("litxbench")


def _paper(rng: random.Random, whole: bool) -> dict:
    def n(lo: int, hi: int) -> float:
        return rng.randint(lo, hi) if whole else rng.uniform(lo, hi)

    levels = {}
    for lv in LEVELS:
        tg, ex = n(1, 30), n(1, 30)
        levels[lv] = {"tp": min(tg, ex) * rng.random() if lv == "value" else n(0, int(min(tg, ex))),
                      "target": tg, "extracted": ex}
    tn = n(1, 40)
    return {**levels, "hallucination": {"total_numbers": tn, "numbers_found": n(0, 5), "numbers_not_found": n(0, 9)},
            "total_cost": rng.random() * 9, "edit_distance": n(0, 4), "papers": 1}


def _run_counts(rng: random.Random, papers: int, whole: bool) -> dict:
    return {"papers": {f"p{i}": _paper(rng, whole) for i in range(papers)}}


def _gradient(g, at: np.ndarray) -> np.ndarray:
    out = np.zeros(at.size)
    for i in range(at.size):
        h = 1e-6 * max(1.0, abs(at[i]))
        up, down = at.copy(), at.copy()
        up[i] += h
        down[i] -= h
        out[i] = (g(up) - g(down)) / (2 * h)
    return out


@pytest.mark.parametrize("whole", [True, False], ids=["whole counts", "estimated totals"])
@pytest.mark.parametrize("seed", range(3))
def test_every_headline_cell_keeps_its_value_and_gradient_on_the_paper_sum(seed: int, whole: bool) -> None:
    total = _run_counts(random.Random(seed), 7, whole)
    full_paths = leaf_paths(total)
    summed = TASK.sampling_counts(total)
    paths = leaf_paths(summed)
    assert len(paths) == len(full_paths) // 7
    at_full, at = flatten(total, full_paths), flatten(summed, paths)
    index = {p: i for i, p in enumerate(paths)}
    for cell in TASK.headline:
        g_full, g = metric_of_totals(TASK, cell, full_paths, {}), metric_of_totals(TASK, cell, paths, {})
        assert g(at) == pytest.approx(g_full(at_full), rel=1e-12, abs=1e-15), cell.path
        grad_full, grad = _gradient(g_full, at_full), _gradient(g, at)
        # every paper's count moves the cell as the summed count does
        mapped = np.array([grad[index[("papers", ALL_PAPERS, *p[2:])]] for p in full_paths])
        np.testing.assert_allclose(grad_full, mapped, rtol=1e-5, atol=1e-9, err_msg=str(cell.path))
        assert np.abs(grad).max() < 1.0, cell.path  # a rate of counts in the tens moves by less than 1 per count


def test_the_estimate_and_its_intervals_are_the_per_paper_ones() -> None:
    rng = random.Random(5)
    judge_counts = _run_counts(rng, 14, True)["papers"]
    docs = list(judge_counts)
    human_counts = {}
    for i, d in enumerate(docs):
        c = {k: (dict(v) if isinstance(v, dict) else v) for k, v in judge_counts[d].items()}
        if i % 3:  # a reviewer moved some matches and found numbers
            c["value"] = {**c["value"], "tp": max(0.0, c["value"]["tp"] - rng.random() * 2)}
            c["hallucination"] = {**c["hallucination"], "numbers_not_found": c["hallucination"]["numbers_not_found"]
                                  + rng.randint(0, 2)}
        human_counts[d] = c
    strata = {d: ("a" if i % 2 else "b") for i, d in enumerate(docs)}
    sampled_docs = docs[:10]
    full_paths = leaf_paths({"papers": judge_counts})
    paths = leaf_paths(TASK.sampling_counts({"papers": judge_counts}))

    def vectors(counts: dict, summed: bool) -> dict[str, np.ndarray]:
        return {d: flatten(TASK.sampling_counts({"papers": {d: c}}) if summed else {"papers": {d: c}},
                           paths if summed else full_paths) for d, c in counts.items()}

    found = {}
    for summed in (False, True):
        judge, human = vectors(judge_counts, summed), vectors(human_counts, summed)
        sampled = {d: human[d] for d in sampled_docs}
        tot = difference_totals(judge, strata, sampled, variance=VARIANCE)
        for cell in TASK.headline:
            g = metric_of_totals(TASK, cell, paths if summed else full_paths, {})
            est = metric_estimate(tot, g, min_reviews=4, min_differing=1)
            tuned, lam = tuned_estimate(judge, strata, sampled, g, min_reviews=4, min_differing=1, variance=VARIANCE)
            found[summed, cell.path] = (est.estimate, *est.ci, est.se, est.judge_only, tuned.estimate, *tuned.ci, lam)
    for cell in TASK.headline:
        assert found[True, cell.path] == pytest.approx(found[False, cell.path], rel=1e-7, abs=1e-12), cell.path
    for moved in (("multi_level", "overall_f1"), ("multi_level", "value_f1"), ("hallucination_rate",)):
        assert found[True, moved][1] < found[True, moved][2], moved  # an interval, not a point


@pytest.fixture
def demo_db(tmp_path):
    db = open_db(tmp_path / "litx.db")
    score_run(db, "litxbench", {"gold": str(DATA / "gold"), "pred": str(DATA / "pred_drop_meas30"),
                                "text": str(DATA / "papers")}, "official", run="litx")
    create_plan(db, "litx", seed=1)
    return db


def test_the_sample_queue_serves_as_on_per_paper_vectors(demo_db, monkeypatch) -> None:
    db, rng = demo_db, random.Random(3)
    view = as_view(db, "litx")
    assert len(_blocks_state(view, load_plan(db, view)).paths) <= 40  # 19 papers, 36 count paths between them
    for _ in range(4):  # a few documents reviewed through the queue, some labels overruled
        pick = next_sample(db, "litx")
        labels = {d["id"]: d for d in as_view(db, "litx").decisions(pick["doc"])}
        for i in pick["decisions"]:
            scheme = TASK.label_schemes[labels[i]["kind"]].labels
            add_review(db, "litx", i, labels[i]["judge"] if rng.random() < 0.6 else rng.choice(scheme), "ann",
                       sampled=True)
    summed = next_sample(db, "litx", half_width=0.01)
    monkeypatch.setattr(LitXBenchTask, "sampling_counts", lambda self, counts: counts)
    per_paper = next_sample(db, "litx", half_width=0.01)
    assert summed == per_paper
    assert summed["sampled_documents"] == 4
