"""ideation.md §6, judge against humans item by item: Spearman's ρ, Kendall's τ-b and pairwise accuracy between the
judge's rating and the mean human rating of each item, per criterion (they were not reported)."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from statistics import fmean

import pytest
from scipy.stats import kendalltau, spearmanr

from audit.outputs.agreement import agreement
from audit.outputs.item_agreement import item_stats
from audit.store.database import open_db
from tests.conftest import copy_of

RUN = "demo-ideation-si2024-humans"


def test_pairwise_accuracy_counts_a_judge_tie_as_no_agreement():
    s = item_stats([1, 2, 3, 3], [1, 3, 2, 4])
    assert s["pairwise_accuracy"] == pytest.approx(4 / 6) and s["n_pairs"] == 6
    assert s["spearman"] == pytest.approx(spearmanr([1, 2, 3, 3], [1, 3, 2, 4]).statistic)
    assert item_stats([1, 2], [1, 2])["spearman"] is None  # two items: no correlation
    flat = item_stats([3, 3, 3], [1, 2, 4])
    assert flat["spearman"] is None and "the judge gave every item the same rating" in flat["why"]
    assert flat["pairwise_accuracy"] == 0.0


def test_the_demo_runs_figures_equal_a_recount_from_the_database(tmp_path, demo_template):
    """Recounted straight from the tables: each rating decision's judge label and the mean of its reviewers' latest
    blind labels (the run's human reviews are blind, so agreement reads those)."""
    path = copy_of(demo_template, tmp_path / "d.db")
    got = agreement(open_db(path), RUN, n_resamples=20)["per_item"]
    conn = sqlite3.connect(path)
    latest: dict[tuple[int, str], str | None] = {}
    judge, criterion = {}, {}
    for dec, crit, j, who, label in conn.execute(
            "SELECT d.id, d.type, d.judge_label, v.reviewer, v.label FROM decisions d JOIN runs r ON r.id = d.run_id "
            "JOIN reviews v ON v.decision_id = d.id WHERE r.name = ? AND d.kind = 'rating' AND v.blind = 1 "
            "AND v.role = 'reviewer' ORDER BY v.id", [RUN]):
        latest[(dec, who)] = label
        judge[dec], criterion[dec] = j, crit
    humans: dict[int, list[float]] = defaultdict(list)
    for (dec, _), label in latest.items():
        if label is not None:
            humans[dec].append(float(label))
    items: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for dec, values in humans.items():
        if judge[dec] != "invalid":
            items[f"rating/{criterion[dec]}"].append((float(judge[dec]), fmean(values)))
    assert set(got) == set(items) and len(items) == 3
    for group, pairs in items.items():
        j, h = [a for a, _ in pairs], [b for _, b in pairs]
        assert got[group]["n_items"] == len(pairs)
        assert got[group]["spearman"] == pytest.approx(spearmanr(j, h).statistic, abs=1e-12)
        assert got[group]["kendall_tau_b"] == pytest.approx(kendalltau(j, h, variant="b").statistic, abs=1e-12)
