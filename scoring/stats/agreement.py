"""Agreement statistics: how far a judge's labels agree with a human's, and humans with each other.

Every statistic here is a *score*: higher means more agreement. Each one is built on a single confusion
matrix (`confusion`, rows = rater ``a`` = the human, columns = rater ``b`` = the judge), options are
keyword-only, and results are plain Python ``float``/``int``/``list`` values, never NumPy scalars.

An undefined statistic is ``None`` (JSON ``null``), never NaN, and the result carries a ``reason``
sentence saying why (see each function's "Undefined" notes).

This module is a pure library: no Streamlit, no SQLite, no file I/O.

References:
    Artstein, R. & Poesio, M. (2008). Inter-coder agreement for computational linguistics.
    Computational Linguistics 34(4), 555-596.
    Byrt, T., Bishop, J. & Carlin, J. B. (1993). Bias, prevalence and kappa. J. Clin. Epidemiol. 46(5), 423-429.
    Cohen, J. (1960). A coefficient of agreement for nominal scales. Educ. Psychol. Meas. 20(1), 37-46.
    Cohen, J. (1968). Weighted kappa. Psychol. Bull. 70(4), 213-220.
    Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application, section 3.8 (cluster data).
    Feinstein, A. R. & Cicchetti, D. V. (1990). High agreement but low kappa. J. Clin. Epidemiol. 43(6), 543-549.
    Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence of high agreement.
    Br. J. Math. Stat. Psychol. 61(1), 29-48.
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Univ. of Pennsylvania, Annenberg.
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. JASA 22, 209-212.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from scoring.stats.bootstrap import percentile_interval, resampled_sums
from scoring.stats.intervals import wilson_interval

LEVELS = ("nominal", "ordinal", "interval", "ratio")
"""Levels of measurement accepted by `krippendorff_alpha` and `multi_rater_stats`."""

CONFIDENCE = 0.95
"""Confidence level of every interval in this module."""

MIN_VALID_RESAMPLE_FRACTION = 0.9
"""A bootstrap CI is reported only if at least this share of resamples gave a defined statistic."""

NO_DECISIONS = "no decisions reviewed"
KAPPA_SINGLE_LABEL = "kappa is undefined when both raters use a single label (expected agreement is 1)"
ONE_CATEGORY = "PABAK and AC1 need at least two categories; pass labels= to name the full label set"
NOT_2X2 = "prevalence and bias indices are defined for 2x2 tables only"
NO_PAIRABLE_UNIT = "alpha needs at least one unit rated by two or more raters"
ALPHA_SINGLE_VALUE = "alpha is undefined when all pairable ratings have the same value (expected disagreement is 0)"


# --------------------------------------------------------------------------------------------------------------------
# Helpers


def _plain(value: Any) -> Any:
    """Turn a NumPy scalar into the matching Python value; leave anything else alone."""
    return value.item() if isinstance(value, np.generic) else value


def _as_number(label: Any) -> float | None:
    """The label as a finite-or-infinite float if it reads as a number (``"3"``, ``2.5``), else None."""
    if isinstance(label, bool | np.bool_):
        return None
    try:
        x = float(label)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _sorted_labels(values: Iterable[Hashable]) -> list:
    """Distinct labels, in numeric order when every label reads as a number, else in string order."""
    uniq = {_plain(v) for v in values}
    nums = {v: _as_number(v) for v in uniq}
    if uniq and all(x is not None for x in nums.values()):
        return sorted(uniq, key=lambda v: (nums[v], str(v)))
    return sorted(uniq, key=str)


def _check_pair(a: Sequence, b: Sequence, fn: str) -> tuple[list, list]:
    """Both raters' labels as lists; raise ValueError on unusable input."""
    a = a.tolist() if isinstance(a, np.ndarray) else list(a)
    b = b.tolist() if isinstance(b, np.ndarray) else list(b)
    if len(a) != len(b):
        raise ValueError(f"{fn}: a and b must have the same length, got {len(a)} and {len(b)}")
    for name, seq in (("a", a), ("b", b)):
        if None in seq:
            raise ValueError(f"{fn}: {name}[{seq.index(None)}] is None; leave unrated decisions out")
    return a, b


