"""Scoring one paper (`compare_experiments` + `compute_multi_level_metrics`) and a run (micro aggregation over
papers, as the paper's `reporting._aggregate_multi_level_metrics` does), in the official numbers' shapes.

`compare` pairs materials under optional constraints; `paper_counts` turns the result into per-level counts
(tp / target / extracted, plus the measurement-level and cost totals); `level_metrics` turns summed counts into
P / R / F1 and the weighted overall score. Counts are plain nested dicts of numbers so the shell can sum them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from scoring.families.litxbench.match import (
    NONE,
    UNMATCHED_PENALTY,
    Constraints,
    Item,
    ItemMatch,
    MaterialPair,
    assign,
    config_items,
    configurations,
    events_of,
    material_cost,
    quantity_score,
    tolerance_blind,
    top_items,
    within_match,
)
from scoring.families.litxbench.model import Configuration, Material, Measurement, Paper, ProcessEvent

LEVELS = ("value", "measurement", "config", "process", "material")
OVERALL_WEIGHTS = {"value": 0.50, "config": 0.15, "process": 0.20, "material": 0.15}
"""Weights of the overall score (the measurement level is reported but not weighted)."""
SCORER = "litxbench official (compare_experiments + compute_multi_level_metrics + count_hallucinations)"
LITXBENCH_VERSION = "0.1.3"


@dataclass
class PaperResult:
    """`ExperimentComparisonResult` for one paper, plus the full cost matrix for review."""

    gold: list[Material]
    pred: list[Material]
    matched: list[tuple[int, int, MaterialPair]]
    unmatched_gold: list[int]
    unmatched_pred: list[int]
    cost: np.ndarray
    pairs: dict[tuple[int, int], MaterialPair]
    dropped: list[tuple[int, int]] = field(default_factory=list)
    forced: set[tuple[int, int]] = field(default_factory=set)


class Solver:
    """Pairs the materials of one gold and one predicted paper; caches each material pair's cost per constraints,
    so re-solving after a review recomputes only the pairs whose constraints changed."""

    def __init__(self, gold: Paper, pred: Paper) -> None:
        self.gold_materials = gold.materials
        self.pred_materials = pred.materials
        self._events_g = [events_of(m) for m in self.gold_materials]
        self._events_p = [events_of(m) for m in self.pred_materials]
        self._cache: dict[tuple[int, int, Constraints], MaterialPair] = {}
        self._blind: dict[tuple[int, int, Constraints], bool] = {}
        """Per official-tolerance pair: whether the corrected tolerance would compute the same pair."""

    def pair(self, i: int, j: int, cons: Constraints = NONE) -> MaterialPair:
        g, p = self.gold_materials[i], self.pred_materials[j]
        local = cons.within(g.path, p.path)
        key = (i, j, local)
        mp = self._cache.get(key)
        if mp is None:
            if len(self._cache) > 50000:
                self._cache.clear()
                self._blind.clear()
            if local.relative:
                # the corrected variant is the official pair itself unless some tolerance comparison differs
                official = replace(local, relative=False)
                mp = self._official(i, j, official)
                if not self._blind[(i, j, official)]:
                    mp = material_cost(g, p, local, (self._events_g[i], self._events_p[j]))
                self._cache[key] = mp
            else:
                mp = self._official(i, j, local)
        return mp

    def _official(self, i: int, j: int, local: Constraints) -> MaterialPair:
        key = (i, j, local)
        if key not in self._cache or key not in self._blind:
            g, p = self.gold_materials[i], self.pred_materials[j]
            self._cache[key], self._blind[key] = tolerance_blind(
                lambda: material_cost(g, p, local, (self._events_g[i], self._events_p[j])))
        return self._cache[key]

    def solve(self, cons: Constraints = NONE) -> PaperResult:
        """`compare_experiments` under constraints (material pairs by material path)."""
        gm, pm = self.gold_materials, self.pred_materials
        n, m = len(gm), len(pm)
        if n == 0:
            raise ValueError("gold paper has no materials")
        cost = np.full((n, m), UNMATCHED_PENALTY)
        pairs: dict[tuple[int, int], MaterialPair] = {}
        for i in range(n):
            for j in range(m):
                mp = self.pair(i, j, cons)
                pairs[(i, j)] = mp
                cost[i, j] = mp.cost
        if m == 0:
            return PaperResult(gm, pm, [], list(range(n)), [], cost, pairs)
        gi = {x.path: k for k, x in enumerate(gm)}
        pi = {x.path: k for k, x in enumerate(pm)}
        forced = [(gi[g], pi[p]) for g, p in cons.forced if g in gi and p in pi]
        forbidden = [(gi[g], pi[p]) for g, p in cons.forbidden if g in gi and p in pi]
        a = assign(cost, UNMATCHED_PENALTY, lambda c: c < UNMATCHED_PENALTY, forced, forbidden)
        return PaperResult(gm, pm, [(i, j, pairs[(i, j)]) for i, j in a.kept], a.unmatched_rows, a.unmatched_cols,
                           cost, pairs, a.dropped, a.forced)


# ---------------------------------------------------------------- value-level counting


def item_values(item: Item) -> int:
    """`_count_item_values`: sub-values of one item."""
    if item.type == "measurement":
        m: Measurement = item.obj
        return 1 + (m.temperature is not None) + (m.pressure is not None)
    if item.type == "composition":
        return len(item.obj.amounts)
    if item.type == "lattice":
        return 6
    return 1


def _pair_values(g: Item, p: Item, score: float, relative: bool) -> tuple[float, int, int]:
    """`_compare_item_values`: (tp, gold count, predicted count) of a matched pair."""
    if g.type == "measurement":
        gm, pm = g.obj, p.obj
        tc = ec = 1
        tp = score
        if gm.temperature is not None:
            tc += 1
        if pm.temperature is not None:
            ec += 1
        if gm.temperature is not None and pm.temperature is not None:
            tp += quantity_score(gm.temperature, pm.temperature, relative)
        if gm.pressure is not None:
            tc += 1
        if pm.pressure is not None:
            ec += 1
        if gm.pressure is not None and pm.pressure is not None:
            tp += quantity_score(gm.pressure, pm.pressure, relative)
        return tp, tc, ec
    if g.type == "composition":
        k = len(g.obj.amounts)
        return float(k), k, k
    if g.type == "lattice":
        return 6.0, 6, 6
    if g.type == "struct":
        return 1.0, 1, 1
    return score, 1, 1


def _config_field_values(cfg: Configuration) -> int:
    return (len(cfg.tags) if cfg.tags else 0) + (cfg.struct is not None) + (cfg.within is not None)


def _config_pair_values(g: Configuration, p: Configuration,
                        pairs: list[tuple[Configuration, Configuration]]) -> tuple[float, int, int]:
    tg = set(g.tags) if g.tags else set()
    tp_ = set(p.tags) if p.tags else set()
    tp = float(len(tg & tp_))
    tc, ec = len(tg), len(tp_)
    if g.struct is not None:
        tc += 1
    if p.struct is not None:
        ec += 1
    if g.struct is not None and p.struct is not None and g.struct == p.struct:
        tp += 1.0
    if g.within is not None:
        tc += 1
    if p.within is not None:
        ec += 1
    if (g.within is not None or p.within is not None) and within_match(g, p, pairs):
        tp += 1.0
    return tp, tc, ec


def _event_values(e: ProcessEvent) -> int:
    return 1 + (e.temperature is not None) + (e.duration is not None)


def _event_pair_values(g: ProcessEvent, p: ProcessEvent, relative: bool) -> tuple[float, int, int]:
    tc = ec = 1
    tp = 1.0
    if g.temperature is not None:
        tc += 1
    if p.temperature is not None:
        ec += 1
    if g.temperature is not None and p.temperature is not None:
        tp += quantity_score(g.temperature, p.temperature, relative)
    if g.duration is not None:
        tc += 1
    if p.duration is not None:
        ec += 1
    if g.duration is not None and p.duration is not None:
        tp += quantity_score(g.duration, p.duration, relative)
    return tp, tc, ec


class _Acc:
    def __init__(self) -> None:
        self.tp = 0.0
        self.target = 0
        self.extracted = 0

    def add(self, v: tuple[float, int, int]) -> None:
        self.tp += v[0]
        self.target += v[1]
        self.extracted += v[2]

    def items(self, im: ItemMatch, relative: bool) -> None:
        for i, j, s in im.pairs:
            self.add(_pair_values(im.gold[i], im.pred[j], s, relative))
        for i in im.unmatched_gold:
            self.target += item_values(im.gold[i])
        for j in im.unmatched_pred:
            self.extracted += item_values(im.pred[j])

    def as_dict(self) -> dict:
        return {"tp": self.tp, "target": self.target, "extracted": self.extracted}


def _material_item_count(m: Material) -> int:
    return len(top_items(m)) + sum(len(config_items(c)) for c in configurations(m))


def paper_counts(r: PaperResult, relative: bool = False) -> dict:
    """`compute_multi_level_metrics` counts of one paper, plus cost totals for the per-paper report.

    Returns {level: {tp, target, extracted}} for the five levels and {"total_cost", "edit_distance",
    "papers": 1}. Summation order follows the official code, so sums agree to the last bits.
    """
    mat = {"tp": len(r.matched), "target": len(r.matched) + len(r.unmatched_gold),
           "extracted": len(r.matched) + len(r.unmatched_pred)}
    meas = _Acc()
    meas.tp = sum(mp.items.match_score for _, _, mp in r.matched)
    for _, _, mp in r.matched:
        for _, _, cp in mp.configs.pairs:
            meas.tp += cp.items.match_score
    t = sum(len(mp.items.pairs) + len(mp.items.unmatched_gold) for _, _, mp in r.matched)
    e = sum(len(mp.items.pairs) + len(mp.items.unmatched_pred) for _, _, mp in r.matched)
    for _, _, mp in r.matched:
        for _, _, cp in mp.configs.pairs:
            t += len(cp.items.pairs) + len(cp.items.unmatched_gold)
            e += len(cp.items.pairs) + len(cp.items.unmatched_pred)
        t += sum(len(config_items(mp.configs.gold[i])) for i in mp.configs.unmatched_gold)
        e += sum(len(config_items(mp.configs.pred[j])) for j in mp.configs.unmatched_pred)
    meas.target = t + sum(_material_item_count(r.gold[i]) for i in r.unmatched_gold)
    meas.extracted = e + sum(_material_item_count(r.pred[j]) for j in r.unmatched_pred)

    cfg, proc, val = _Acc(), _Acc(), _Acc()
    for _, _, mp in r.matched:
        val.items(mp.items, relative)
        cm = mp.configs
        cfg.tp += len(cm.pairs)
        cfg.target += len(cm.pairs) + len(cm.unmatched_gold)
        cfg.extracted += len(cm.pairs) + len(cm.unmatched_pred)
        objs = cm.paired_objects()
        for i, j, cp in cm.pairs:
            val.add(_config_pair_values(cm.gold[i], cm.pred[j], objs))
            val.items(cp.items, relative)
        for i in cm.unmatched_gold:
            val.target += _config_field_values(cm.gold[i]) + sum(item_values(x) for x in config_items(cm.gold[i]))
        for j in cm.unmatched_pred:
            val.extracted += _config_field_values(cm.pred[j]) + sum(item_values(x) for x in config_items(cm.pred[j]))
        al = mp.alignment
        proc.tp += len(al.matched)
        proc.target += len(al.matched) + len(al.unmatched_gold)
        proc.extracted += len(al.matched) + len(al.unmatched_pred)
        for gi, pi in al.matched:
            val.add(_event_pair_values(mp.gold_events[gi], mp.pred_events[pi], relative))
        for gi in al.unmatched_gold:
            val.target += _event_values(mp.gold_events[gi])
        for pi in al.unmatched_pred:
            val.extracted += _event_values(mp.pred_events[pi])
    for i in r.unmatched_gold:
        m = r.gold[i]
        val.target += sum(item_values(x) for x in top_items(m))
        for c in configurations(m):
            cfg.target += 1
            val.target += _config_field_values(c) + sum(item_values(x) for x in config_items(c))
    for j in r.unmatched_pred:
        m = r.pred[j]
        val.extracted += sum(item_values(x) for x in top_items(m))
        for c in configurations(m):
            cfg.extracted += 1
            val.extracted += _config_field_values(c) + sum(item_values(x) for x in config_items(c))
    proc.tp = int(proc.tp)
    return {
        "value": val.as_dict(), "measurement": meas.as_dict(), "config": cfg.as_dict(),
        "process": proc.as_dict(), "material": mat,
        "total_cost": sum(mp.cost for _, _, mp in r.matched),
        "edit_distance": sum(mp.alignment.distance for _, _, mp in r.matched),
        "papers": 1,
    }


# ---------------------------------------------------------------- metrics


def prf(tp: float, target: float, extracted: float) -> tuple[float, float, float]:
    p = tp / extracted if extracted else 0.0
    r = tp / target if target else 0.0
    return p, r, (2 * p * r / (p + r) if (p + r) else 0.0)


def level_metrics(counts: Mapping) -> dict:
    """{level: {tp, target, extracted, precision, recall, f1}} and the weighted `overall` (active levels only)."""
    out: dict = {}
    for lv in LEVELS:
        c = counts.get(lv, {})
        tp, tg, ex = c.get("tp", 0), c.get("target", 0), c.get("extracted", 0)
        p, r, f = prf(tp, tg, ex)
        tp_out = int(tp) if lv in ("process", "material") else float(tp)
        out[lv] = {"tp": tp_out, "target": int(tg), "extracted": int(ex), "precision": p, "recall": r, "f1": f}
    active = [lv for lv in OVERALL_WEIGHTS if out[lv]["target"] > 0 or out[lv]["extracted"] > 0]

    def weighted(key: str) -> float:
        if not active:
            return 0.0
        w = sum(OVERALL_WEIGHTS[k] for k in active)
        return sum(OVERALL_WEIGHTS[k] * out[k][key] for k in active) / w

    out["overall"] = {"precision": weighted("precision"), "recall": weighted("recall"), "f1": weighted("f1")}
    return out


def measurement_level(counts: Mapping) -> dict:
    c = counts.get("measurement", {})
    p, r, f = prf(c.get("tp", 0), c.get("target", 0), c.get("extracted", 0))
    return {"precision": p, "recall": r, "f1": f, "num_matched_items": float(c.get("tp", 0)),
            "num_total_target_items": int(c.get("target", 0)), "num_total_extracted_items": int(c.get("extracted", 0))}


def materials_block(counts: Mapping) -> dict:
    c = counts.get("material", {})
    return {"target": int(c.get("target", 0)), "extracted": int(c.get("extracted", 0)), "matched": int(c.get("tp", 0))}


def paper_report(counts: Mapping, halluc: Mapping | None = None) -> dict:
    """One paper's block of the reference `expected_*.json` (timings and not-found values excepted)."""
    matched = counts.get("material", {}).get("tp", 0)
    out = {"materials": materials_block(counts), "measurement_level": measurement_level(counts),
           "total_cost": float(counts.get("total_cost", 0.0)),
           "avg_process_edit_distance": counts.get("edit_distance", 0) / matched if matched else 0.0,
           "multi_level": level_metrics(counts)}
    if halluc is not None:
        total, nf = int(halluc.get("total_numbers", 0)), int(halluc.get("numbers_not_found", 0))
        out["hallucination"] = {"total_numbers": total, "numbers_found": int(halluc.get("numbers_found", 0)),
                                "numbers_not_found": nf, "hallucination_rate": nf / total if total else 0.0}
    return out


