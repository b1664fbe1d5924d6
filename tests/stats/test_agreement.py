"""Unit tests for scoring/agreement.py: hand-computed values, undefined cases and invariance registries."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from scoring.stats import agreement
from scoring.stats.agreement import (
    KAPPA_SINGLE_LABEL,
    NO_DECISIONS,
    ONE_CATEGORY,
    confusion,
    group_stats,
    krippendorff_alpha,
    krippendorff_alpha_with_reason,
    multi_rater_stats,
    pair_stats,
)
from scoring.stats.intervals import wilson_interval

M, N = "match", "no-match"


def two_by_two(both: int, human_only: int, judge_only: int, neither: int) -> tuple[list[str], list[str]]:
    """Human (a) and judge (b) label vectors for a 2x2 table with `match` as the positive label."""
    human = [M] * both + [M] * human_only + [N] * judge_only + [N] * neither
    judge = [M] * both + [N] * human_only + [M] * judge_only + [N] * neither
    return human, judge


def assert_plain(value, path="result"):
    """Only JSON-ready Python values: no NumPy scalars, no NaN."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), f"{path}: key {key!r}"
            assert_plain(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            assert_plain(item, f"{path}[{i}]")
    else:
        assert value is None or type(value) in (bool, int, float, str), f"{path}: {type(value)}"
        if isinstance(value, float):
            assert not math.isnan(value), f"{path} is NaN"


# ------------------------------------------------------------------------------------------------------------------
# Paradoxes from docs (peers.md 5.2)


def test_prevalence_paradox():
    # a=90 (both match), b=5 (human only), c=5 (judge only), d=0:
    # Po = 90/100 = 0.90; pe = 0.95^2 + 0.05^2 = 0.905; kappa = (0.90 - 0.905) / 0.095 = -0.05263
    # PABAK = 2 * 0.90 - 1 = 0.80
    # AC1: pi = (0.95 + 0.95) / 2 = 0.95, pe = 1/(2-1) * (0.95*0.05 + 0.05*0.95) = 0.095
    #      AC1 = (0.90 - 0.095) / (1 - 0.095) = 0.805 / 0.905 = 0.88950
    # prevalence index = |90 - 0| / 100 = 0.90; bias index = |5 - 5| / 100 = 0
    human, judge = two_by_two(90, 5, 5, 0)
    s = pair_stats(human, judge, n_resamples=0, positive=M)
    assert s["n"] == 100
    assert s["raw_agreement"] == pytest.approx(0.90)
    assert s["kappa"] == pytest.approx(-0.005 / 0.095)
    assert round(s["kappa"], 4) == -0.0526
    assert s["pabak"] == pytest.approx(0.80)
    assert s["ac1"] == pytest.approx(0.805 / 0.905)
    assert round(s["ac1"], 4) == 0.8895
    assert s["prevalence_index"] == pytest.approx(0.90)
    assert s["bias_index"] == 0.0
    assert s["confusion"] == {"labels": [M, N], "counts": [[90, 5], [5, 0]]}
    assert s["reason"] is None


def test_bias_paradox():
    # Symmetric: a=40, d=40, b=10, c=10: Po = 0.8; marginals 0.5/0.5 both; pe = 0.5; kappa = 0.3/0.5 = 0.60
    sym = pair_stats(*two_by_two(40, 10, 10, 40), n_resamples=0, positive=M)
    # Lopsided: a=40, d=40, b=0 (human only), c=20 (judge only): Po = 0.8;
    # human marginals 0.4/0.6, judge 0.6/0.4; pe = 0.4*0.6 + 0.6*0.4 = 0.48; kappa = 0.32/0.52 = 0.6154
    lop = pair_stats(*two_by_two(40, 0, 20, 40), n_resamples=0, positive=M)
    assert sym["kappa"] == pytest.approx(0.60)
    assert lop["kappa"] == pytest.approx(0.32 / 0.52)
    assert round(lop["kappa"], 2) == 0.62
    # Same Po, so same PABAK = 0.6; the bias index shows the lopsidedness: |0 - 20| / 100 = 0.2
    assert sym["pabak"] == lop["pabak"] == pytest.approx(0.6)
    assert (sym["bias_index"], lop["bias_index"]) == (0.0, pytest.approx(0.2))
    # ... and so do the judge-lenient / judge-strict counts (b vs c)
    assert (sym["judge_lenient"], sym["judge_strict"]) == (10, 10)
    assert (lop["judge_lenient"], lop["judge_strict"]) == (20, 0)
    # Judge TPR vs human = 40 / (40 + 0) = 1.0; TNR = 40 / (40 + 20) = 0.6667
    assert lop["judge_tpr"] == 1.0
    assert lop["judge_tnr"] == pytest.approx(40 / 60)


# ------------------------------------------------------------------------------------------------------------------
# Degenerate inputs


def test_perfect_agreement():
    human = [M, N] * 20
    s = pair_stats(human, list(human), clusters=[f"d{i % 10}" for i in range(40)], positive=M)
    assert s["kappa"] == 1.0
    assert s["pabak"] == 1.0
    assert s["ac1"] == 1.0
    assert s["raw_agreement"] == 1.0
    assert s["kappa_ci"] == [1.0, 1.0]
    assert (s["judge_lenient"], s["judge_strict"]) == (0, 0)
    assert s["reason"] is None
    assert_plain(s)


def test_single_class_in_both_raters():
    s = pair_stats([M] * 10, [M] * 10)
    assert s["kappa"] is None and s["kappa_ci"] is None
    # Only one label seen, so k = 1: PABAK and AC1 have no formula either
    assert s["pabak"] is None and s["ac1"] is None
    assert KAPPA_SINGLE_LABEL in s["reason"]
    assert ONE_CATEGORY in s["reason"]
    assert s["raw_agreement"] == 1.0
    assert_plain(s)


def test_single_class_with_full_label_set():
    # labels= names both categories, so k = 2: PABAK = 2*1 - 1 = 1;
    # AC1: pi = (1, 0), pe = 1*0 + 0*1 = 0, AC1 = (1 - 0) / (1 - 0) = 1. Kappa stays undefined (pe = 1).
    s = pair_stats([M] * 10, [M] * 10, labels=[M, N])
    assert s["kappa"] is None
    assert s["pabak"] == 1.0
    assert s["ac1"] == 1.0
    assert s["reason"].startswith(KAPPA_SINGLE_LABEL)
    assert_plain(s)


def test_no_decisions():
    s = pair_stats([], [], positive=M, ordinal=False)
    assert s["n"] == 0
    assert s["reason"] == NO_DECISIONS
    for key in ("raw_agreement", "raw_agreement_ci", "kappa", "kappa_ci", "pabak", "ac1", "prevalence_index",
                "bias_index", "judge_lenient", "judge_strict", "judge_tpr", "judge_tnr", "weighted_kappa"):  # fmt: skip
        assert s[key] is None, key
    assert s["confusion"] == {"labels": [], "counts": []}
    assert_plain(s)


def test_no_overlap():
    # Human always "match", judge always "no-match": table [[0, 10], [0, 0]].
    # Po = 0; pe = 1.0*0.0 + 0.0*1.0 = 0; kappa = (0 - 0) / 1 = 0
    # PABAK = 2*0 - 1 = -1; AC1: pi = (0.5, 0.5), pe = 0.25 + 0.25 = 0.5, AC1 = (0 - 0.5) / 0.5 = -1
    s = pair_stats([M] * 10, [N] * 10, positive=M)
    assert s["kappa"] == 0.0
    assert s["pabak"] == -1.0
    assert s["ac1"] == -1.0
    assert s["kappa_ci"] == [0.0, 0.0]
    assert (s["judge_lenient"], s["judge_strict"]) == (0, 10)
    assert s["judge_tpr"] == 0.0 and s["judge_tnr"] is None
    assert "judge_tnr is undefined" in s["reason"]
    # Disjoint label sets: 4 categories, Po = 0, pe = 0 -> kappa 0; PABAK = (4*0 - 1) / 3 = -1/3
    s = pair_stats(["x", "y"], ["z", "w"], n_resamples=0)
    assert s["kappa"] == 0.0
    assert s["pabak"] == pytest.approx(-1 / 3)
    # No item inside labels=: nothing left to compare
    s = pair_stats([M, N], [N, M], labels=["1", "2"])
    assert (s["n"], s["n_excluded"], s["reason"]) == (0, 2, NO_DECISIONS)


def test_labels_exclude_items():
    # The two "invalid" judge answers fall outside labels= and are left out (as sklearn's confusion_matrix does)
    human = [M, M, N, N, M, N]
    judge = [M, N, N, N, "invalid", "invalid"]
    s = pair_stats(human, judge, labels=[M, N], n_resamples=0)
    assert (s["n"], s["n_excluded"]) == (4, 2)
    assert s["confusion"]["counts"] == [[1, 1], [0, 2]]
    assert s["kappa"] == cohen_kappa_score(human, judge, labels=[M, N])


def test_bad_input_raises():
    with pytest.raises(ValueError, match="pair_stats: a and b must have the same length, got 2 and 1"):
        pair_stats([M, N], [M])
    with pytest.raises(ValueError, match=r"pair_stats: b\[1\] is None"):
        pair_stats([M, N], [M, None])
    with pytest.raises(ValueError, match="pair_stats: ordinal=True needs labels that read as numbers"):
        pair_stats(["good", "bad"], ["bad", "bad"], ordinal=True)
    with pytest.raises(ValueError, match="pair_stats: n_resamples must be a non-negative integer"):
        pair_stats([M], [M], n_resamples=-1)
    with pytest.raises(ValueError, match="pair_stats: clusters must have one id per decision"):
        pair_stats([M], [M], clusters=["d1", "d2"])
    with pytest.raises(ValueError, match="confusion: labels must be distinct"):
        confusion([M], [M], labels=[M, M])


# ------------------------------------------------------------------------------------------------------------------
# Invariance registries (in the style of sklearn's test_common.py)

SYMMETRIC_STATS = ("raw_agreement", "kappa", "pabak", "ac1", "weighted_kappa", "prevalence_index", "bias_index")
ORDER_INVARIANT_STATS = (*SYMMETRIC_STATS, "raw_agreement_ci", "kappa_ci", "weighted_kappa_ci", "confusion", "n")


def _datasets():
    rng = random.Random(7)
    scale = [str(i) for i in range(1, 6)]
    ordinal_a = [rng.choice(scale) for _ in range(120)]
    ordinal_b = [str(min(5, max(1, int(x) + rng.choice((-1, 0, 0, 1))))) for x in ordinal_a]
    binary_a = [rng.choice((M, M, N)) for _ in range(120)]
    binary_b = [x if rng.random() < 0.8 else rng.choice((M, N)) for x in binary_a]
    return {
        "prevalence": (*two_by_two(90, 5, 5, 0), False),
        "bias": (*two_by_two(40, 0, 20, 40), False),
        "binary": (binary_a, binary_b, False),
        "ordinal": (ordinal_a, ordinal_b, True),
    }


@pytest.mark.parametrize("name", list(_datasets()))
@pytest.mark.parametrize("stat", SYMMETRIC_STATS)
def test_symmetric_in_raters(name, stat):
    a, b, ordinal = _datasets()[name]
    forward = pair_stats(a, b, ordinal=ordinal, n_resamples=0)[stat]
    backward = pair_stats(b, a, ordinal=ordinal, n_resamples=0)[stat]
    assert forward == pytest.approx(backward)


@pytest.mark.parametrize("name", list(_datasets()))
def test_invariant_to_item_order(name):
    a, b, ordinal = _datasets()[name]
    docs = [f"doc{i % 13}" for i in range(len(a))]
    order = list(range(len(a)))
    random.Random(3).shuffle(order)
    before = pair_stats(a, b, clusters=docs, ordinal=ordinal, n_resamples=300)
    after = pair_stats(
        [a[i] for i in order],
        [b[i] for i in order],
        clusters=[docs[i] for i in order],
        ordinal=ordinal,
        n_resamples=300,
    )
    for stat in ORDER_INVARIANT_STATS:
        # Exact: the bootstrap depends only on the multiset of per-cluster tables, not on item order.
        assert before[stat] == after[stat], stat
    assert_plain(before)


# ------------------------------------------------------------------------------------------------------------------
# Cluster bootstrap


def _two_halves():
    """200 decisions: the first 100 agree closely (kappa ~0.8), the last 100 barely (kappa ~0.2)."""
    good_h, good_j = two_by_two(45, 5, 5, 45)  # Po 0.9 -> kappa 0.8
    poor_h, poor_j = two_by_two(30, 20, 20, 30)  # Po 0.6 -> kappa 0.2
    return good_h + poor_h, good_j + poor_j


def test_cluster_bootstrap_ci_contains_estimate_and_is_seeded():
    human, judge = _two_halves()
    docs = [f"d{i % 100}" for i in range(200)]
    s = pair_stats(human, judge, clusters=docs, seed=42)
    low, high = s["kappa_ci"]
    assert low < s["kappa"] < high
    assert s["kappa_ci_skipped"] == 0
    assert pair_stats(human, judge, clusters=docs, seed=42)["kappa_ci"] == s["kappa_ci"]
    assert pair_stats(human, judge, clusters=docs, seed=43)["kappa_ci"] != s["kappa_ci"]


def test_cluster_bootstrap_wider_with_fewer_clusters():
    human, judge = _two_halves()
    spread = pair_stats(human, judge, clusters=[f"d{i % 100}" for i in range(200)])
    # Two documents, each holding one half: resamples are {good, good}, {good, poor} or {poor, poor},
    # so the interval spans roughly kappa(poor half) = 0.2 to kappa(good half) = 0.8.
    lumped = pair_stats(human, judge, clusters=["good"] * 100 + ["poor"] * 100)
    assert spread["kappa"] == lumped["kappa"]
    width = lambda s: s["kappa_ci"][1] - s["kappa_ci"][0]  # noqa: E731
    assert width(lumped) > 2 * width(spread)
    assert lumped["kappa_ci"][0] == pytest.approx(0.2) and lumped["kappa_ci"][1] == pytest.approx(0.8)


def test_item_bootstrap_when_no_clusters():
    human, judge = _two_halves()
    s = pair_stats(human, judge, n_resamples=500)
    assert s["n_clusters"] == 200
    low, high = s["kappa_ci"]
    assert low < s["kappa"] < high


def test_bootstrap_ci_undefined_with_one_cluster():
    s = pair_stats(*two_by_two(40, 10, 10, 40), clusters=["d1"] * 100)
    assert s["kappa"] == pytest.approx(0.6)
    assert s["kappa_ci"] is None
    assert "kappa_ci needs at least two clusters" in s["reason"]


def test_bootstrap_ci_undefined_when_too_many_resamples_are():
    # Only cluster d1 holds a "no-match"; a resample misses d1 with probability (2/3)^3 = 0.30, and then
    # both raters use one label, so ~30% of resamples have no kappa -- more than the 10% allowed.
    human = [N, M, M, M]
    judge = [N, M, M, M]
    s = pair_stats(human, judge, clusters=["d1", "d1", "d2", "d3"], n_resamples=1000)
    assert s["kappa"] == 1.0
    assert s["kappa_ci"] is None
    assert 250 < s["kappa_ci_skipped"] < 350
    assert f"only {1000 - s['kappa_ci_skipped']} of 1000 bootstrap resamples had a defined kappa" in s["reason"]


def test_vectorised_kappa_matches_sklearn():
    rng = np.random.default_rng(0)
    for k in (2, 3, 5):
        tables = rng.integers(0, 30, size=(15, k, k)).astype(float)
        for quadratic, weights in ((False, None), (True, "quadratic")):
            kappas, defined = agreement._kappa_from_tables(
                tables, agreement._disagreement_weights(k, quadratic=quadratic)
            )
            assert defined.all()
            for kappa, table in zip(kappas, tables, strict=True):
                a = np.repeat(np.arange(k * k) // k, table.ravel().astype(int))
                b = np.repeat(np.arange(k * k) % k, table.ravel().astype(int))
                assert kappa == pytest.approx(cohen_kappa_score(a, b, labels=np.arange(k), weights=weights))
    # The undefined case (one label in both) is flagged, not NaN
    single = np.zeros((1, 2, 2))
    single[0, 0, 0] = 7
    kappas, defined = agreement._kappa_from_tables(single, agreement._disagreement_weights(2, quadratic=False))
    assert not defined.any() and kappas.size == 0


def test_bootstrap_tables_draw_whole_clusters():
    # Every resample draws G = 3 clusters, so its table holds 3 decisions per cluster size... here sizes 1, 2, 3
    codes_a = np.array([0, 1, 1, 0, 0, 1])
    codes_b = np.array([0, 1, 0, 0, 0, 1])
    clusters = np.array([0, 1, 1, 2, 2, 2])
    tables = agreement._cluster_bootstrap_tables(codes_a, codes_b, clusters, 2, 400, 0)
    totals = tables.sum(axis=(1, 2))
    assert set(totals.tolist()) <= {3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0}
    assert totals.mean() == pytest.approx(6.0, abs=0.25)  # E = 3 * mean cluster size (2)
    # Resampling decisions instead of documents would always give 6 decisions; whole clusters give 3 (cluster 0
    # drawn three times, p = 1/27) up to 9 (cluster 2 three times).
    assert {3.0, 9.0} <= set(totals.tolist())
    assert (totals == 3.0).mean() == pytest.approx(1 / 27, abs=0.03)


# ------------------------------------------------------------------------------------------------------------------
# Wilson interval, weighted kappa


def test_wilson_interval_hand_computed():
    # p = 0.9, n = 100, z = 1.959964, z^2 = 3.841459; denominator = 1 + z^2/n = 1.0384146
    # centre = (0.9 + 3.841459/200) / 1.0384146 = 0.9192073 / 1.0384146 = 0.885202
    # half = 1.959964 / 1.0384146 * sqrt(0.9*0.1/100 + 3.841459/40000) = 1.887458 * 0.0315600 = 0.059568
    # interval = [0.825634, 0.944771]
    low, high = wilson_interval(90, 100)
    assert low == pytest.approx(0.825634, abs=1e-6)
    assert high == pytest.approx(0.944771, abs=1e-6)
    ref = binomtest(90, 100).proportion_ci(confidence_level=0.95, method="wilson")
    assert (low, high) == (pytest.approx(ref.low), pytest.approx(ref.high))
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 0) is None
    s = pair_stats(*two_by_two(90, 5, 5, 0), n_resamples=0)
    assert s["raw_agreement_ci"] == [low, high]


def test_weighted_kappa_equals_sklearn_quadratic():
    rng = np.random.default_rng(1)
    human = [str(x) for x in rng.integers(1, 6, 300)]
    judge = [str(min(5, max(1, int(x) + int(d)))) for x, d in zip(human, rng.integers(-2, 3, 300), strict=True)]
    s = pair_stats(human, judge, ordinal=True, clusters=[f"d{i % 30}" for i in range(300)])
    assert s["confusion"]["labels"] == ["1", "2", "3", "4", "5"]
    assert s["weighted_kappa"] == pytest.approx(cohen_kappa_score(human, judge, weights="quadratic"))
    assert s["kappa"] == pytest.approx(cohen_kappa_score(human, judge))
    low, high = s["weighted_kappa_ci"]
    assert low < s["weighted_kappa"] < high
    # judge above / below the human on the scale: strict upper / lower triangle of the table
    assert s["judge_higher"] == sum(int(j) > int(h) for h, j in zip(human, judge, strict=True))
    assert s["judge_lower"] == sum(int(j) < int(h) for h, j in zip(human, judge, strict=True))


def test_ordinal_labels_sort_numerically_or_by_given_order():
    s = pair_stats(["10", "2", "1"], ["2", "10", "1"], ordinal=True, n_resamples=0)
    assert s["confusion"]["labels"] == ["1", "2", "10"]
    order = ["incorrect", "partial", "correct"]
    human = ["incorrect", "partial", "correct", "correct", "partial"]
    judge = ["partial", "partial", "correct", "partial", "incorrect"]
    s = pair_stats(human, judge, ordinal=True, labels=order, n_resamples=0)
    assert s["weighted_kappa"] == pytest.approx(cohen_kappa_score(human, judge, labels=order, weights="quadratic"))
    assert s["judge_higher"] == 1 and s["judge_lower"] == 2


def test_confusion_rows_are_rater_a():
    out = confusion([M, M, N], [M, N, N])
    assert out == {"labels": [M, N], "counts": [[1, 1], [0, 1]]}
    assert confusion([], [], labels=[M, N]) == {"labels": [M, N], "counts": [[0, 0], [0, 0]]}
    assert_plain(confusion(np.array(["1", "2"]), np.array(["2", "2"])))


# ------------------------------------------------------------------------------------------------------------------
# Krippendorff's alpha


def test_krippendorff_level_is_checked_first():
    msg = "krippendorff_alpha: level must be one of 'nominal', 'ordinal', 'interval', 'ratio'; got 'binary'"
    with pytest.raises(ValueError, match=msg):
        krippendorff_alpha([["a", "b"]], level="binary")
    with pytest.raises(ValueError, match="multi_rater_stats: level must be one of 'nominal', 'ordinal'"):
        multi_rater_stats({}, level="Nominal")


def test_krippendorff_alpha_with_missing_data():
    # Units u1..u4, raters A, B, C; u4 has one rating and so is not pairable.
    #   u1: a, a     u2: a, b     u3: b, b (C)     u4: a (alone)
    # Coincidences (each pairable unit has m_u = 2, weight 1/(m_u - 1) = 1): o_aa = 2, o_ab = o_ba = 1, o_bb = 2
    # n_a = 3, n_b = 3, n = 6; D_o = 2/6; D_e = (3*3 + 3*3) / (6*5) = 0.6; alpha = 1 - (1/3)/0.6 = 4/9
    data = [["a", "a", None, "a"], ["a", "b", "b", None], [None, None, "b", None]]
    assert krippendorff_alpha(data) == pytest.approx(4 / 9)
    assert krippendorff_alpha_with_reason(data) == (pytest.approx(4 / 9), None)
    assert isinstance(krippendorff_alpha(data), float)
    stats = multi_rater_stats(
        {"u1": {"A": "a", "B": "a"}, "u2": {"A": "a", "B": "b"}, "u3": {"B": "b", "C": "b"}, "u4": {"A": "a"}}
    )
    assert stats == {"n_units": 4, "n_raters": 3, "n_pairable_units": 3, "alpha": pytest.approx(4 / 9), "reason": None}


def test_krippendorff_alpha_undefined_cases():
    assert krippendorff_alpha_with_reason([["a", None], [None, "b"]]) == (None, agreement.NO_PAIRABLE_UNIT)
    assert krippendorff_alpha_with_reason([]) == (None, agreement.NO_PAIRABLE_UNIT)
    # Pairable units only ever say "a" (the lone "b" is unpaired): D_e = 0
    assert krippendorff_alpha_with_reason([["a", "a", "b"], ["a", "a", None]]) == (None, agreement.ALPHA_SINGLE_VALUE)
    assert multi_rater_stats({"u1": {"A": "x"}})["reason"] == agreement.NO_PAIRABLE_UNIT
    assert krippendorff_alpha([[1, float("nan")], [1, 2]]) is None


def test_krippendorff_ordinal_and_interval_labels():
    # String scores are read as numbers: "1".."5" give the same alpha as 1..5
    numbers = [[1, 2, 3, 3], [1, 3, 3, 4], [2, 2, 3, 4]]
    strings = [[str(v) for v in row] for row in numbers]
    for level in ("ordinal", "interval", "ratio"):
        assert krippendorff_alpha(strings, level=level) == pytest.approx(krippendorff_alpha(numbers, level=level))
    words = [["low", "mid"], ["mid", "mid"]]
    with pytest.raises(ValueError, match="krippendorff_alpha: level='ordinal' needs values that read as numbers"):
        krippendorff_alpha(words, level="ordinal")
    with pytest.raises(ValueError, match="krippendorff_alpha: level='interval' needs numeric values"):
        krippendorff_alpha(words, level="interval")
    with pytest.raises(ValueError, match=r"krippendorff_alpha: values \['mid'\] are not in labels"):
        krippendorff_alpha(words, level="ordinal", labels=["low", "high"])
    # Agreement with alpha on the equivalent ranks
    assert krippendorff_alpha(words, level="ordinal", labels=["low", "mid", "high"]) == pytest.approx(
        krippendorff_alpha([[0, 1], [1, 1]], level="ordinal")
    )


# ------------------------------------------------------------------------------------------------------------------
# group_stats


def _rows(n=5000, docs=500, seed=1):
    rng = random.Random(seed)
    types = {"entity_pair": ["task", "method", "dataset", "metric"], "relation_pair": ["uses", "improves"]}
    rows = []
    for _ in range(n):
        doc = f"d{rng.randrange(docs)}"
        if rng.random() < 0.1:
            human = str(rng.randint(1, 5))
            judge = str(min(5, max(1, int(human) + rng.choice((-1, 0, 1)))))
            rows.append({"kind": "idea", "type": "novelty", "doc": doc, "human": human, "judge": judge})
            continue
        kind = rng.choice(list(types))
        human = M if rng.random() < 0.3 else N
        judge = human if rng.random() < 0.9 else (N if human == M else M)
        rows.append({"kind": kind, "type": rng.choice(types[kind]), "doc": doc, "human": human, "judge": judge})
    return rows


def test_group_stats_groups_and_options():
    rows = _rows(n=600, docs=60)
    out = group_stats(rows, ordinal_kinds=("idea",), n_resamples=200)
    assert list(out) == [
        "all", "entity_pair", "entity_pair/dataset", "entity_pair/method", "entity_pair/metric", "entity_pair/task",
        "idea", "idea/novelty", "relation_pair", "relation_pair/improves", "relation_pair/uses",
    ]  # fmt: skip
    assert out["all"]["n"] == 600
    assert out["entity_pair"]["n"] == sum(r["kind"] == "entity_pair" for r in rows)
    assert out["entity_pair"]["n_clusters"] == len({r["doc"] for r in rows if r["kind"] == "entity_pair"})
    assert out["idea"]["weighted_kappa"] is not None and out["idea"]["judge_lenient"] is None
    assert out["entity_pair"]["weighted_kappa"] is None and out["entity_pair"]["judge_lenient"] is not None
    sub = [r for r in rows if r["kind"] == "relation_pair" and r["type"] == "uses"]
    expected = pair_stats(
        [r["human"] for r in sub], [r["judge"] for r in sub], clusters=[r["doc"] for r in sub], n_resamples=200,
        positive=M, labels=[M, N],
    )  # fmt: skip
    assert out["relation_pair/uses"] == expected
    assert_plain(out)


def test_group_stats_shares_a_kinds_labels():
    # Type "b" only ever says "match", but the kind uses both labels, so PABAK/AC1 are defined there
    rows = [
        {"kind": "k", "type": "a", "doc": "d1", "human": M, "judge": N},
        {"kind": "k", "type": "a", "doc": "d2", "human": N, "judge": N},
        {"kind": "k", "type": "b", "doc": "d3", "human": M, "judge": M},
    ]
    out = group_stats(rows, n_resamples=0)
    assert out["k/b"]["confusion"]["labels"] == [M, N]
    assert out["k/b"]["kappa"] is None and out["k/b"]["pabak"] == 1.0
    assert out["k/b"]["reason"].startswith(KAPPA_SINGLE_LABEL)


def test_group_stats_ordinal_kinds_with_explicit_order():
    order = ["incorrect", "partial", "correct"]
    rows = [
        {"kind": "answer", "type": "q", "doc": f"d{i}", "human": h, "judge": j}
        for i, (h, j) in enumerate([("correct", "partial"), ("partial", "partial"), ("incorrect", "correct")])
    ]
    out = group_stats(rows, ordinal_kinds={"answer": order}, n_resamples=0)
    assert out["answer"]["confusion"]["labels"] == order
    assert out["all"]["confusion"]["labels"] == order
    assert out["answer"]["judge_higher"] == 1 and out["answer"]["judge_lower"] == 1


def test_group_stats_rejects_unusable_rows():
    with pytest.raises(ValueError, match="group_stats: row 1 lacks doc"):
        group_stats([{"kind": "k", "type": "t", "doc": "d", "human": M, "judge": M}, {"kind": "k", "type": "t"}])
    with pytest.raises(ValueError, match="group_stats: row 0 has no human label"):
        group_stats([{"kind": "k", "type": "t", "doc": "d", "human": None, "judge": M}])
    assert group_stats([], n_resamples=10) == {"all": pair_stats([], [])}


def test_group_stats_on_5000_decisions():
    """Structure only; the timing is in bench/agreement_speed.py."""
    rows = _rows()
    out = group_stats(rows, ordinal_kinds=("idea",), n_resamples=2000)
    assert out["all"]["n"] == 5000 and out["all"]["n_clusters"] == len({r["doc"] for r in rows}) > 490
