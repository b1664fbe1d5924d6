"""Boards on known truths: coverage of per-system and difference intervals from one joint sample, and the reviews a
joint plan needs against one plan per system at equal interval width (issue 36 §3; docs/board.md).

Truth model: documents with a pool of judge questions (span pairs); each system asks a subset of its document's
questions, and systems overlap (the questions two extractors both produce). Every question has a human label and
a judge label; a reviewed question is reviewed once and settles it for every system that asked it. A system's
counts per document: tp = asked questions that match, fp = asked that do not, fn = the document's gold entities
not matched. Three ways the judge errs:

- `uniform`: every question wrong with probability 0.15;
- `lenient-to-verbose`: the judge calls 35% of the no-match questions only the verbose system asks a match (it
  favours that system), 5% elsewhere;
- `clustered`: one document in ten has a judge wrong on half its questions, the others 2%.

For each truth and round: a simple random sample of n documents (the joint plan) reviewed for the union of their
questions; per system the single-run estimator and per pair the joint-vector difference (`scoring.stats.board`).
Coverage of the nominal 95% intervals (with a Clopper-Pearson interval over rounds), mean half-widths, and the
reviews (questions) needed for a difference half-width target by the joint plan and by one plan per system (each
system its own sample; the difference then has the two variances added).

    python bench/board_coverage.py [--rounds 200] [--docs 400] [--n 60] [--target 0.04] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scoring.stats.board import board_estimate  # noqa: E402
from scoring.stats.difference import difference_totals  # noqa: E402
from scoring.stats.estimators import metric_estimate  # noqa: E402

SYSTEMS = {"verbose": 0.9, "balanced": 0.7, "terse": 0.45}
"""Share of a document's candidate questions each system asks."""
TRUTHS = ("uniform", "lenient-to-verbose", "clustered")


def f1(v: np.ndarray) -> float:
    tp, fp, fn = v
    den = 2 * tp + fp + fn
    return float(2 * tp / den) if den else 0.0


def world(rng: np.random.Generator, n_docs: int, truth: str) -> dict:
    """Per document: the questions (human label, judge label), which system asked each, the gold count."""
    docs = []
    for _ in range(n_docs):
        q = int(rng.integers(4, 14))
        gold = int(rng.integers(2, 7))
        human = rng.random(q) < 0.45
        asked = {s: rng.random(q) < share for s, share in SYSTEMS.items()}
        only_verbose = asked["verbose"] & ~asked["balanced"] & ~asked["terse"]
        if truth == "uniform":
            wrong = rng.random(q) < 0.15
        elif truth == "lenient-to-verbose":
            wrong = (~human) & (rng.random(q) < np.where(only_verbose, 0.35, 0.05))
        else:
            wrong = rng.random(q) < (0.5 if rng.random() < 0.1 else 0.02)
        judge = human ^ wrong
        docs.append({"human": human, "judge": judge, "asked": asked, "gold": gold})
    return {"docs": docs}


def counts(doc: dict, system: str, labels: np.ndarray) -> np.ndarray:
    asked = doc["asked"][system]
    tp = int((labels & asked).sum())
    return np.array([tp, int((~labels & asked).sum()), max(doc["gold"] - tp, 0)], dtype=float)


def vectors(w: dict, system: str, which: str) -> dict[str, np.ndarray]:
    return {f"d{i}": counts(d, system, d[which]) for i, d in enumerate(w["docs"])}


def questions(w: dict, docs: list[int], systems: list[str]) -> int:
    """Questions a review of these documents answers: the union over `systems` of what each asked."""
    return sum(int(np.logical_or.reduce([w["docs"][i]["asked"][s] for s in systems]).sum()) for i in docs)