def _encode(a: list, b: list, labels: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Label positions of the items whose two labels are both in ``labels``, and which items those are."""
    index = {lab: i for i, lab in enumerate(labels)}
    codes_a = np.fromiter((index.get(x, -1) for x in a), dtype=np.int64, count=len(a))
    codes_b = np.fromiter((index.get(x, -1) for x in b), dtype=np.int64, count=len(b))
    kept = (codes_a >= 0) & (codes_b >= 0)
    return codes_a[kept], codes_b[kept], kept


def _table(codes_a: np.ndarray, codes_b: np.ndarray, k: int) -> np.ndarray:
    """k x k count table of encoded labels, via ``sklearn.metrics.confusion_matrix``."""
    if len(codes_a) == 0 or k == 1:  # (sklearn warns about a 1 x 1 table even when labels= asked for it)
        return np.full((k, k), len(codes_a), dtype=np.int64)
    return confusion_matrix(codes_a, codes_b, labels=np.arange(k)).astype(np.int64)


def _resolve_labels(a: list, b: list, labels: Sequence | None, *, ordinal: bool, fn: str) -> list:
    """The label order used for the confusion matrix (validated when given, inferred otherwise)."""
    if labels is not None:
        out = [_plain(x) for x in labels]
        if len(set(out)) != len(out):
            raise ValueError(f"{fn}: labels must be distinct, got {out!r}")
        return out
    out = _sorted_labels([*a, *b])
    if ordinal and any(_as_number(x) is None for x in out):
        raise ValueError(
            f"{fn}: ordinal=True needs labels that read as numbers or an explicit order through labels=; got {out!r}"
        )
    return out


def _check_level(level: str, fn: str) -> None:
    if level not in LEVELS:
        allowed = ", ".join(repr(x) for x in LEVELS)
        raise ValueError(f"{fn}: level must be one of {allowed}; got {level!r}")


# --------------------------------------------------------------------------------------------------------------------
# Confusion matrix: the one primitive


def confusion(a: Sequence[str], b: Sequence[str], *, labels: Sequence[str] | None = None) -> dict:
    """Confusion matrix of two raters: rows are rater ``a`` (the human), columns rater ``b`` (the judge).

    Built on ``sklearn.metrics.confusion_matrix(a, b, labels=labels)``. As there, an item whose label
    (from either rater) is not in ``labels`` is left out.

    Args:
        a: Labels from rater a, one per item.
        b: Labels from rater b, same items in the same order.
        labels: Row/column order. Default: every label seen, in numeric order when all read as
            numbers, otherwise in string order.

    Returns:
        ``{"labels": [...], "counts": [[...], ...]}`` with ``counts[i][j]`` = items that rater a
        labelled ``labels[i]`` and rater b labelled ``labels[j]``. Empty input without labels gives
        ``{"labels": [], "counts": []}``.

    Raises:
        ValueError: If a and b differ in length, a label is None or ``labels`` repeats a label.

    Example:
        >>> confusion(["match", "match", "no-match"], ["match", "no-match", "no-match"])
        {'labels': ['match', 'no-match'], 'counts': [[1, 1], [0, 1]]}
    """
    a, b = _check_pair(a, b, "confusion")
    labels = _resolve_labels(a, b, labels, ordinal=False, fn="confusion")
    codes_a, codes_b, _ = _encode(a, b, labels)
    return {"labels": labels, "counts": _table(codes_a, codes_b, len(labels)).tolist()}


# --------------------------------------------------------------------------------------------------------------------
# One statistic each, over a confusion table C (k x k counts, rows rater a = the human, columns rater b = the judge;
# a list of lists or an array). n = sum(C), r_i and c_j the row and column marginal proportions, p_o = trace(C) / n.
# An undefined statistic is None.

Table = Sequence[Sequence[int]] | np.ndarray


def _counts(table: Table) -> np.ndarray:
    counts = np.asarray(table, dtype=np.int64).reshape(-1)
    k = math.isqrt(counts.size)
    if k * k != counts.size:
        raise ValueError(f"a confusion table is k x k, got {counts.size} cells")
    return counts.reshape(k, k)


def _kappa_is_defined(c: np.ndarray) -> bool:
    """p_e < 1: false exactly when sum_i rows_i cols_i == n^2 (both raters used one and the same label)."""
    n = int(c.sum())
    return int(c.sum(axis=1) @ c.sum(axis=0)) != n * n


def _items(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The table's items as label positions (rater a, rater b), for sklearn."""
    k = len(c)
    cells = np.repeat(np.arange(k * k), c.ravel())
    return cells // k, cells % k


def raw_agreement(table: Table) -> float | None:
    """p_o, the share of items both raters gave the same label; None for an empty table.

    >>> raw_agreement([[20, 20], [10, 50]])
    0.7
    """
    c = _counts(table)
    n = int(c.sum())
    return int(np.trace(c)) / n if n else None


def cohen_kappa(table: Table) -> float | None:
    """Cohen's kappa (1960) = (p_o - p_e) / (1 - p_e), p_e = sum_i r_i c_i, by ``sklearn.metrics.cohen_kappa_score``.

    Symmetric in the raters; 1 = perfect, 0 = chance, negative = worse than chance; its maximum is below 1 when the
    marginals differ. None when both raters used one and the same label (p_e = 1) or the table is empty.

    Example: Artstein & Poesio (2008), Table 1 (p_o = 0.70, p_e = 0.54).
        >>> round(cohen_kappa([[20, 20], [10, 50]]), 4)
        0.3478
    """
    c = _counts(table)
    if not _kappa_is_defined(c):
        return None
    return float(cohen_kappa_score(*_items(c), labels=np.arange(len(c))))


def quadratic_weighted_kappa(table: Table) -> float | None:
    """Weighted kappa (Cohen 1968) = 1 - sum(w O) / sum(w E) with quadratic weights w_ij = (i - j)^2 over label
    *positions* (as sklearn's ``weights="quadratic"``): for an ordered scale, a near miss counts less than a far one.
    None when kappa is.

    Example: scikit-learn's weighting example on a 3-point scale (kappa 0.9315).
        >>> round(quadratic_weighted_kappa([[46, 0, 0], [4, 40, 0], [0, 0, 10]]), 4)
        0.9541
    """
    c = _counts(table)
    if not _kappa_is_defined(c):
        return None
    return float(cohen_kappa_score(*_items(c), labels=np.arange(len(c)), weights="quadratic"))


def pabak(table: Table) -> float | None:
    """Prevalence- and bias-adjusted kappa (Byrt, Bishop & Carlin 1993) = (k p_o - 1) / (k - 1), i.e. 2 p_o - 1 for
    k = 2: kappa with uniform marginals. None when k < 2 or the table is empty.

    >>> pabak([[90, 5], [5, 0]])
    0.8
    """
    c = _counts(table)
    k, p_o = len(c), raw_agreement(c)
    return None if k < 2 or p_o is None else (k * p_o - 1) / (k - 1)


def gwet_ac1(table: Table) -> float | None:
    """Gwet's AC1 (2008) = (p_o - p_e) / (1 - p_e) with p_e = 1/(k-1) sum_i pi_i (1 - pi_i), pi_i = (r_i + c_i) / 2:
    stays high where kappa collapses under a skewed prevalence. None when k < 2 or the table is empty.

    >>> round(gwet_ac1([[90, 5], [5, 0]]), 4)
    0.8895
    """
    c = _counts(table)
    k, n = len(c), int(c.sum())
    if k < 2 or not n:
        return None
    pi = (c.sum(axis=1) + c.sum(axis=0)) / (2 * n)
    p_e = float((pi * (1 - pi)).sum()) / (k - 1)  # <= 1/k < 1
    return (int(np.trace(c)) / n - p_e) / (1 - p_e)


def prevalence_index(table: Table) -> float | None:
    """|C00 - C11| / n, 2 x 2 tables only (else None). Show it beside kappa: a high prevalence index depresses kappa
    (Feinstein & Cicchetti 1990).

    >>> prevalence_index([[90, 5], [5, 0]])
    0.9
    """
    c = _counts(table)
    n = int(c.sum())
    return abs(int(c[0, 0]) - int(c[1, 1])) / n if len(c) == 2 and n else None


def bias_index(table: Table) -> float | None:
    """|C01 - C10| / n, 2 x 2 tables only (else None): at equal p_o kappa is *higher* when disagreements are
    lopsided.

    >>> bias_index([[40, 10], [0, 50]])
    0.1
    """
    c = _counts(table)
    n = int(c.sum())
    return abs(int(c[0, 1]) - int(c[1, 0])) / n if len(c) == 2 and n else None


def judge_errors(table: Table, labels: Sequence, positive: Any) -> dict[str, int | float | None]:
    """The judge's errors taking the human (rows) as truth, for a ``positive`` label (e.g. ``"match"``).

    ``judge_lenient`` = the judge says ``positive`` and the human does not; ``judge_strict`` = the human says
    ``positive`` and the judge does not; ``judge_tpr`` / ``judge_tnr`` = the judge's true positive / negative rate,
    None when the human never / always says ``positive``. A ``positive`` outside ``labels`` was never said.

    >>> judge_errors([[45, 5], [15, 35]], ["match", "no-match"], "match")
    {'judge_lenient': 15, 'judge_strict': 5, 'judge_tpr': 0.9, 'judge_tnr': 0.7}
    """
    c = _counts(table)
    n = int(c.sum())
    if positive not in labels:
        return {"judge_lenient": 0, "judge_strict": 0, "judge_tpr": None, "judge_tnr": 1.0 if n else None}
    p = list(labels).index(positive)
    human_pos, judge_pos, both = int(c[p].sum()), int(c[:, p].sum()), int(c[p, p])
    return {"judge_lenient": judge_pos - both, "judge_strict": human_pos - both,
            "judge_tpr": both / human_pos if human_pos else None,
            "judge_tnr": (n - human_pos - judge_pos + both) / (n - human_pos) if n - human_pos else None}


def judge_above_below(table: Table) -> tuple[int, int]:
    """On an ordered scale: (items the judge put above the human, items it put below): the strict upper and lower
    triangles of the table.

    >>> judge_above_below([[3, 2, 1], [0, 4, 0], [1, 0, 5]])
    (3, 1)
    """
    c = _counts(table)
    return int(np.triu(c, 1).sum()), int(np.tril(c, -1).sum())


def single_label_note(table: Table, labels: Sequence) -> str | None:
    """The sentence to show instead of kappa when a rater used a single label (kappa is then 0 or undefined by
    construction); None otherwise.

    >>> single_label_note([[8, 2], [0, 0]], ["match", "no-match"])
    "one label only: the rows rater used only 'match' — kappa cannot tell agreement from chance here ..."
    >>> single_label_note([[8, 2], [1, 0]], ["match", "no-match"]) is None
    True
    """
    c = _counts(table)
    marginals = (("rows", c.sum(axis=1)), ("columns", c.sum(axis=0)))
    one_sided = [(who, labels[int(np.argmax(m))]) for who, m in marginals if int((m > 0).sum()) == 1]
    if not one_sided:
        return None
    return ("one label only: " + "; ".join(f"the {who} rater used only {label!r}" for who, label in one_sided)
            + " — kappa cannot tell agreement from chance here (it is 0 or undefined by construction); review "
              "decisions with another label")


# --------------------------------------------------------------------------------------------------------------------
# Cluster-bootstrap intervals (the resampling itself is `scoring.stats.bootstrap`)


def _disagreement_weights(k: int, *, quadratic: bool) -> np.ndarray:
    """Integer disagreement weights: 1 - identity (Cohen's kappa) or (i - j)^2 (quadratic weighted kappa)."""
    i, j = np.indices((k, k))
    return ((i - j) ** 2 if quadratic else (i != j)).astype(np.float64)


def _kappa_from_tables(tables: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted kappa of a stack of count tables, shape (R, k, k).

    kappa_w = 1 - sum(w * O) / sum(w * E), with O the observed and E = outer(row, col) / n the
    expected counts; with w = 1 - I this is Cohen's (p_o - p_e) / (1 - p_e). Scaled by n so that,
    for integer counts and weights, the undefined case sum(w * E) == 0 is tested exactly.

    Returns:
        ``(kappas, defined)``: kappas for the tables where it is defined, and the boolean mask.
    """
    n = tables.sum(axis=(1, 2))
    rows = tables.sum(axis=2)
    cols = tables.sum(axis=1)
    observed = np.einsum("rij,ij->r", tables, weights) * n
    expected = np.einsum("ri,rj,ij->r", rows, cols, weights)
    defined = expected > 0
    return 1.0 - observed[defined] / expected[defined], defined


def kappas_of_tables(tables: np.ndarray, *, quadratic: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa (or, with ``quadratic``, the quadratic-weighted kappa) of each count table in a stack of shape
    (R, k, k), as `cohen_kappa` / `quadratic_weighted_kappa` define them: ``(kappas of the defined tables, mask)``.

    >>> k, ok = kappas_of_tables(np.array([[[20, 20], [10, 50]], [[5, 0], [0, 0]]]))
    >>> [round(float(x), 4) for x in k], ok.tolist()
    ([0.3478], [True, False])
    """
    tables = np.asarray(tables, dtype=np.float64)
    return _kappa_from_tables(tables, _disagreement_weights(tables.shape[1], quadratic=quadratic))


def _cluster_bootstrap_tables(
    codes_a: np.ndarray, codes_b: np.ndarray, cluster_codes: np.ndarray, k: int, n_resamples: int, seed: int | None
) -> np.ndarray:
    """Confusion tables of ``n_resamples`` cluster-bootstrap resamples, shape (n_resamples, k, k): each cluster is
    summarised by its own k x k count table and a resample adds up the tables of the clusters it draws
    (`scoring.stats.bootstrap.resampled_sums`; it depends only on the multiset of cluster tables)."""
    n_clusters = int(cluster_codes.max()) + 1
    cells = k * k
    per_cluster = np.bincount(cluster_codes * cells + codes_a * k + codes_b, minlength=n_clusters * cells)
    return resampled_sums(per_cluster.reshape(n_clusters, cells), n_resamples, seed).reshape(n_resamples, k, k)


def _bootstrap_intervals(codes_a: np.ndarray, codes_b: np.ndarray, cluster_codes: np.ndarray, k: int, *,
                         n_resamples: int, seed: int | None, kappa_defined: bool,
                         ordinal: bool) -> tuple[dict[str, Any], list[str]]:
    """``raw_agreement_cluster_ci``, ``kappa_ci``, ``kappa_ci_skipped`` and ``weighted_kappa_ci`` from one set of
    cluster-bootstrap resamples, and the sentences saying why an interval is missing."""
    if not n_resamples:
        return {}, []
    out: dict[str, Any] = {}
    tables = None
    if int(cluster_codes.max()) >= 1:  # two clusters or more
        tables = _cluster_bootstrap_tables(codes_a, codes_b, cluster_codes, k, n_resamples, seed)
        agreed = np.trace(tables, axis1=1, axis2=2) / np.maximum(tables.sum(axis=(1, 2)), 1)
        out["raw_agreement_cluster_ci"] = percentile_interval(agreed, CONFIDENCE)
    if not kappa_defined:
        return out, ["kappa_ci is undefined because kappa is"]
    if tables is None:
        return out, ["kappa_ci needs at least two clusters to resample"]
    kappas, defined = _kappa_from_tables(tables, _disagreement_weights(k, quadratic=False))
    n_valid = int(defined.sum())
    out["kappa_ci_skipped"] = n_resamples - n_valid
    if n_valid < MIN_VALID_RESAMPLE_FRACTION * n_resamples:
        return out, [f"kappa_ci is undefined: only {n_valid} of {n_resamples} bootstrap resamples had a defined kappa"
                     f" (need {MIN_VALID_RESAMPLE_FRACTION:.0%})"]
    out["kappa_ci"] = percentile_interval(kappas, CONFIDENCE)
    if ordinal:
        weighted, _ = _kappa_from_tables(tables, _disagreement_weights(k, quadratic=True))
        out["weighted_kappa_ci"] = percentile_interval(weighted, CONFIDENCE)
    return out, []


# --------------------------------------------------------------------------------------------------------------------
# Two raters

PAIR_KEYS = (
    "n", "n_excluded", "n_clusters", "raw_agreement", "raw_agreement_ci", "kappa", "kappa_ci", "kappa_ci_skipped",
    "pabak", "ac1", "weighted_kappa", "weighted_kappa_ci", "prevalence_index", "bias_index", "judge_lenient",
    "judge_strict", "judge_tpr", "judge_tnr", "judge_higher", "judge_lower", "confusion", "reason", "degenerate",
    "raw_agreement_cluster_ci",
)  # fmt: skip
"""The keys of every `pair_stats` result (None where not asked for or undefined)."""


def _cluster_codes(clusters: list | None, kept: np.ndarray, n: int) -> np.ndarray:
    """Cluster positions (0, 1, ... in order of appearance) of the kept items; every item its own without clusters."""
    if clusters is None:
        return np.arange(n)
    index: dict[Any, int] = {}
    return np.fromiter((index.setdefault(c, len(index)) for c, keep in zip(clusters, kept, strict=True) if keep),
                       dtype=np.int64, count=n)


def pair_stats(
    a: Sequence[str],
    b: Sequence[str],
    *,
    labels: Sequence[str] | None = None,
    clusters: Sequence[Hashable] | None = None,
    ordinal: bool = False,
    n_resamples: int = 2000,
    seed: int | None = 0,
    positive: str | None = None,
) -> dict:
    """Agreement between a human (``a``) and a judge (``b``) on the same items: every statistic of their confusion
    table, each computed by its own function above, with cluster-bootstrap intervals.

    - ``raw_agreement`` (`raw_agreement`), with a Wilson 95% interval ``raw_agreement_ci``
      (`scoring.stats.intervals.wilson_interval`; decisions independent) and ``raw_agreement_cluster_ci``, the
      percentile interval of the same cluster bootstrap as kappa's (decisions of one document are not
      independent: prefer this one when ``clusters`` is given).
    - ``degenerate`` (`single_label_note`): set when one rater used a single label, saying so in words.
    - ``kappa`` (`cohen_kappa`) and ``kappa_ci``: the 95% percentile interval of kappa over ``n_resamples``
      cluster-bootstrap resamples (`scoring.stats.bootstrap`; Davison & Hinkley 1997, 3.8): whole clusters
      (documents) are drawn with replacement and keep all their decisions. ``kappa_ci_skipped`` counts resamples
      where kappa was undefined (they are left out). Computed in NumPy from summed per-cluster tables, not by
      calling sklearn per resample.
    - ``pabak`` (`pabak`), ``ac1`` (`gwet_ac1`), ``prevalence_index`` and ``bias_index`` (2 x 2 tables only).
    - With ``positive``: ``judge_lenient``, ``judge_strict``, ``judge_tpr``, ``judge_tnr`` (`judge_errors`).
    - With ``ordinal=True``: ``weighted_kappa`` (`quadratic_weighted_kappa`), its bootstrap interval
      ``weighted_kappa_ci``, and ``judge_higher`` / ``judge_lower`` (`judge_above_below`).

    Undefined (None, with ``reason``): every statistic when n == 0 (``"no decisions reviewed"``); the others as
    their functions say; a bootstrap interval when there are fewer than two clusters, or fewer than
    ``MIN_VALID_RESAMPLE_FRACTION`` of the resamples have a defined kappa.

    Args:
        a: Human labels, one per decision.
        b: Judge labels for the same decisions, same order.
        labels: Label set and order. Decisions with a label outside it (from either rater) are left
            out and counted in ``n_excluded``. Default: every label seen (numeric order when all read
            as numbers). Name the full label set here when a group may use a single label (PABAK and
            AC1 need k >= 2) and, for ``ordinal=True``, the full scale (weights use positions).
        clusters: Cluster id per decision (e.g. the document id) for the bootstrap. Default: every
            decision is its own cluster.
        ordinal: Treat labels as an ordered scale and add the weighted-kappa outputs. Labels must
            read as numbers unless ``labels`` gives the order.
        n_resamples: Bootstrap resamples; 0 skips the intervals.
        seed: Seed for ``numpy.random.default_rng``; a fixed seed gives the same interval every time.
        positive: The "positive" label (e.g. ``"match"``) for the lenient/strict counts and TPR/TNR.

    Returns:
        A dict with the `PAIR_KEYS`: the statistics above, ``n``, ``n_excluded``, ``n_clusters``, ``confusion``
        (as `confusion` returns it) and ``reason`` (None, or the "; "-joined sentences explaining each None that
        was asked for). Keys for options not asked for are None.

    Raises:
        ValueError: On mismatched lengths, a None label, repeated ``labels``, non-numeric ordinal
            labels without an order, or a negative ``n_resamples``.

    Example:
        >>> s = pair_stats(["match"] * 90 + ["no-match"] * 5 + ["match"] * 5,
        ...                ["match"] * 90 + ["match"] * 5 + ["no-match"] * 5, n_resamples=0)
        >>> s["raw_agreement"], round(s["kappa"], 4), round(s["pabak"], 2), round(s["ac1"], 4)
        (0.9, -0.0526, 0.8, 0.8895)
    """
    fn = "pair_stats"
    a, b = _check_pair(a, b, fn)
    if clusters is not None:
        clusters = clusters.tolist() if isinstance(clusters, np.ndarray) else list(clusters)
        if len(clusters) != len(a):
            raise ValueError(f"{fn}: clusters must have one id per decision, got {len(clusters)} for {len(a)}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) or n_resamples < 0:
        raise ValueError(f"{fn}: n_resamples must be a non-negative integer, got {n_resamples!r}")
    labels = _resolve_labels(a, b, labels, ordinal=ordinal, fn=fn)
    k = len(labels)
    codes_a, codes_b, kept = _encode(a, b, labels)
    n = len(codes_a)
    cluster_codes = _cluster_codes(clusters, kept, n)
    table = _table(codes_a, codes_b, k)
    out: dict[str, Any] = dict.fromkeys(PAIR_KEYS)
    out |= {"n": n, "n_excluded": len(a) - n, "n_clusters": int(cluster_codes.max()) + 1 if n else 0,
            "confusion": {"labels": labels, "counts": table.tolist()}}
    if n == 0:
        out["reason"] = NO_DECISIONS
        return out

    out |= {"raw_agreement": raw_agreement(table), "raw_agreement_ci": wilson_interval(int(np.trace(table)), n),
            "degenerate": single_label_note(table, labels), "kappa": cohen_kappa(table), "pabak": pabak(table),
            "ac1": gwet_ac1(table), "prevalence_index": prevalence_index(table), "bias_index": bias_index(table)}
    reasons = [why for missing, why in ((out["kappa"] is None, KAPPA_SINGLE_LABEL), (k < 2, ONE_CATEGORY),
                                        (k != 2, NOT_2X2)) if missing]
    if positive is not None:
        out |= judge_errors(table, labels, positive)
        if out["judge_tpr"] is None:
            reasons.append(f"judge_tpr is undefined: the human never says {positive!r}")
        if out["judge_tnr"] is None:
            reasons.append(f"judge_tnr is undefined: the human always says {positive!r}")
    if ordinal:
        out["weighted_kappa"] = quadratic_weighted_kappa(table)
        out["judge_higher"], out["judge_lower"] = judge_above_below(table)
    intervals, missing = _bootstrap_intervals(codes_a, codes_b, cluster_codes, k, n_resamples=n_resamples, seed=seed,
                                              kappa_defined=out["kappa"] is not None, ordinal=ordinal)
    out |= intervals
    out["reason"] = "; ".join(reasons + missing) or None
    return out


# --------------------------------------------------------------------------------------------------------------------
# Many raters, missing ratings


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float | np.floating) and math.isnan(value))


def krippendorff_alpha_with_reason(
    reliability_data: Sequence[Sequence[Any]], *, level: str = "nominal", labels: Sequence[Any] | None = None
) -> tuple[float | None, str | None]:
    """Krippendorff's alpha and, when it is undefined, why.

    alpha = 1 - D_o / D_e: observed over expected disagreement among all pairable values (values
    from units rated by two or more raters), with the distance of the chosen level of measurement.
    Computed by ``krippendorff.alpha`` (fast-krippendorff). Any number of raters; missing ratings
    allowed. Krippendorff's guidance: rely on alpha >= 0.800, draw tentative conclusions only from
    alpha >= 0.667.

    Labels are mapped to numbers first: ``nominal`` uses arbitrary integer codes; ``ordinal`` uses
    ranks, in the order of ``labels`` if given, else numeric order (labels must then read as numbers);
    ``interval`` and ``ratio`` use the numeric values themselves.

    Undefined (None) when no unit has two or more ratings, or when all pairable ratings have the same
    value (D_e = 0).

    Args:
        reliability_data: Rows are raters, columns are units; ``None`` or NaN marks a missing rating.
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.
        labels: Ordered value domain for ``ordinal`` (e.g. ``["incorrect", "partial", "correct"]``);
            for ``nominal`` it only restricts the allowed values. Not used for interval and ratio.

    Returns:
        ``(alpha, None)`` or ``(None, reason)``.

    Raises:
        ValueError: If ``level`` is unknown, rows differ in length, a value is outside ``labels``,
            or labels cannot be ordered / read as numbers for the level asked.

    Reference:
        Krippendorff (2011); Hayes & Krippendorff (2007), Communication Methods and Measures 1(1), 77-89.
    """
    fn = "krippendorff_alpha"
    _check_level(level, fn)
    data = [[_plain(v) for v in row] for row in reliability_data]
    n_units = len(data[0]) if data else 0
    if any(len(row) != n_units for row in data):
        raise ValueError(f"{fn}: every rater row must have one entry per unit; got lengths {[len(r) for r in data]}")
    present = [v for row in data for v in row if not _is_missing(v)]

    if level in ("nominal", "ordinal"):
        if labels is not None:
            order = [_plain(x) for x in labels]
            allowed = set(order)
            outside = sorted({str(v) for v in present if v not in allowed})
            if outside:
                raise ValueError(f"{fn}: values {outside} are not in labels {order!r}")
        else:
            order = _sorted_labels(present)
            if level == "ordinal" and any(_as_number(v) is None for v in order):
                raise ValueError(
                    f"{fn}: level='ordinal' needs values that read as numbers or an order through labels=;"
                    f" got {order!r}"
                )
        code = {v: float(i) for i, v in enumerate(order)}
        to_number = code.__getitem__
    else:
        bad = sorted({str(v) for v in present if _as_number(v) is None})
        if bad:
            raise ValueError(f"{fn}: level={level!r} needs numeric values; got {bad}")
        to_number = _as_number

    matrix = np.array(
        [[np.nan if _is_missing(v) else to_number(v) for v in row] for row in data], dtype=np.float64
    ).reshape(len(data), n_units)
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    if not pairable.any():
        return None, NO_PAIRABLE_UNIT
    values = matrix[:, pairable]
    if len(np.unique(values[~np.isnan(values)])) < 2:
        return None, ALPHA_SINGLE_VALUE
    value = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    if math.isnan(value):  # pragma: no cover - guarded above; kept so NaN can never leak out
        return None, ALPHA_SINGLE_VALUE
    return value, None


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]], *, level: str = "nominal", labels: Sequence[Any] | None = None
) -> float | None:
    """Krippendorff's alpha (a score: 1 = perfect agreement, 0 = chance), or None when undefined.

    See `krippendorff_alpha_with_reason` for the formula, arguments and undefined cases; call it to
    learn why a None came back.

    Raises:
        ValueError: If ``level`` is not one of ``"nominal"``, ``"ordinal"``, ``"interval"``, ``"ratio"``
            (checked before anything else), or the data cannot be read at that level.

    Example:
        >>> # Krippendorff (2011), 3 raters x 15 units with missing ratings (also Wikipedia's example).
        >>> data = [[None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
        ...         [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
        ...         [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4]]
        >>> round(krippendorff_alpha(data), 3), round(krippendorff_alpha(data, level="interval"), 3)
        (0.691, 0.811)
    """
    _check_level(level, "krippendorff_alpha")
    return krippendorff_alpha_with_reason(reliability_data, level=level, labels=labels)[0]


