"""The out-of-sample report of an improved judge: every number here compares, on the same reviewed decisions, the
original judge's labels and the cross-fitted ones (each decision labelled by the judge fitted without its document)
with the humans'.

- kappa before and after (quadratic-weighted for an ordinal scale) with document-bootstrap intervals
  (`scoring.stats.agreement.pair_stats`), the change with a paired document bootstrap
  (`scoring.stats.crossfit.paired_kappa_change`) and the claim rule (`improvement_shown`);
- TPR/TNR of a binary scale (per-label recall of the others) with Wilson intervals, both confusion matrices, the
  decisions each judge gets wrong;
- `headline_gap`: |judge-only − audited| of a headline metric over the reviewed documents, before and after.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from scoring.families.base import MetricCell, TaskFamily
from scoring.improve.crossfit import Apply, CrossFitted, Fit, Item, cross_fit, refit_deltas
from scoring.stats.agreement import CONFIDENCE, MIN_VALID_RESAMPLE_FRACTION, kappas_of_tables, pair_stats
from scoring.stats.bootstrap import percentile_interval
from scoring.stats.crossfit import improvement_shown, paired_kappa_change
from scoring.stats.intervals import wilson_interval

METHOD = ("K-fold cross-fitting by document; the change in kappa with a paired document bootstrap that re-runs the "
          "whole fit in every resample")
FIXED_METHOD = "paired document bootstrap with the cross-fitted judges held fixed (shown beside; claims too often)"
NO_IMPROVEMENT = "no improvement shown"


def _recalls(confusion: Mapping, labels: Sequence[str]) -> dict[str, dict]:
    """Per human label: how many of those decisions the judge labelled the same, with a Wilson interval."""
    out = {}
    for i, lab in enumerate(labels):
        row = confusion["counts"][i]
        n = sum(row)
        out[lab] = {"recall": row[i] / n if n else None, "ci": wilson_interval(row[i], n), "n": n}
    return out


def _side(human: list[str], judge: list[str], docs: list[str], labels: Sequence[str], scale: Sequence[str], *,
          ordinal: bool, positive: str | None, n_resamples: int, seed: int) -> dict:
    s = pair_stats(human, judge, labels=labels, clusters=docs, ordinal=ordinal, positive=positive,
                   n_resamples=n_resamples, seed=seed)
    recalls = _recalls(s["confusion"], labels)
    out = {"kappa": s["weighted_kappa"] if ordinal else s["kappa"],
           "kappa_ci": s["weighted_kappa_ci"] if ordinal else s["kappa_ci"],
           "statistic": "quadratic-weighted kappa" if ordinal else "Cohen's kappa",
           "confusion": s["confusion"], "recall": recalls}
    if positive is not None and len(scale) == 2:
        negative = next(lab for lab in scale if lab != positive)
        out |= {"tpr": recalls[positive]["recall"], "tpr_ci": recalls[positive]["ci"],
                "tnr": recalls[negative]["recall"], "tnr_ci": recalls[negative]["ci"]}
    return out


def kappa_change(labels: Sequence[str], *, ordinal: bool) -> Callable[[Sequence[Item], Sequence[str]], float | None]:
    """kappa(humans, labels given) − kappa(humans, original judge) on some items; None when either is undefined.
    A judge label outside `labels` (unreadable) is one more category, as in `evaluate`."""
    index = {lab: i for i, lab in enumerate(labels)}
    k = len(labels) + 1

    def change(items: Sequence[Item], after: Sequence[str]) -> float | None:
        tables = np.zeros((2, k, k))
        for i, a in zip(items, after, strict=True):
            h = index[i.human]
            tables[0, h, index.get(i.judge, k - 1)] += 1
            tables[1, h, index.get(a, k - 1)] += 1
        kappas, defined = kappas_of_tables(tables, quadratic=ordinal)
        return float(kappas[1] - kappas[0]) if defined.all() else None

    return change


def cross_fitted_report(items: Sequence[Item], fit: Fit, apply: Apply, labels: Sequence[str], *, k: int, seed: int,
                        ordinal: bool = False, positive: str | None = None, n_resamples: int = 1000,
                        refit: bool = True) -> tuple[CrossFitted, dict]:
    """The whole pure pipeline every surface uses: cross-fit (`cross_fit`), the resampled changes with the fit re-run
    in each resample (`refit_deltas`, same folds), and `evaluate`. `labels` is the scale. `refit=False` (a fit that
    asks an LLM: a thousand refits would cost a thousand times the requests): the interval holds the cross-fitted
    judges fixed, and the report's `method` says so."""
    fitted = cross_fit(items, fit, apply, k=k, seed=seed)
    deltas = refit_deltas(items, fit, apply, fitted.folds, kappa_change(labels, ordinal=ordinal),
                          n_resamples=n_resamples, seed=seed) if refit else None
    return fitted, evaluate(items, fitted.after, labels, ordinal=ordinal, positive=positive,
                            n_resamples=n_resamples, seed=seed, resampled=deltas)


