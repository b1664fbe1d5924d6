"""A board's one sampling plan through the product, on known truths: coverage of the per-system and difference
intervals, and the reviews a joint plan needs against one plan per system at equal interval widths (issue 36 §3).

Worlds: `devtools/board_inputs.py` boards (3 CHIMERA systems on one gold of `--docs` abstracts with a gold combination:
no inspiration entities, so none of the strata CHIMERA's plan reviews whole, and the sample is the queue's
allocation alone; one judge), each scored once into a template database. A round copies a template, draws the human
truth of every question from a truth model, creates the board's plan (`audit.board.joint.create_board_plan`, seed =
round), takes `--n` documents from the board's queue (`next_board_document`, default aim) and stores a review of
every question of each (`add_review`, in the run the queue names), then reads `board_estimates`. The truth of a
system's metric is the family's own scorer (`TaskFamily.counts` and `aggregate`) under the true labels.

Truth models (a question's human label from its judge label; identical strings are always a match):
- `uniform`: every answer wrong with probability 0.2;
- `lenient-to-one`: 60% of the judge's matches on questions only `sys-a` asks are no-match (the judge favours
  sys-a), 8% of the other answers wrong;
- `clustered`: 15% of the documents have half their answers wrong, the others 5%.

Reviews at equal widths (`review_ratios`): questions a human labels, joint plan against one plan per system, each
system's own plan a simple random sample of its own documents with the variance per document it has on the joint
sample (the per-system estimate there is the single-run estimator), the finite-population correction kept. A
per-system plan's reviews are counted twice: once per system (a question three systems ask, three times) and once per
question (issue 36 §1: a review settles a question in every run that asks it, so independent per-system plans that
both drew a document review its shared questions once). Equal widths means either the same table (every system, or
every pair, gets the width the joint plan gave it; a pair from two independent samples has V_a + V_b) or a common
width (every system the worst system's: the joint plan samples for the worst one).

    python bench/board_plan.py [--rounds 100] [--docs 120] [--n 40] [--worlds 4] [--truths uniform ...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.board_coverage import clopper_pearson  # noqa: E402
from bench.common import print_table, workdir  # noqa: E402
from devtools.board_inputs import score_board_runs, write_board_inputs  # noqa: E402

TRUTHS = ("uniform", "lenient-to-one", "clustered")
QUALITY = {"sys-a": 0.35, "sys-b": 0.25, "sys-c": 0.15}
"""Share of abstracts each system copies exactly (an exact copy asks only identical pairs, which no judge gets
wrong: lower than `board_inputs`' default so that every system has questions a review can settle)."""
FAVOURED = "sys-a"


def make_worlds(n_worlds: int, docs: int) -> list[Path]:
    from audit.store.database import open_db

    out = []
    for w in range(n_worlds):
        d = workdir() / f"board-plan-q-{docs}-w{w}"
        path = d / "template.db"
        if not path.is_file():
            d.mkdir(parents=True, exist_ok=True)
            inputs = write_board_inputs(d, docs, seed=w, recombinations="combination", quality=QUALITY)
            tmp = d / "template.tmp.db"
            tmp.unlink(missing_ok=True)
            db = open_db(tmp)
            score_board_runs(db, inputs)
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.conn.close()
            tmp.replace(path)
        out.append(path)
    return out


def world_questions(db) -> dict:
    """Per run: decisions (id, doc, kind, type, left, right, judge, qkey) and payloads; which runs ask each qkey."""
    runs = [r for r, in db.execute("SELECT name FROM runs ORDER BY id")]
    info: dict = {"runs": runs, "decisions": {}, "payloads": {}, "askers": {}, "block_of_key": {}}
    for r in runs:
        rid = db.execute("SELECT id FROM runs WHERE name = ?", [r]).fetchone()[0]
        info["decisions"][r] = db.execute("SELECT id, doc_id, kind, type, left, right, judge_label, qkey FROM "
                                          "decisions WHERE run_id = ?", [rid]).fetchall()
        info["payloads"][r] = {doc: json.loads(p) for doc, p in db.execute(
            "SELECT doc_id, payload FROM documents WHERE run_id = ? ORDER BY idx", [rid])}
        for _, doc, *_rest, q in info["decisions"][r]:
            info["askers"].setdefault(q, set()).add(r)
            info["block_of_key"][q] = doc
    return info


def true_labels(info: dict, truth: str, rng: random.Random) -> dict[str, str]:
    judge = {}
    identical = {}
    for r in info["runs"]:
        for _, _, _, _, left, right, lab, q in info["decisions"][r]:
            judge[q] = lab
            identical[q] = left == right
    docs = sorted({d for d in info["block_of_key"].values()})
    hard = {d for d in docs if rng.random() < 0.15}
    out = {}
    for q in sorted(judge):
        j = judge[q]
        if identical[q]:
            out[q] = "match"
            continue
        if truth == "uniform":
            wrong = rng.random() < 0.2
        elif truth == "lenient-to-one":
            only = info["askers"][q] == {FAVOURED}
            wrong = rng.random() < (0.6 if only and j == "match" else 0.08)
        else:
            wrong = rng.random() < (0.5 if info["block_of_key"][q] in hard else 0.05)
        out[q] = ("no-match" if j == "match" else "match") if wrong else j
    return out


def true_values(info: dict, labels: dict[str, str], cell, task, options_of) -> dict[str, float]:
    out = {}
    for r in info["runs"]:
        by_doc: dict[str, dict] = {}
        for _, doc, kind, typ, left, right, _, q in info["decisions"][r]:
            by_doc.setdefault(doc, {})[(kind, typ, left, right)] = labels[q]
        per_doc = [task.counts(p, by_doc.get(doc, {})) for doc, p in info["payloads"][r].items()]
        out[r] = float(cell.value(task.aggregate(per_doc, options_of[r])))
    return out


@dataclass
class PlayedRound:
    """A round played through the product, its database left open for the caller to read further (and close)."""

    db: Any
    runs: list[str]
    est: dict
    task: Any
    cell: Any
    truth_v: dict[str, float]
    queue_s: float


def play_round(template: Path, info: dict, truth: str, seed: int, n: int, scratch: Path) -> PlayedRound:
    """Copy the template, draw the truth, create the board's plan, review `n` documents from its queue and read
    `board_estimates` (what `one_round` and `board_replay/capture.py` both measure)."""
    from audit.board.joint import board_estimates, create_board_plan, next_board_document
    from audit.rescoring import run_options
    from audit.review.reviews import add_review
    from audit.review.sampling import target_cell
    from audit.store.database import open_db, run_row
    from scoring.families import get_task

    path = scratch / "round.db"
    for p in scratch.glob("round.db*"):
        p.unlink()
    shutil.copyfile(template, path)
    db = open_db(path)
    runs = info["runs"]
    rng = random.Random(seed)
    labels = true_labels(info, truth, rng)
    qkey = {dec[0]: dec[7] for r in runs for dec in info["decisions"][r]}
    create_board_plan(db, "b", runs, seed=seed)
    t0 = time.perf_counter()
    steps = 0
    while True:
        est_sampled = db.execute("SELECT COUNT(*) FROM board_draws WHERE board = 'b'").fetchone()[0]
        if est_sampled >= n:
            break
        nxt = next_board_document(db, "b", runs)
        if nxt is None:
            break
        steps += 1
        for part in nxt["review_in"]:
            for dec in part["decisions"]:
                add_review(db, part["run"], dec, labels[qkey[dec]], "bench")
    queue_s = (time.perf_counter() - t0) / max(steps, 1)
    est = board_estimates(db, "b")
    task = get_task(run_row(db, runs[0])["task"])
    cell = target_cell(task)
    truth_v = true_values(info, labels, cell, task, {r: run_options(run_row(db, r)) for r in runs})
    return PlayedRound(db, runs, est, task, cell, truth_v, queue_s)


def one_round(template: Path, info: dict, truth: str, seed: int, n: int, scratch: Path) -> dict:
    played = play_round(template, info, truth, seed, n, scratch)
    db, runs, est = played.db, played.runs, played.est
    drawn = [b for b, in db.execute("SELECT block FROM board_draws WHERE board = 'b'")]
    docs_of = {b: json.loads(db.execute("SELECT plan FROM board_plans WHERE board = 'b'").fetchone()[0])
               ["documents"][b] for b in drawn}
    q_union = len({q for r in runs for dec in info["decisions"][r] for q in [dec[7]]
                   if dec[1] in {d for b in drawn for d in docs_of[b][r]}})
    q_own = {r: sum(1 for dec in info["decisions"][r] if dec[1] in {d for b in drawn for d in docs_of[b][r]})
             for r in runs}
    db.conn.close()
    metric = "/".join(played.cell.path)
    return {"est": est, "truth": played.truth_v, "q_union": q_union, "q_own": q_own, "queue_s": played.queue_s,
            "metric": metric, "record": cost_record(info, est, metric)}


def cost_record(info: dict, est: dict, metric: str) -> dict | None:
    """What `review_ratios` reads of one round: per system its standard error, its sampled documents m_s (the
    documents of the joint sample where it asks) and its population N_s (the documents where it asks: its own
    plan's population); per pair the joint standard error; the board's sampled and planned documents; and how many
    questions each set of systems shares (a question asked by several runs is one review, issue 36 §1)."""
    systems = est["systems"]
    if any(s[metric]["se"] is None for s in systems.values()) or any(p["se"] is None for p in est["pairs"]):
        return None
    shared: dict[tuple, int] = {}
    for runs_asking in info["askers"].values():
        key = tuple(sorted(runs_asking))
        shared[key] = shared.get(key, 0) + 1
    return {"se": {r: s[metric]["se"] for r, s in systems.items()},
            "m": {r: s[metric]["n_documents_sampled"] for r, s in systems.items()},
            "N": {r: len({dec[1] for dec in info["decisions"][r]}) for r in info["runs"]},
            "pair_se": {f"{p['a']}|{p['b']}": p["se"] for p in est["pairs"]},
            "n": est["sampled_documents"], "N_J": est["planned_documents"],
            "shared": [[list(k), v] for k, v in shared.items()]}


def _n_for(v_now: float, m: int, big_n: int, target: float) -> float:
    """Documents a simple random sample of a system's own N documents needs for variance `target`, given variance
    `v_now` at m of them: V ∝ 1/n − 1/N (the finite-population correction kept)."""
    if m >= big_n or v_now <= 0 or target <= 0:
        return float(m if v_now <= 0 else big_n)
    # V(n) = v_now (1/n − 1/N) / (1/m − 1/N) = target
    return float(min(big_n, 1 / ((1 / m - 1 / big_n) * (target / v_now) + 1 / big_n)))


def _own_cost(rec: dict, n_own: dict[str, float]) -> tuple[float, float]:
    """(questions reviewed by one plan per system counted once per system, counted once per question): plan s
    draws n_s of its N_s documents at random, independently of the others, and a question several runs ask is
    reviewed once if any of their plans drew its document (issue 36 §1: a review settles it in every run)."""
    counted = shared = 0.0
    for runs_asking, count in rec["shared"]:
        miss = 1.0
        for r in runs_asking:
            f = min(1.0, n_own[r] / rec["N"][r])
            counted += count * f
            miss *= 1 - f
        shared += count * (1 - miss)
    return counted, shared


def review_ratios(records: list[dict]) -> dict[str, float | None]:
    """Reviews (questions a human labels) of the joint plan against one plan per system, at equal widths, as a
    ratio of the totals over rounds. Joint plan: n of N_J documents, every question of a drawn document once
    (expected Σ_q n/N_J). One plan per system: system s's own simple random sample of n_s of its N_s documents,
    the same variance per document as on the joint sample (the single-run estimator), the finite-population
    correction kept. Two counts of its reviews: `counted` (each system's questions, a shared one once per system)
    and `shared` (a shared question once, when any plan drew its document: what §1 makes true). Two meanings of
    equal widths:
    - `same`: one plan per system gives every system (or, for differences, every pair: independent samples, so
      V_a + V_b) the width it has in the joint plan's table;
    - `common`: every system reaches the worst system's width (the joint plan must sample for the worst one).
    `overlap_shared`: the ratio if every system's own plan drew the joint plan's share of its documents (what the
    overlap of questions alone gives, per-system plans as efficient per document as the joint one);
    `overlap_limit`: the same at a small sampling fraction (no two plans draw one document: Q_union / Σ_s Q_s).
    """
    out: dict[str, float | None] = {}
    recs = [r for r in records if r]
    if not recs:
        return dict.fromkeys(("systems_same_shared", "systems_same_counted", "systems_common_shared",
                              "systems_common_counted", "pairs_same_shared", "pairs_same_counted", "overlap_shared",
                              "overlap_limit"))
    joint = sum(sum(c for _, c in r["shared"]) * r["n"] / r["N_J"] for r in recs)
    sums: dict[str, float] = {}
    for rec in recs:
        v = {s: se * se for s, se in rec["se"].items()}
        same = {s: float(rec["m"][s]) for s in v}
        worst = max(v.values())
        common = {s: _n_for(v[s], rec["m"][s], rec["N"][s], worst) for s in v}
        # differences: every system's own sample scaled by one factor c until each pair's V_a + V_b is at most the
        # joint plan's paired variance (bisection on c; c = 1 is the systems' `same` samples)
        pairs = [(k.split("|"), se * se) for k, se in rec["pair_se"].items()]

        def var_at(s: str, n_s: float, rec: dict = rec, v: dict = v) -> float:
            m, big_n = rec["m"][s], rec["N"][s]
            return 0.0 if n_s >= big_n else v[s] * (1 / n_s - 1 / big_n) / (1 / m - 1 / big_n)

        def ok(c: float, rec: dict = rec, pairs: list = pairs) -> bool:
            return all(var_at(a, min(rec["N"][a], c * rec["m"][a])) + var_at(b, min(rec["N"][b], c * rec["m"][b]))
                       <= vj * (1 + 1e-9) for (a, b), vj in pairs)
        lo, hi = 0.0, max(rec["N"][s] / rec["m"][s] for s in v)
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        pair_n = {s: min(rec["N"][s], hi * rec["m"][s]) for s in v}
        for name, n_own in (("systems_same", same), ("systems_common", common), ("pairs_same", pair_n)):
            counted, shared = _own_cost(rec, n_own)
            sums[name + "_counted"] = sums.get(name + "_counted", 0.0) + counted
            sums[name + "_shared"] = sums.get(name + "_shared", 0.0) + shared
        # what the overlap of questions alone allows: every system's own plan at the joint plan's sampling fraction
        # (per-system plans as efficient per document as the joint one), and its limit at a small fraction
        frac = {s: rec["n"] / rec["N_J"] * rec["N"][s] for s in v}
        counted, shared = _own_cost(rec, frac)
        sums["overlap_shared"] = sums.get("overlap_shared", 0.0) + shared
        sums["overlap_limit"] = sums.get("overlap_limit", 0.0) + sum(c * len(a) for a, c in rec["shared"]) * (
            rec["n"] / rec["N_J"])
    for k, total in sums.items():
        out[k] = joint / total if total else None
    return out


def covered(ci, v) -> bool | None:
    return None if ci is None else ci[0] - 1e-12 <= v <= ci[1] + 1e-12


def summarise(truth: str, results: list[dict]) -> dict:
    """Coverage counts, mean half-widths, and the rounds' cost records (ratios come from them: `finish`)."""
    c = {k: [0, 0] for k in ("sys", "sys_any", "pair_sim", "pair_any", "pair_one", "family")}
    half: dict[str, list[float]] = {"sys": [], "pair_sim": []}

    def add(key, ok):
        if ok is not None:
            c[key][0] += ok
            c[key][1] += 1
    for res in results:
        est, tv = res["est"], res["truth"]
        m = res["metric"]
        for r, s in est["systems"].items():
            add("sys", covered(s[m]["ci"], tv[r]))
            add("sys_any", covered(s[m]["anytime"]["ci"], tv[r]))
            if s[m]["ci"] is not None:
                half["sys"].append((s[m]["ci"][1] - s[m]["ci"][0]) / 2)
        fam = []
        for p in est["pairs"]:
            d = tv[p["a"]] - tv[p["b"]]
            add("pair_sim", covered(p["ci_simultaneous"], d))
            add("pair_any", covered(p["anytime"]["ci"], d))
            add("pair_one", covered(p["ci"], d))
            fam.append(covered(p["ci_simultaneous"], d))
            if p["ci_simultaneous"] is not None:
                half["pair_sim"].append((p["ci_simultaneous"][1] - p["ci_simultaneous"][0]) / 2)
        if all(x is not None for x in fam):
            add("family", all(fam))
    return finish({"truth": truth, "counts": c, "rounds": len(results), "half": half,
                   "queue_s": [r["queue_s"] for r in results], "records": [r["record"] for r in results]})


def finish(summary: dict) -> dict:
    """The ratios and means of a summary (one run's or merged)."""
    return summary | {"ratios": review_ratios(summary["records"]),
                      "half_sys": float(np.mean(summary["half"]["sys"])) if summary["half"]["sys"] else None,
                      "half_pair_sim": (float(np.mean(summary["half"]["pair_sim"]))
                                        if summary["half"]["pair_sim"] else None),
                      "queue_ms": float(np.median(summary["queue_s"])) * 1000}


def merge(parts: list[dict]) -> dict:
    """One truth's summary from the summaries of runs over disjoint rounds (`--first`)."""
    counts = {k: [sum(p["counts"][k][i] for p in parts) for i in (0, 1)] for k in parts[0]["counts"]}
    return finish({"truth": parts[0]["truth"], "counts": counts, "rounds": sum(p["rounds"] for p in parts),
                   "half": {k: [x for p in parts for x in p["half"][k]] for k in parts[0]["half"]},
                   "queue_s": [x for p in parts for x in p["queue_s"]],
                   "records": [x for p in parts for x in p["records"]]})


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--docs", type=int, default=120)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--worlds", type=int, default=4)
    ap.add_argument("--truths", nargs="+", default=list(TRUTHS), choices=TRUTHS)
    ap.add_argument("--json", help="also write the per-truth summaries here")
    ap.add_argument("--first", type=int, default=0, help="the first round (runs over disjoint rounds merge)")
    ap.add_argument("--merge", nargs="+", help="print the table of these --json files (runs over disjoint rounds)")
    a = ap.parse_args(argv)
    if a.merge:
        by_truth: dict[str, list[dict]] = {}
        for f in a.merge:
            for part in json.loads(Path(f).read_text()):
                by_truth.setdefault(part["truth"], []).append(part)
        table([merge(parts) for parts in by_truth.values()], a)
        return
    from audit.store.database import open_db

    worlds = make_worlds(a.worlds, a.docs)
    infos = []
    for w in worlds:
        db = open_db(w)
        infos.append(world_questions(db))
        db.conn.close()
    scratch = workdir() / f"board-plan-scratch-{os.getpid()}"
    scratch.mkdir(parents=True, exist_ok=True)
    summaries = []
    t0 = time.perf_counter()
    for truth in a.truths:
        results = []
        t = TRUTHS.index(truth)  # the seeds of a truth are the same whichever truths one invocation runs
        for k in range(a.first, a.first + a.rounds):
            w = k % len(worlds)
            results.append(one_round(worlds[w], infos[w], truth, 1000 * t + k, a.n, scratch))
            if a.json and len(results) % 10 == 0:  # a long run leaves its figures so far
                Path(a.json).with_suffix(".partial.json").write_text(json.dumps([summarise(truth, results)],
                                                                                default=float))
        summaries.append(summarise(truth, results))
        print(f"{truth}: {len(results)} rounds, {time.perf_counter() - t0:.0f} s so far", file=sys.stderr)
    table(summaries, a)
    if a.json:
        Path(a.json).write_text(json.dumps(summaries, indent=1, default=float))