def multi_rater_stats(
    ratings_by_unit: Mapping[str, Mapping[str, Any]], *, level: str = "nominal", labels: Sequence[Any] | None = None
) -> dict:
    """Krippendorff's alpha for any number of raters with missing ratings (e.g. human vs human).

    Args:
        ratings_by_unit: ``{unit_id: {rater: label}}``; a rater may skip a unit (or give None).
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.
        labels: Ordered label domain, passed to `krippendorff_alpha_with_reason`.

    Returns:
        ``{"n_units", "n_raters", "n_pairable_units", "alpha", "reason"}``; ``n_pairable_units`` counts
        units with two or more ratings, the only ones alpha uses. ``alpha`` is None (with ``reason``)
        when undefined, as in `krippendorff_alpha_with_reason`.

    Raises:
        ValueError: If ``level`` is unknown or the labels cannot be read at that level.

    Example:
        >>> multi_rater_stats({"u1": {"ann": "match", "bob": "match"},
        ...                    "u2": {"ann": "no-match", "bob": "no-match", "cy": "no-match"},
        ...                    "u3": {"ann": "match"}})
        {'n_units': 3, 'n_raters': 3, 'n_pairable_units': 2, 'alpha': 1.0, 'reason': None}
    """
    _check_level(level, "multi_rater_stats")
    units = list(ratings_by_unit)
    raters = sorted({r for ratings in ratings_by_unit.values() for r in ratings}, key=str)
    data = [[ratings_by_unit[u].get(r) for u in units] for r in raters]
    pairable = sum(1 for u in units if sum(not _is_missing(v) for v in ratings_by_unit[u].values()) >= 2)
    alpha, reason = krippendorff_alpha_with_reason(data, level=level, labels=labels)
    return {
        "n_units": len(units),
        "n_raters": len(raters),
        "n_pairable_units": pairable,
        "alpha": alpha,
        "reason": reason,
    }


