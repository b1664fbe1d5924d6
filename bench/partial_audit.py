"""Reviews needed for a ±0.03 (95%) interval on CHIMERA macro F1: stratified block design vs simple random sampling.

The run is the demo (`data/chimera/eval.csv` + `pred_mixed.jsonl`, judged by the replay log `judge_mixed.jsonl`)
or, with `--generated N`, a run made by `bench/generate.py`. Both are scored read-only through the family
protocol (`load` / `decide` / `counts`). Human labels are synthetic and seeded: identical strings are always a
match; otherwise the human overrules the judge with a per-document propensity (errors cluster by document),
and a pair answered yes in one span order only is a match for 40% of humans.

Two headline numbers are audited: entity F1 (macro avg over the 3 entity types; block = document × entity type)
and relation F1 (macro avg over the 2 relation types; block = document, since relation partners span it).
Strata (judge-side only): `split` (a yes in one order only), `match` (a judge match between different strings),
`no-match` (a judge no-match), `identical` (only identical-string pairs). Blocks no decision affects are exact.

Printed, per metric:
1. planning numbers from the population's true within-stratum variances (§4.5): blocks and decisions to review
   for the stratified design (cost-aware Neyman, ≥ 2 per stratum), SRS of blocks with the difference estimator,
   SRS of blocks human-only, and SRS of decisions (the linear shortcut TP = Σ match, human-only and with the
   judge; biased under over-matching, shown as the naive baseline);
2. an end-to-end run of the real queue (`sampling.next_unit`, whose allocation reads which blocks were reviewed,
   not the `estimators.linearised_residuals` it is handed; no planning variance here: every block alike),
   stopping when `prf_estimate`'s interval is ≤ ±0.03, over several seeds, beside a random-order human-only
   queue and the plain estimator (sample covariance, no Jeffreys rate): decisions reviewed at the stop, and how
   often the final interval covered the truth.

    python bench/partial_audit.py [--generated N] [--judge SPEC] [--seeds 20] [--half-width 0.03]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import print_table  # noqa: E402
from scoring.families import get_task  # noqa: E402
from scoring.stats.estimators import delta_method, linearised_residuals, prf_estimate, prf_from_totals  # noqa: E402
from scoring.stats.sampling import (  # noqa: E402
    Plan,
    Unit,
    build_plan,
    greedy_allocation,
    next_unit,
    neyman_total,
)

DATA = ROOT / "data" / "chimera"
ENTITY_TYPES = ("comb-element", "inspiration-src", "inspiration-target")
RELATION_TYPES = ("combination", "inspiration")
P_SPLIT_MATCH = 0.4
BASE_OVERRULE = {"match": 0.15, "no-match": 0.08}


def identical(a: str, b: str) -> bool:
    return a.casefold().split() == b.casefold().split()


def is_split(d) -> bool:
    answers = {d.detail.get(o, {}).get("value") for o in ("pred_gold", "gold_pred")}
    return d.judge != "match" and "yes" in answers


@dataclass
class Run:
    task: object
    decisions: list
    payloads: dict[str, dict]
    judge_labels: dict[str, dict]
    human_labels: dict[str, dict]


def load_run(gold: Path, pred: Path, judge_spec: str, seed: int) -> Run:
    task = get_task("chimera")
    loaded = task.load({"gold": str(gold), "pred": str(pred)})
    decisions, _ = task.decide(loaded, task.make_judge(judge_spec), None, None)
    payloads = {task.doc_id(d): task.payload(d) for d in loaded.docs}
    rng = random.Random(seed)
    propensity = {doc: rng.betavariate(1.2, 4.0) * 2 for doc in payloads}  # mean ≈ 0.46 → ×base rates
    judge_labels: dict[str, dict] = {doc: {} for doc in payloads}
    human_labels: dict[str, dict] = {doc: {} for doc in payloads}
    for d in decisions:
        key = (d.kind, d.type, d.left, d.right)
        judge_labels[d.doc][key] = d.judge
        if identical(d.left, d.right):
            human = "match"
        elif is_split(d):
            human = "match" if rng.random() < P_SPLIT_MATCH else "no-match"
        else:
            flip = rng.random() < min(1.0, BASE_OVERRULE.get(d.judge, 0.1) * propensity[d.doc])
            human = d.judge if not flip else ("no-match" if d.judge == "match" else "match")
        human_labels[d.doc][key] = human
    return Run(task, decisions, payloads, judge_labels, human_labels)


def judge_status(units: list[Unit]) -> str:
    if any(u.info["split"] for u in units):
        return "split"
    if any(u.judge == "match" and not u.info["identical"] for u in units):
        return "match"
    if any(not u.info["identical"] for u in units):
        return "no-match"
    return "identical"


def stratum(units: list[Unit]) -> str:
    """Judge status, with blocks touching the rare inspiration types apart: a flip there moves the macro
    average ~10x more than a comb-element flip, so those blocks need their own (larger) share of reviews."""
    status = judge_status(units)
    if any(u.info["type"] != "comb-element" for u in units):
        return "inspiration:" + ("identical" if status == "identical" else "other")
    return status


TAKE_ALL = frozenset({"inspiration:other"})
"""Few blocks, each able to move the macro average a lot: review them all (their variance is then 0)."""


@dataclass
class Population:
    """Block counts of one audited metric (section of the metrics JSON)."""

    types: tuple[str, ...]
    judge: dict[str, dict]
    human: dict[str, dict]
    fixed: set[str]
    """Blocks no decision affects (exact)."""
    units: list[Unit]
    decisions_of: dict[str, list]
    labels: dict[str, dict[str, dict]]
    """`human` / `judge` -> doc -> decision key -> label."""


def population(run: Run, section: str) -> Population:
    types = ENTITY_TYPES if section == "entities" else RELATION_TYPES
    judge, human = {}, {}
    by_block: dict[str, list] = {}
    for d in run.decisions:
        block = f"{d.doc}|{d.type}" if section == "entities" else d.doc
        by_block.setdefault(block, []).append(d)
    for doc, payload in run.payloads.items():
        cj = run.task.counts(payload, run.judge_labels[doc])[section]
        ch = run.task.counts(payload, run.human_labels[doc])[section]
        if section == "entities":
            for t in types:
                judge[f"{doc}|{t}"], human[f"{doc}|{t}"] = {t: cj[t]}, {t: ch[t]}
        else:
            judge[doc], human[doc] = {t: cj[t] for t in types}, {t: ch[t] for t in types}
    units = [Unit(f"{b}#{i}", b, d.judge, {"split": is_split(d), "identical": identical(d.left, d.right),
                                           "type": d.type})
             for b, ds in by_block.items() for i, d in enumerate(ds)]
    fixed = {b for b in judge if b not in by_block}
    return Population(types, judge, human, fixed, units, by_block,
                      {"human": run.human_labels, "judge": run.judge_labels})


def totals(counts: Mapping[str, dict], types: tuple[str, ...]) -> np.ndarray:
    v = np.zeros(3 * len(types))
    for c in counts.values():
        for i, t in enumerate(types):
            if t in c:
                v[3 * i:3 * i + 3] += [c[t]["tp"], c[t]["fp"], c[t]["fn"]]
    return v


def vec(c: dict, types: tuple[str, ...]) -> np.ndarray:
    return np.array([float(c.get(t, {}).get(k, 0)) for t in types for k in ("tp", "fp", "fn")])


def f1_of(v: np.ndarray, types: tuple[str, ...]) -> float:
    return prf_from_totals(v, types)["avg"]["f1"]


# ---------------------------------------------------------------- planning from the true population


def planning(pop: Population, plan: Plan, half_width: float) -> list[list]:
    target = (half_width / 1.96) ** 2
    th = totals(pop.human, pop.types)
    _, _, grad = delta_method(lambda v: f1_of(v, pop.types), th, np.zeros((th.size, th.size)))
    stratum_of = plan.stratum_of()
    cost = {b.id: len(b.units) for b in plan.blocks}
    z = {b: float(grad @ (vec(pop.human[b], pop.types) - vec(pop.judge[b], pop.types))) for b in stratum_of}
    zh = {b: float(grad @ vec(pop.human[b], pop.types)) for b in stratum_of}
    rows = []

    def design(name: str, values: Mapping[str, float], strata: Mapping[str, str], minimum: int,
               take_all: frozenset[str] = frozenset()) -> None:
        groups: dict[str, list[str]] = {}
        for b in values:
            groups.setdefault(strata[b], []).append(b)
        size = {h: len(bs) for h, bs in groups.items()}
        s2 = {h: float(np.var([values[b] for b in bs], ddof=1)) if len(bs) > 1 else 0.0 for h, bs in groups.items()}
        c = {h: statistics.mean(cost[b] for b in bs) for h, bs in groups.items()}
        start = {h: size[h] if h in take_all else min(minimum, size[h]) for h in size}
        m = greedy_allocation(size, s2, start, target, c)
        blocks = sum(m.values())
        decisions = sum(m[h] * c[h] for h in m)
        rows.append([name, blocks, round(decisions), f"{decisions / sum(cost.values()):.0%}",
                     " / ".join(f"{h} {m[h]}/{size[h]}" for h in sorted(m))])

    design("stratified blocks, difference (Neyman by cost)", z, stratum_of, 2, plan.take_all)
    design("SRS of blocks, difference (PPI on blocks)", z, dict.fromkeys(stratum_of, "all"), 1)
    design("SRS of blocks, human only", zh, dict.fromkeys(stratum_of, "all"), 1)
    # decision level, linear shortcut F1_t ≈ 2·TP_t / (pred_t + gold_t), TP_t = number of human matches
    weights = {}
    for i, t in enumerate(pop.types):
        tp, fp, fn = th[3 * i:3 * i + 3]
        weights[t] = 2 / (len(pop.types) * (2 * tp + fp + fn)) if 2 * tp + fp + fn else 0.0
    xs_h, xs_d = [], []
    for ds in pop.decisions_of.values():
        for d in ds:
            key = (d.kind, d.type, d.left, d.right)
            h, j = (int(pop.labels[who][d.doc][key] == "match") for who in ("human", "judge"))
            w = weights.get(d.type, 0.0)
            xs_h.append(w * h)
            xs_d.append(w * (h - j))
    n_dec = len(xs_h)
    if not any(weights.get(d.type) for ds in pop.decisions_of.values() for d in ds):
        return rows  # relation F1 is not linear in the (entity-typed) decisions: no decision-level shortcut
    for name, xs in (("SRS of decisions, human only (linear TP = Σ match)", xs_h),
                     ("SRS of decisions, difference (linear TP = Σ match)", xs_d)):
        n = min(n_dec, math.ceil(neyman_total({"all": n_dec}, {"all": float(np.var(xs, ddof=1))}, target)))
        rows.append([name, "—", n, f"{n / n_dec:.0%}", ""])
    return rows


# ---------------------------------------------------------------- the real queue, end to end


def run_queue(pop: Population, seed: int, half_width: float, stratified: bool, truth: float,
              variance: str = "plain") -> tuple[int, int, bool]:
    """Review through the queue until the F1 interval is ≤ ±half_width; (blocks, decisions, covered)."""
    plan = build_plan(pop.units, stratum if stratified else (lambda _u: "all"), seed,
                      take_all=TAKE_ALL if stratified else ())
    strata = plan.stratum_of()
    judge_pop = {b: pop.judge[b] for b in strata}
    if not stratified:  # human only: the expansion estimator is the difference estimator with a zero judge
        judge_pop = {b: {t: {"tp": 0, "fp": 0, "fn": 0} for t in pop.types} for b in strata}
    judge_all = {**{b: pop.judge[b] for b in pop.fixed}, **judge_pop}
    certain = {b: pop.human[b] for b in pop.fixed}
    sampled: dict[str, dict] = {}
    decisions = 0
    while True:
        resid = linearised_residuals(judge_all, strata, sampled, certain=certain, types=pop.types) if sampled else {}
        pick = next_unit(plan, resid)
        if pick is None:
            return len(sampled), decisions, True
        sampled[pick.block] = pop.human[pick.block]
        decisions += len(pick.units)
        if len(sampled) < 30:
            continue
        est = prf_estimate(judge_all, strata, sampled, certain=certain, types=pop.types,
                           variance=variance)["avg"]["f1"]
        if est.ci is not None and (est.ci[1] - est.ci[0]) / 2 <= half_width:
            return len(sampled), decisions, est.ci[0] <= truth <= est.ci[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generated", type=int, default=0, help="use bench/generate.py's run of N abstracts")
    ap.add_argument("--judge", default=None, help="judge spec (default: the replay log of the data)")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--half-width", type=float, default=0.03)
    ap.add_argument("--human-seed", type=int, default=0)
    args = ap.parse_args()
    if args.generated:
        from bench.common import data_paths

        paths = data_paths(args.generated)
        gold, pred, log = paths["gold"], paths["pred"], paths["log"]
    else:
        gold, pred, log = DATA / "eval.csv", DATA / "pred_mixed.jsonl", DATA / "judge_mixed.jsonl"
    spec = args.judge or f"replay:{log}"
    t0 = time.perf_counter()
    run = load_run(gold, pred, spec, args.human_seed)
    n_ident = sum(identical(d.left, d.right) for d in run.decisions)
    agree = sum(run.judge_labels[d.doc][(d.kind, d.type, d.left, d.right)] ==
                run.human_labels[d.doc][(d.kind, d.type, d.left, d.right)] for d in run.decisions)
    print(f"run: {len(run.payloads)} documents, {len(run.decisions)} decisions, {n_ident / len(run.decisions):.0%} "
          f"identical-string pairs, synthetic human agrees with the judge on {agree / len(run.decisions):.1%} "
          f"(judge {spec.split('/')[-1]}; loaded in {time.perf_counter() - t0:.1f} s)")
    for section in ("entities", "relations"):
        pop = population(run, section)
        truth = f1_of(totals(pop.human, pop.types), pop.types)
        judge_f1 = f1_of(totals(pop.judge, pop.types), pop.types)
        metrics = run.task.metrics(_sum_docs(run, run.human_labels))
        assert abs(metrics[section]["avg"]["f1"] - truth) < 1e-12, "block totals disagree with the family metrics"
        plan = build_plan(pop.units, stratum, 0, take_all=TAKE_ALL)
        sizes = {h: len(bs) for h, bs in plan.strata().items()}
        print(f"\n## {section} F1 (macro avg): judge-only {judge_f1:.4f}, full human review {truth:.4f}; "
              f"{len(plan.blocks)} blocks with decisions ({sizes}), {len(pop.fixed)} fixed blocks")
        rows = planning(pop, plan, args.half_width)
        print_table(f"planning: reviews for ±{args.half_width} (95%), true within-stratum variances",
                    ["design", "blocks", "decisions", "share of decisions", "allocation"], rows)
        t1 = time.perf_counter()
        designs = (("stratified queue (next_unit + difference, jeffreys variance)", True, "jeffreys"),
                   ("random-order queue, human only", False, "jeffreys"),
                   ("stratified queue, plain estimator", True, "plain"))
        res = {name: [run_queue(pop, s, args.half_width, strat, truth, w) for s in range(args.seeds)]
               for name, strat, w in designs}
        qrows = []
        for name, rs in res.items():
            decs = [r[1] for r in rs]
            qrows.append([name, statistics.median(r[0] for r in rs), statistics.median(decs), min(decs), max(decs),
                          f"{sum(r[2] for r in rs)}/{len(rs)}"])
        print_table(f"end to end over {args.seeds} seeds, stop at ±{args.half_width} "
                    f"({time.perf_counter() - t1:.1f} s)",
                    ["queue", "median blocks", "median decisions", "min", "max", "covered truth"], qrows)
        strat, human = (statistics.median(r[1] for r in rs) for rs in list(res.values())[:2])
        ratios = [f"planning: stratified / SRS-of-blocks human-only = {rows[0][2] / rows[2][2]:.2f}"]
        if len(rows) > 3:
            ratios.append(f"stratified / SRS-of-decisions human-only = {rows[0][2] / rows[3][2]:.2f}")
        ratios.append(f"end to end: stratified / human-only queue = {strat / human:.2f}")
        print("\n" + "; ".join(ratios))


def _sum_docs(run: Run, labels: dict[str, dict]) -> dict:
    from scoring.families.base import sum_nested

    return sum_nested(run.task.counts(p, labels[doc]) for doc, p in run.payloads.items())


if __name__ == "__main__":
    main()
