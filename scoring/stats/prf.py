"""Precision / recall / F1 from pooled counts, exactly as CHIMERA's `compute_eval_criteria`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

COUNT_KEYS = ("tp", "fp", "fn", "total_pred_ent", "pred_om", "total_gold_ent", "gold_om")
AVG_KEYS = ("precision", "recall", "f1", "gold_over_matching", "pred_over_matching", "fp_ratio")

Counts = dict[str, dict[str, int]]


def zero_counts(types: Iterable[str]) -> Counts:
    """One zeroed count record per type."""
    return {t: dict.fromkeys(COUNT_KEYS, 0) for t in types}


def add_counts(total: Counts, part: Mapping[str, Mapping[str, int]], sign: int = 1) -> None:
    """Add (or, with sign=-1, subtract) `part` into `total` in place."""
    for t, rec in part.items():
        dst = total.setdefault(t, dict.fromkeys(COUNT_KEYS, 0))
        for k, v in rec.items():
            dst[k] += sign * v


def criteria(counts: Mapping[str, Mapping[str, int]], undefined: float = 0) -> dict[str, dict]:
    """P/R/F1, over-matching ratios and fp ratio per type, plus their unweighted mean as `avg`.

    Undefined ratios (zero denominators) become `undefined` (0, as the reference scorer does).
    F1 in `avg` is the mean of per-type F1s, not the F1 of the mean P and R.
    """
    out: dict[str, dict] = {}
    for t, c in counts.items():
        tp, fp, fn = c["tp"], c["fp"], c["fn"]
        precision = tp / (tp + fp) if tp + fp > 0 else undefined
        recall = tp / (tp + fn) if tp + fn > 0 else undefined
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else undefined
        out[t] = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "gold_over_matching": c["gold_om"] / c["total_gold_ent"] if c["total_gold_ent"] > 0 else undefined,
            "pred_over_matching": c["pred_om"] / c["total_pred_ent"] if c["total_pred_ent"] > 0 else undefined,
            "fp_ratio": fp / (tp + fp) if tp + fp > 0 else undefined,
            "fp": fp,
            "tp": tp,
            "fn": fn,
        }
    avg = dict.fromkeys(AVG_KEYS, 0.0)
    for rec in out.values():
        for k in AVG_KEYS:
            avg[k] += rec[k]
    n = len(out)
    out["avg"] = {k: (v / n if n else undefined) for k, v in avg.items()}
    return out