def alpha_interval(ratings_by_unit: Mapping[str, Mapping[str, Any]], clusters: Mapping[str, Hashable], *,
                   level: str = "nominal", labels: Sequence[Any] | None = None, n_resamples: int = 1000,
                   seed: int = 0) -> list[float] | None:
    """A 95% percentile interval of Krippendorff's alpha from a cluster bootstrap: the clusters (documents) are
    drawn with replacement and a cluster drawn twice brings its units twice. None when fewer than
    `MIN_VALID_RESAMPLE_FRACTION` of the resamples have alpha defined.

    >>> r = {f"u{i}": {"a": str(i % 2), "b": str(i % 2 if i % 5 else 1 - i % 2)} for i in range(40)}
    >>> lo, hi = alpha_interval(r, {u: u for u in r}, n_resamples=200)
    >>> lo < multi_rater_stats(r)["alpha"] < hi
    True
    """
    units = list(ratings_by_unit)
    by_cluster: dict[Hashable, list[str]] = {}
    for u in units:
        by_cluster.setdefault(clusters[u], []).append(u)
    keys = list(by_cluster)
    raters = sorted({r for ratings in ratings_by_unit.values() for r in ratings}, key=str)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        drawn = [u for j in rng.integers(len(keys), size=len(keys)) for u in by_cluster[keys[j]]]
        data = [[ratings_by_unit[u].get(r) for u in drawn] for r in raters]
        alpha, _ = krippendorff_alpha_with_reason(data, level=level, labels=labels)
        if alpha is not None:
            values.append(alpha)
    if not keys or len(values) < MIN_VALID_RESAMPLE_FRACTION * n_resamples:
        return None
    return percentile_interval(np.array(values), CONFIDENCE)


