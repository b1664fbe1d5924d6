"""Cross-fitting by document and the paired change in agreement it is judged by (docs: tables-and-trained-judges.md
§2, issue #37).

- `document_folds`: K folds of the reviewed documents, from their ids and a seed alone (never from labels), so the
  same reviews and seed always give the same split, and changing a label cannot move a document between folds.
- `paired_kappa_change`: kappa of the same decisions against the same human labels under two judges (before and
  after), and the change with a paired bootstrap interval that resamples documents (both judges' tables drawn
  together, so the pairing is kept).
- `improvement_shown`: the one rule: an improvement is claimed only when the change's interval excludes 0 on the
  side of improvement.
- `cross_fitted_totals`: the difference estimator when the judge was improved on the very reviews that correct it
  (cross-prediction-powered inference, Zrnic & Candès 2024; tables-and-trained-judges.md §2): each reviewed block's
  residual uses the fold judge that never saw it, every block's judge-only part the folds' average judge.

Pure numpy; imports neither families nor judges.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from scoring.nouns import Noun
from scoring.stats.agreement import CONFIDENCE, MIN_VALID_RESAMPLE_FRACTION, kappas_of_tables
from scoring.stats.bootstrap import percentile_interval, resampled_sums
from scoring.stats.difference import Totals, Variance, Vector, difference_totals


def document_folds(doc_ids: Sequence[str], k: int, seed: int) -> list[list[str]]:
    """The distinct documents split into `k` folds of near-equal size: sorted, shuffled by `numpy`'s generator with
    `seed`, dealt out in turn; each fold sorted. Depends on the set of ids and the seed only.

    Raises:
        ValueError: k < 2, or fewer documents than folds.

    >>> document_folds(["d1", "d2", "d3", "d4"], 2, seed=0) == document_folds(["d4", "d3", "d2", "d1"], 2, seed=0)
    True
    >>> sorted(len(f) for f in document_folds([f"d{i}" for i in range(7)], 3, seed=1))
    [2, 2, 3]
    """
    docs = sorted(set(doc_ids))
    if k < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {k}")
    if len(docs) < k:
        raise ValueError(f"{Noun('document').count(len(docs))} cannot fill {k} folds")
    order = np.random.default_rng(seed).permutation(len(docs))
    return [sorted(docs[i] for i in order[f::k]) for f in range(k)]


def _encode(values: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    index = {lab: i for i, lab in enumerate(labels)}
    return np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))


def paired_kappa_change(human: Sequence[str], before: Sequence[str], after: Sequence[str],
                        docs: Sequence[Hashable], labels: Sequence[str], *, ordinal: bool = False,
                        n_resamples: int = 2000, seed: int = 0) -> dict:
    """Kappa (quadratic-weighted when `ordinal`) of `before` and of `after` against `human` on the same decisions,
    the change after − before, and its percentile interval from a paired cluster bootstrap over `docs`.

    Every label must be one of `labels` (the scale, in order for ordinal kinds). Returns ``{"kappa_before",
    "kappa_after", "delta_kappa", "delta_kappa_ci", "n", "n_documents", "reason"}``; a kappa that is undefined (one
    label on both sides) is None, and so are the change and its interval, with the reason.

    >>> h = ["y", "n"] * 10
    >>> r = paired_kappa_change(h, ["y"] * 10 + ["n"] * 10, h, [i // 2 for i in range(20)], ["y", "n"])
    >>> r["kappa_before"], r["kappa_after"], r["delta_kappa"]
    (0.0, 1.0, 1.0)
    """
    n = len(human)
    if not n == len(before) == len(after) == len(docs):
        raise ValueError("paired_kappa_change: human, before, after and docs must have one entry per decision")
    k = len(labels)
    out: dict = {"kappa_before": None, "kappa_after": None, "delta_kappa": None, "delta_kappa_ci": None, "n": n,
                 "n_documents": len(set(docs)), "reason": None}
    if n == 0:
        out["reason"] = "no decisions to compare"
        return out
    h, b, a = _encode(human, labels), _encode(before, labels), _encode(after, labels)
    index: dict[Hashable, int] = {}
    cluster = np.fromiter((index.setdefault(d, len(index)) for d in docs), dtype=np.int64, count=n)
    g, cells = len(index), k * k
    per_doc = np.zeros((g, 2 * cells))
    np.add.at(per_doc, (cluster, h * k + b), 1)
    np.add.at(per_doc, (cluster, cells + h * k + a), 1)
    totals = per_doc.sum(axis=0)
    kb, ok_b = kappas_of_tables(totals[None, :cells].reshape(1, k, k), quadratic=ordinal)
    ka, ok_a = kappas_of_tables(totals[None, cells:].reshape(1, k, k), quadratic=ordinal)
    out["kappa_before"] = float(kb[0]) if ok_b[0] else None
    out["kappa_after"] = float(ka[0]) if ok_a[0] else None
    if out["kappa_before"] is None or out["kappa_after"] is None:
        out["reason"] = "kappa is undefined when both raters use a single label"
        return out
    out["delta_kappa"] = out["kappa_after"] - out["kappa_before"]
    if g < 2:
        out["reason"] = "the interval needs at least two documents to resample"
        return out
    sums = resampled_sums(per_doc, n_resamples, seed)
    kb_r, ok_b = kappas_of_tables(sums[:, :cells].reshape(-1, k, k), quadratic=ordinal)
    ka_r, ok_a = kappas_of_tables(sums[:, cells:].reshape(-1, k, k), quadratic=ordinal)
    both = ok_b & ok_a
    if both.sum() < MIN_VALID_RESAMPLE_FRACTION * n_resamples:
        out["reason"] = (f"only {int(both.sum())} of {n_resamples} bootstrap resamples had both kappas defined "
                         f"(need {MIN_VALID_RESAMPLE_FRACTION:.0%})")
        return out
    # the masks index the defined tables of each stack; keep the resamples where both are defined
    full_b = np.full(len(sums), np.nan)
    full_a = np.full(len(sums), np.nan)
    full_b[ok_b], full_a[ok_a] = kb_r, ka_r
    out["delta_kappa_ci"] = percentile_interval(full_a[both] - full_b[both], CONFIDENCE)
    return out


def improvement_shown(delta_kappa_ci: Sequence[float] | None) -> bool:
    """The claim rule: an improvement only when the change's whole interval lies above 0.

    >>> improvement_shown([0.02, 0.2]), improvement_shown([-0.01, 0.2]), improvement_shown(None)
    (True, False, False)
    """
    return delta_kappa_ci is not None and delta_kappa_ci[0] > 0


def cross_fitted_totals(fold_judge: Mapping[str, Sequence[Vector]], strata: Mapping[str, str],
                        sampled: Mapping[str, Vector], fold_of: Mapping[str, int], *,
                        certain: Mapping[str, Vector] | None = None, variance: Variance = "plain",
                        fold_spread: bool = True) -> Totals:
    """T̂ = Σ_{b∈s} c^H_b + Σ_{b∉s} c̄_b + Σ_h ((M_h − m_h)/m_h) Σ_{b∈s_h} (c^H_b − c^(−k(b))_b), with c^(−k)_b block
    b's judge-only vector under the judge fitted without fold k, c̄_b their average over the K folds and k(b) the
    fold of reviewed block b: reviewed blocks count as reviewed, the others by the average judge, corrected by the
    expanded cross-fitted residuals (a full review gives Σ c^H exactly). Its covariance is the single-run one (with
    the finite-population correction) of those residuals.

    It is `scoring.stats.difference.difference_totals` with each reviewed block's judge vector taken from its own
    fold's judge and every other block's from the average judge: one estimator, its strata, variance modes and
    delta method unchanged. The average judge moves with the reviews it was fitted on; with `fold_spread` (the
    default) the covariance adds the spread of the estimate across the fold judges, (K − 1)/K Σ_k (T_k − T̄)(T_k −
    T̄)ᵀ, T_k the estimate with fold judge k judging every block (Σ_{b∉s} c^(−k)_b + the expanded residuals of
    c^(−k)): how far the corrected estimate moves with the fit, not the judge total alone (which the residuals
    largely correct). bench/crossfit_coverage.py measures both.

    Args:
        fold_judge: for EVERY block, its K judge-only vectors, fold 0 .. K−1.
        strata: every block's stratum.
        sampled: human vectors of the blocks reviewed through the random sample.
        fold_of: each sampled block's fold.
        certain: human vectors of blocks known exactly (reviewed by hand, or without a decision): counted as they
            are, as in `difference_totals`; they add the same amount to every fold's estimate.

    >>> t = cross_fitted_totals({"a": [1, 3], "b": [0, 2], "c": [5, 5]}, dict.fromkeys("abc", "h"),
    ...                         {"a": 2, "b": 1}, {"a": 0, "b": 1})
    >>> float(t.total[0])  # 2 + 1 + 5 + (1/2)·((2 − 1) + (1 − 2))
    8.0
    """
    judge = {b: np.mean([np.atleast_1d(np.asarray(v, dtype=float)) for v in vs], axis=0)
             for b, vs in fold_judge.items()}
    for b in sampled:
        judge[b] = np.atleast_1d(np.asarray(fold_judge[b][fold_of[b]], dtype=float))
    certain = certain or {}
    tot = difference_totals(judge, strata, sampled, certain=certain, variance=variance)
    if not fold_spread or tot.cov is None or len(sampled) + len(certain) == len(fold_judge):
        return tot
    size: dict[str, int] = {}
    drawn: dict[str, int] = {}
    for b in fold_judge:
        if b not in certain:
            size[strata[b]] = size.get(strata[b], 0) + 1
    for b in sampled:
        drawn[strata[b]] = drawn.get(strata[b], 0) + 1
    per_fold = []
    for k in range(len(next(iter(fold_judge.values())))):  # the estimate if fold judge k judged every block
        t = sum(np.atleast_1d(np.asarray(vs[k], dtype=float)) for b, vs in fold_judge.items()
                if b not in sampled and b not in certain)
        for b, y in sampled.items():
            h = strata[b]
            t = t + (size[h] - drawn[h]) / drawn[h] * (np.atleast_1d(np.asarray(y, dtype=float))
                                                       - np.asarray(fold_judge[b][k], dtype=float))
        per_fold.append(t)
    dev = np.array(per_fold) - np.mean(per_fold, axis=0)
    k = len(per_fold)
    spread = (k - 1) / k * dev.T @ dev
    # a share of the variance with k − 1 degrees of freedom (`Totals.effective_df`; no stratum is named so)
    return replace(tot, cov=tot.cov + spread, parts={**tot.parts, "\x00fold spread": (spread, k)})
