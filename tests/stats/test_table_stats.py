"""One function per statistic over a confusion table (scoring/stats/agreement.py): each gives what `pair_stats`
reports, and the closed forms it documents."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from scoring.stats.agreement import (
    bias_index,
    cohen_kappa,
    gwet_ac1,
    judge_above_below,
    judge_errors,
    pabak,
    pair_stats,
    prevalence_index,
    quadratic_weighted_kappa,
    raw_agreement,
    single_label_note,
)


def _random_pairs(seed: int) -> tuple[list[str], list[str], list[str]]:
    rnd = random.Random(seed)
    labels = [str(i) for i in range(1, rnd.choice([2, 3, 5]) + 1)]
    skew = rnd.random()
    a = [labels[0] if rnd.random() < skew else rnd.choice(labels) for _ in range(rnd.randint(1, 80))]
    b = [x if rnd.random() < 0.6 else rnd.choice(labels) for x in a]
    return a, b, labels


@pytest.mark.parametrize("seed", range(40))
def test_each_statistic_of_the_table_is_what_pair_stats_reports(seed):
    a, b, labels = _random_pairs(seed)
    s = pair_stats(a, b, labels=labels, ordinal=True, n_resamples=0)
    table = s["confusion"]["counts"]
    assert raw_agreement(table) == s["raw_agreement"]
    assert cohen_kappa(table) == s["kappa"] and quadratic_weighted_kappa(table) == s["weighted_kappa"]
    assert pabak(table) == s["pabak"] and gwet_ac1(table) == s["ac1"]
    assert prevalence_index(table) == s["prevalence_index"] and bias_index(table) == s["bias_index"]
    assert judge_above_below(table) == (s["judge_higher"], s["judge_lower"])
    assert single_label_note(table, labels) == s["degenerate"]
    errors = judge_errors(table, labels, "1")
    nominal = pair_stats(a, b, labels=labels, positive="1", n_resamples=0)
    assert errors == {key: nominal[key] for key in errors}


@pytest.mark.parametrize("seed", range(40))
def test_statistics_follow_their_closed_forms(seed):
    a, b, labels = _random_pairs(seed)
    c = np.array(pair_stats(a, b, labels=labels, n_resamples=0)["confusion"]["counts"])
    n, k = c.sum(), len(c)
    p_o = np.trace(c) / n
    assert raw_agreement(c) == pytest.approx(np.mean([x == y for x, y in zip(a, b, strict=True)]))
    if len(set(a) | set(b)) > 1:
        assert cohen_kappa(c) == pytest.approx(cohen_kappa_score(a, b, labels=labels))
        assert quadratic_weighted_kappa(c) == pytest.approx(
            cohen_kappa_score([labels.index(x) for x in a], [labels.index(x) for x in b], weights="quadratic"))
    else:
        assert cohen_kappa(c) is None and quadratic_weighted_kappa(c) is None
    assert pabak(c) == pytest.approx((k * p_o - 1) / (k - 1))
    pi = (c.sum(axis=0) + c.sum(axis=1)) / (2 * n)
    p_e = (pi * (1 - pi)).sum() / (k - 1)
    assert gwet_ac1(c) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert (prevalence_index(c) is None) == (bias_index(c) is None) == (k != 2)


def test_undefined_statistics_are_none():
    assert raw_agreement([[0, 0], [0, 0]]) is None and cohen_kappa([[0, 0], [0, 0]]) is None
    assert cohen_kappa([[7, 0], [0, 0]]) is None  # both raters one and the same label: p_e = 1
    assert pabak([[7]]) is None and gwet_ac1([[7]]) is None and prevalence_index([[1, 0, 0]] * 3) is None
    assert judge_errors([[0, 0], [3, 4]], ["match", "no-match"], "match")["judge_tpr"] is None
    assert judge_errors([[5, 0], [0, 0]], ["match", "no-match"], "match")["judge_tnr"] is None
    with pytest.raises(ValueError, match="k x k"):
        raw_agreement([1, 2, 3])