def one_round(rng: np.random.Generator, truth: str, n_docs: int, n: int) -> dict:
    w = world(rng, n_docs, truth)
    systems = list(SYSTEMS)
    judge = {s: vectors(w, s, "judge") for s in systems}
    human = {s: vectors(w, s, "human") for s in systems}
    true = {s: f1(sum(human[s].values())) for s in systems}
    strata = {d: "all" for d in judge[systems[0]]}
    sample = [int(i) for i in rng.choice(n_docs, n, replace=False)]
    sampled = {s: {f"d{i}": human[s][f"d{i}"] for i in sample} for s in systems}
    board = board_estimate(judge, strata, sampled, {s: f1 for s in systems})
    out = {"per": {}, "pairs": {}, "joint_questions": questions(w, sample, systems)}
    for s, e in board.per_system.items():
        out["per"][s] = (e.ci, true[s])
    for p in board.pairs:
        out["pairs"][(p.a, p.b)] = (p.estimate.ci, true[p.a] - true[p.b], p.estimate.se)
    # one plan per system: each its own sample of n documents, reviewed for its own questions only
    own = {}
    for s in systems:
        own_sample = [int(i) for i in rng.choice(n_docs, n, replace=False)]
        tot = difference_totals(judge[s], strata, {f"d{i}": human[s][f"d{i}"] for i in own_sample},
                                variance="jeffreys")
        own[s] = (metric_estimate(tot, f1).se, questions(w, own_sample, [s]))
    out["own"] = own
    return out


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    lo = st.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = st.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def run(rounds: int, n_docs: int, n: int, target: float, seed: int) -> list[dict]:
    rows = []
    for t, truth in enumerate(TRUTHS):
        rng = np.random.default_rng(seed * 100 + t)
        results = [one_round(rng, truth, n_docs, n) for _ in range(rounds)]
        per_cov, per_n, pair_cov, pair_n = 0, 0, 0, 0
        half_joint, se_joint, se_own, q_joint, q_own = [], [], [], [], []
        for r in results:
            for ci, truth_v in r["per"].values():
                if ci is not None:
                    per_n += 1
                    per_cov += ci[0] <= truth_v <= ci[1]
            for (a, b), (ci, truth_d, se) in r["pairs"].items():
                if ci is not None:
                    pair_n += 1
                    pair_cov += ci[0] <= truth_d <= ci[1]
                    half_joint.append((ci[1] - ci[0]) / 2)
                    se_joint.append(se)
                    se_own.append(np.hypot(r["own"][a][0] or 0.0, r["own"][b][0] or 0.0))
            q_joint.append(r["joint_questions"])
            q_own.append(sum(q for _, q in r["own"].values()))
        # reviews to a target half-width: SE falls as 1/sqrt(n) (finite-population correction ignored: n << N)
        z = 1.96
        need_joint = np.mean(q_joint) * (z * np.mean(se_joint) / target) ** 2
        need_own = np.mean(q_own) * (z * np.mean(se_own) / target) ** 2
        rows.append({"truth": truth, "per_system": (per_cov, per_n), "difference": (pair_cov, pair_n),
                     "half_width_difference": float(np.mean(half_joint)),
                     "reviews_joint": need_joint, "reviews_per_system_plans": need_own,
                     "ratio": need_joint / need_own})
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--target", type=float, default=0.04)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    rows = run(a.rounds, a.docs, a.n, a.target, a.seed)
    print(f"{a.rounds} rounds per truth, {a.docs} documents, {a.n} sampled, systems {', '.join(SYSTEMS)}")
    print("| truth | per-system coverage | difference coverage | mean half-width (difference) | reviews to "
          f"±{a.target} joint | one plan per system | ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        cells = []
        for k, n in (r["per_system"], r["difference"]):
            lo, hi = clopper_pearson(k, n)
            cells.append(f"{k / n:.3f} [{lo:.3f}, {hi:.3f}] (n={n})")
        print(f"| {r['truth']} | {cells[0]} | {cells[1]} | {r['half_width_difference']:.4f} | "
              f"{r['reviews_joint']:,.0f} | {r['reviews_per_system_plans']:,.0f} | {r['ratio']:.2f}× |")


if __name__ == "__main__":
    main()