def table(summaries: list[dict], a: argparse.Namespace) -> None:
    rows = []

    def x(v: float | None) -> str:
        return f"{v:.2f}×" if v is not None else "-"
    for s in summaries:
        cells = []
        for key in ("sys", "sys_any", "pair_one", "pair_sim", "pair_any", "family"):
            k_, n_ = s["counts"][key]
            lo, hi = clopper_pearson(k_, n_) if n_ else (float("nan"), float("nan"))
            cells.append(f"{k_ / n_:.3f} [{lo:.2f}, {hi:.2f}] n={n_}" if n_ else "no interval")
        r = s["ratios"]
        rows.append([s["truth"], s["rounds"], *cells,
                     f"{s['half_sys']:.4f}" if s["half_sys"] is not None else "-",
                     f"{s['half_pair_sim']:.4f}" if s["half_pair_sim"] is not None else "-",
                     f"{x(r['pairs_same_shared'])} ({x(r['pairs_same_counted'])})",
                     f"{x(r['systems_same_shared'])} ({x(r['systems_same_counted'])})",
                     f"{x(r['systems_common_shared'])} ({x(r['systems_common_counted'])})",
                     f"{x(r['overlap_shared'])} / {x(r['overlap_limit'])}",
                     f"{s['queue_ms']:.0f}"])
    print_table(f"Board plan through the product: 3 systems x {a.docs} abstracts, "
                f"{a.n} documents from the board queue, {a.worlds} worlds",
                ["truth", "rounds", "per system (fixed-n)", "per system (anytime)", "pair alone 95%",
                 "pairs simultaneous", "pairs simultaneous anytime", "all pairs at once",
                 "mean half-width per system", "mean half-width pairs simultaneous",
                 "reviews joint / per-system: differences, same table (counted per system)",
                 "per-system widths, same table", "per-system widths, common (worst system's)",
                 "overlap alone: same fraction / small fraction",
                 "queue step ms"], rows)


if __name__ == "__main__":
    main()