# --------------------------------------------------------------------------------------------------------------------
# Per-group report


ROW_KEYS = ("kind", "type", "doc", "human", "judge")


def group_stats(
    rows: Iterable[Mapping[str, Any]],
    *,
    ordinal_kinds: Iterable[str] | Mapping[str, Sequence[str]] = (),
    positive: str | Mapping[str, str] | None = "match",
    n_resamples: int = 2000,
    seed: int | None = 0,
) -> dict[str, dict]:
    """Human-vs-judge `pair_stats` overall, per kind and per kind/type, bootstrapped by document.

    Groups: ``"all"``, then each ``kind``, each followed by its ``f"{kind}/{type}"`` groups (sorted).
    Every group uses ``clusters`` = the rows' ``doc``, so the kappa intervals resample documents.
    A kind's groups share one label set (the labels seen anywhere in that kind), so a type where
    everyone said ``match`` still has k = 2 for PABAK and AC1; ``"all"`` uses every label seen.

    Kinds in ``ordinal_kinds`` get ``ordinal=True`` (weighted kappa, judge higher/lower) and no
    ``positive``; the others get ``positive``. ``"all"`` is ordinal only if every kind is.

    Args:
        rows: Reviewed decisions, each a mapping with ``kind``, ``type``, ``doc``, ``human`` (the
            effective human label) and ``judge``. Leave unreviewed decisions out.
        ordinal_kinds: Kinds rated on an ordered scale; either names (labels must read as numbers) or
            a mapping ``{kind: [labels in order]}``, which also fixes the full scale.
        positive: Positive label for the lenient/strict counts of non-ordinal groups, or one per kind
            (``{kind: label}``); ``"all"`` uses it only when every kind shares it.
        n_resamples: Bootstrap resamples per group.
        seed: Bootstrap seed (the same for every group).

    Returns:
        ``{group_name: pair_stats(...)}`` in the order described above.

    Raises:
        ValueError: If a row lacks a key or has a None label (the message gives the row number), or
            as `pair_stats` does.

    Example:
        >>> rows = [{"kind": "entity", "type": "task", "doc": "d1", "human": "match", "judge": "match"},
        ...         {"kind": "entity", "type": "task", "doc": "d2", "human": "no-match", "judge": "match"}]
        >>> stats = group_stats(rows, n_resamples=0)
        >>> list(stats), stats["entity/task"]["judge_lenient"]
        (['all', 'entity', 'entity/task'], 1)
    """
    fn = "group_stats"
    table: list[tuple[Any, ...]] = []
    for number, row in enumerate(rows):
        missing = [key for key in ROW_KEYS if key not in row]
        if missing:
            raise ValueError(f"{fn}: row {number} lacks {', '.join(missing)}")
        for key in ("human", "judge"):
            if row[key] is None:
                raise ValueError(f"{fn}: row {number} has no {key} label; pass reviewed decisions only")
        table.append(tuple(_plain(row[key]) for key in ROW_KEYS))

    orders = dict(ordinal_kinds) if isinstance(ordinal_kinds, Mapping) else dict.fromkeys(ordinal_kinds)
    members: dict[str, list[int]] = {"all": list(range(len(table)))}
    types_of: dict[str, set] = {}
    for i, (kind, typ, *_rest) in enumerate(table):
        members.setdefault(kind, []).append(i)
        if typ is not None and typ != "":
            types_of.setdefault(kind, set()).add(typ)
            members.setdefault(f"{kind}/{typ}", []).append(i)

    def labels_for(indices: list[int], kind: str | None) -> list | None:
        if kind is not None and orders.get(kind) is not None:
            return list(orders[kind])
        seen = [table[i][j] for i in indices for j in (3, 4)]
        return _sorted_labels(seen)

    def positive_for(kind: str | None) -> str | None:
        if not isinstance(positive, Mapping):
            return positive
        if kind is not None:
            return positive.get(kind)
        shared = {positive.get(k) for k in {t[0] for t in table}}
        return shared.pop() if len(shared) == 1 else None

    def run(indices: list[int], labels: list | None, ordinal: bool, kind: str | None = None) -> dict:
        pos = positive_for(kind)
        if pos is not None and labels is not None and pos not in labels:
            pos = None
        return pair_stats(
            [table[i][3] for i in indices],
            [table[i][4] for i in indices],
            labels=labels,
            clusters=[table[i][2] for i in indices],
            ordinal=ordinal,
            n_resamples=n_resamples,
            seed=seed,
            positive=None if ordinal else pos,
        )

    kinds = sorted({t[0] for t in table}, key=str)
    # "all" is ordinal only when every kind is and they share one scale: one explicit order, or numeric labels.
    all_labels = labels_for(members["all"], None)
    explicit = {tuple(orders[kind]) for kind in kinds if orders.get(kind) is not None}
    all_ordinal = bool(kinds) and all(kind in orders for kind in kinds)
    if all_ordinal and len(explicit) == 1 and all(orders.get(kind) is not None for kind in kinds):
        all_labels = list(next(iter(explicit)))
    elif all_ordinal and (explicit or any(_as_number(x) is None for x in all_labels)):
        all_ordinal = False
    out = {"all": run(members["all"], all_labels, all_ordinal)}
    for kind in kinds:
        ordinal = kind in orders
        labels = labels_for(members[kind], kind)
        out[str(kind)] = run(members[kind], labels, ordinal, kind)
        for typ in sorted(types_of.get(kind, ()), key=str):
            name = f"{kind}/{typ}"
            out[name] = run(members[name], labels, ordinal, kind)
    return out