def evaluate(items: Sequence[Item], after: Mapping[int, str], labels: Sequence[str], *, ordinal: bool = False,
             positive: str | None = None, n_resamples: int = 2000, seed: int = 0,
             resampled: Sequence[float | None] | None = None) -> dict:
    """The before/after report on `items` with `after` (decision -> cross-fitted label): `kappa_before`,
    `kappa_after`, `delta_kappa`, `delta_kappa_ci`, `improved`, `reason`, `before` / `after` (kappa with interval,
    confusion, recalls, TPR/TNR), `disagreeing_before` / `disagreeing_after` (decision ids), `n_decisions`,
    `n_documents`, `method`.

    `labels` is the scale; a judge label outside it (unreadable) is added as one more category, so it counts as a
    disagreement. `resampled`: the change in resamples that re-ran the fit (`refit_deltas`); its percentile interval
    is then `delta_kappa_ci`, the one the claim rule reads, and the interval with the judges held fixed is kept
    beside as `delta_kappa_ci_fixed_judges`. Without it, the fixed-judges interval is the only one."""
    human = [i.human for i in items]
    before = [i.judge for i in items]
    fitted = [after[i.decision] for i in items]
    scale = list(labels)
    labels = scale + sorted({*before, *fitted} - set(scale))
    docs = [i.doc for i in items]
    change = paired_kappa_change(human, before, fitted, docs, labels, ordinal=ordinal, n_resamples=n_resamples,
                                 seed=seed)
    opts = {"ordinal": ordinal, "positive": positive, "n_resamples": n_resamples, "seed": seed}
    fixed_ci = change["delta_kappa_ci"]
    method = FIXED_METHOD
    if resampled is not None:
        method = METHOD
        valid = [d for d in resampled if d is not None]
        if change["delta_kappa"] is None:
            pass
        elif len(valid) < MIN_VALID_RESAMPLE_FRACTION * len(resampled):
            change = dict(change, delta_kappa_ci=None, reason=f"only {len(valid)} of {len(resampled)} resamples had "
                          "both kappas defined")
        else:
            change = dict(change, delta_kappa_ci=percentile_interval(np.array(valid), CONFIDENCE))
    improved = improvement_shown(change["delta_kappa_ci"])
    return {"method": method, "kappa_before": change["kappa_before"], "kappa_after": change["kappa_after"],
            "delta_kappa": change["delta_kappa"], "delta_kappa_ci": change["delta_kappa_ci"],
            "delta_kappa_ci_fixed_judges": fixed_ci, "fixed_judges_method": FIXED_METHOD,
            "n_decisions": len(items), "n_documents": change["n_documents"], "improved": improved,
            "reason": claim_reason(change, improved),
            "before": _side(human, before, docs, labels, scale, **opts),
            "after": _side(human, fitted, docs, labels, scale, **opts),
            "disagreeing_before": [i.decision for i in items if i.judge != i.human],
            "disagreeing_after": [i.decision for i in items if after[i.decision] != i.human]}


def claim_reason(change: Mapping, improved: bool) -> str:
    """The sentence that goes with the claim (or with its absence)."""
    ci = change["delta_kappa_ci"]
    if improved:
        return (f"improvement shown: out-of-sample kappa {change['kappa_before']:.3f} -> {change['kappa_after']:.3f}, "
                f"change {change['delta_kappa']:+.3f} (95% interval {ci[0]:+.3f} to {ci[1]:+.3f}, above 0)")
    if ci is None:
        return f"{NO_IMPROVEMENT}: the change in kappa has no interval ({change['reason']}); the old judge is kept"
    if ci[1] < 0:
        return (f"{NO_IMPROVEMENT}: the fitted judge is worse out of sample (change in kappa "
                f"{change['delta_kappa']:+.3f}, 95% interval {ci[0]:+.3f} to {ci[1]:+.3f}); the old judge is kept")
    return (f"{NO_IMPROVEMENT}: out-of-sample change in kappa {change['delta_kappa']:+.3f}, 95% interval "
            f"{ci[0]:+.3f} to {ci[1]:+.3f} does not exclude 0; the old judge is kept")


Labels = Mapping[tuple[str, str, str, str], str]


def headline_gap(task: TaskFamily, cell: MetricCell, payloads: Sequence[Mapping],
                 judge: Sequence[Labels], human: Sequence[Labels]) -> float | None:
    """|metric under the judge's labels − metric under the humans'| of one headline cell, over these documents
    (payload i with judge[i] and human[i]); None when the metric is undefined on either side."""
    judged = task.aggregate([task.counts(p, lab) for p, lab in zip(payloads, judge, strict=True)])
    audited = task.aggregate([task.counts(p, lab) for p, lab in zip(payloads, human, strict=True)])
    a, b = cell.value(judged), cell.value(audited)
    return None if a is None or b is None else abs(a - b)