def sum_levels(parts: list[Mapping]) -> dict:
    """Micro aggregation: every level's tp / target / extracted summed over papers (in paper order)."""
    out: dict = {lv: {"tp": 0.0 if lv not in ("process", "material") else 0, "target": 0, "extracted": 0}
                 for lv in LEVELS}
    for p in parts:
        for lv in LEVELS:
            for k in ("tp", "target", "extracted"):
                out[lv][k] += p.get(lv, {}).get(k, 0)
    return out


def overall_report(papers: Mapping[str, Mapping], halluc: Mapping[str, Mapping] | None = None, *,
                   levels: Mapping[str, Mapping] | None = None) -> dict:
    """The reference `overall` block: micro-summed levels, macro mean of per-paper overall F1, hallucination.
    `levels`: each paper's `level_metrics` where the caller has them already (`paper_report`'s `multi_level`)."""
    ids = list(papers)
    total = sum_levels([papers[i] for i in ids])
    ml = level_metrics(total)
    per_f1 = [(levels[i] if levels is not None else level_metrics(papers[i]))["overall"]["f1"] for i in ids]
    out = {"num_papers": len(ids), "materials": materials_block(total), "measurement_level": measurement_level(total),
           "multi_level": ml, "macro_mean_overall_f1": sum(per_f1) / len(per_f1) if per_f1 else 0.0}
    if halluc is not None:
        tn = sum(int(halluc[i].get("total_numbers", 0)) for i in ids if i in halluc)
        nf = sum(int(halluc[i].get("numbers_not_found", 0)) for i in ids if i in halluc)
        # the rate of the summed counts, not of their whole parts: the same number for whole counts, but the sample
        # estimators evaluate it at estimated (fractional) totals and differentiate it there (#38)
        tn_f = sum(float(halluc[i].get("total_numbers", 0)) for i in ids if i in halluc)
        nf_f = sum(float(halluc[i].get("numbers_not_found", 0)) for i in ids if i in halluc)
        out["hallucination"] = {"total_numbers": tn, "numbers_not_found": nf,
                                "hallucination_rate": nf_f / tn_f if tn_f else 0.0}
    return out
