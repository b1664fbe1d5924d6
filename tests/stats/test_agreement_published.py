"""scoring/agreement.py against published worked examples.

Sources:
- Artstein, R. & Poesio, M. (2008). Inter-coder agreement for computational linguistics. Computational
  Linguistics 34(4), 555-596. Table 1 (two coders, Statement / Info-request, 100 utterances) and the
  three-category Table 4 example. The label vectors are built exactly as scikit-learn's
  `test_cohen_kappa` (sklearn/metrics/tests/test_classification.py) builds them, including its
  weighting example (none 0.9315, linear 0.9412, quadratic 0.9541).
- Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for
  Communication, University of Pennsylvania: (a) the 3 observers x 15 units nominal example with
  missing data, alpha = 0.691 (interval 0.811; also the worked example on Wikipedia's
  "Krippendorff's alpha" page and in fast-krippendorff's `alpha` docstring), and (b) the 4 observers
  x 12 units example, alpha nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797 (page 8; the
  same numbers are doctests of fast-krippendorff).
"""

from __future__ import annotations

import pytest

from scoring.stats.agreement import krippendorff_alpha, multi_rater_stats, pair_stats

# ------------------------------------------------------------------------------------------------------------------
# Cohen's kappa: Artstein & Poesio (2008)


def test_artstein_poesio_table_1_kappa():
    # Table 1 as a contingency table, rows coder A, columns coder B:
    #            STAT  IREQ
    #   STAT      20    20    (40)
    #   IREQ      10    50    (60)
    #            (30)  (70)
    # Ao = 0.70; Ae(kappa) = 0.4*0.3 + 0.6*0.7 = 0.54; kappa = (0.70 - 0.54) / (1 - 0.54) = 0.3478
    coder_a = ["STAT"] * 40 + ["IREQ"] * 60
    coder_b = ["STAT"] * 20 + ["IREQ"] * 20 + ["STAT"] * 10 + ["IREQ"] * 50
    s = pair_stats(coder_a, coder_b, labels=["STAT", "IREQ"], n_resamples=0)
    assert s["confusion"]["counts"] == [[20, 20], [10, 50]]
    assert s["raw_agreement"] == pytest.approx(0.70)
    assert s["kappa"] == pytest.approx(0.16 / 0.46)
    assert round(s["kappa"], 3) == 0.348
    # Symmetric in the coders, as sklearn's test checks
    assert pair_stats(coder_b, coder_a, n_resamples=0)["kappa"] == pytest.approx(s["kappa"])
    # Spurious extra labels excluded through labels= change nothing (sklearn's test again)
    extra = pair_stats(coder_a + ["OTHER"] * 4, coder_b + ["OTHER"] * 4, labels=["STAT", "IREQ"], n_resamples=0)
    assert extra["kappa"] == s["kappa"] and extra["n_excluded"] == 4
    # A coder agrees perfectly with itself
    assert pair_stats(coder_a, coder_a, n_resamples=0)["kappa"] == 1.0


def test_artstein_poesio_table_4_three_categories():
    # Rows coder A, columns coder B: [[46, 0, 0], [6, 32, 6], [0, 0, 10]]
    # Ao = 0.88; Ae = 0.46*0.52 + 0.44*0.32 + 0.10*0.16 = 0.396; kappa = 0.484 / 0.604 = 0.8013
    coder_a = ["STAT"] * 46 + ["IREQ"] * 44 + ["CHCK"] * 10
    coder_b = ["STAT"] * 52 + ["IREQ"] * 32 + ["CHCK"] * 16
    s = pair_stats(coder_a, coder_b, labels=["STAT", "IREQ", "CHCK"], n_resamples=0)
    assert s["confusion"]["counts"] == [[46, 0, 0], [6, 32, 6], [0, 0, 10]]
    assert s["kappa"] == pytest.approx(0.484 / 0.604)
    assert round(s["kappa"], 4) == 0.8013


def test_weighted_kappa_sklearn_weighting_example():
    # scikit-learn's weighting example on an ordered 3-point scale: kappa 0.9315, quadratic 0.9541
    y1 = ["0"] * 46 + ["1"] * 44 + ["2"] * 10
    y2 = ["0"] * 50 + ["1"] * 40 + ["2"] * 10
    s = pair_stats(y1, y2, ordinal=True, n_resamples=0)
    assert round(s["kappa"], 4) == 0.9315
    assert round(s["weighted_kappa"], 4) == 0.9541


# ------------------------------------------------------------------------------------------------------------------
# Krippendorff's alpha: Krippendorff (2011)

# (a) 3 observers x 15 units; None = missing. Published: nominal alpha = 0.691 (0.691358...), interval 0.811.
THREE_OBSERVERS = [
    [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
    [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
    [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
]

# (b) 4 observers A-D x 12 units (Krippendorff 2011, p. 8). Published: nominal 0.743, ordinal 0.815,
# interval 0.849, ratio 0.797.
FOUR_OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.691), ("interval", 0.811)])
def test_krippendorff_three_observers(level, published):
    assert round(krippendorff_alpha(THREE_OBSERVERS, level=level), 3) == published


def test_krippendorff_three_observers_nominal_exact():
    # Worked example: 26 pairable values, n_1..n_4 = 7, 4, 10, 5; off-diagonal coincidences sum to 6.
    # Nominal alpha = 1 - (n - 1) * sum_{c!=k} o_ck / sum_{c!=k} n_c n_k
    #               = 1 - 25 * 6 / (26^2 - (49 + 16 + 100 + 25)) = 1 - 150 / 486 = 56 / 81 = 0.691358
    assert krippendorff_alpha(THREE_OBSERVERS) == pytest.approx(56 / 81)


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_four_observers(level, published):
    assert round(krippendorff_alpha(FOUR_OBSERVERS, level=level), 3) == published


def test_krippendorff_four_observers_as_words():
    # Same data as category names: nominal alpha must not change, and ordinal needs the order via labels=
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    words = [[None if v is None else names[v] for v in row] for row in FOUR_OBSERVERS]
    assert round(krippendorff_alpha(words), 3) == 0.743
    assert round(krippendorff_alpha(words, level="ordinal", labels=list(names.values())), 3) == 0.815


def test_multi_rater_stats_on_four_observers():
    units = {
        f"u{j + 1}": {rater: row[j] for rater, row in zip("ABCD", FOUR_OBSERVERS, strict=True) if row[j] is not None}
        for j in range(12)
    }
    out = multi_rater_stats(units, level="ordinal")
    # Unit 12 has a single rating (observer B), so 11 of the 12 units are pairable
    assert (out["n_units"], out["n_raters"], out["n_pairable_units"]) == (12, 4, 11)
    assert round(out["alpha"], 3) == 0.815
    assert out["reason"] is None
