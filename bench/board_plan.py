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

Reviews at equal widths: a document of the joint plan costs the union of its questions; one plan per system costs
each system its own questions. At the same n, one plan per system gives system s the standard error its estimate has
here (the per-system estimate on the joint sample is the single-run estimator on that sample) and a difference the
sum of two independent variances; the joint plan's difference has the paired variance. n scales as SE², so the
reviews to a common half-width are n_J·q_union against n_O·Σ q_s, with n_J/n_O the ratio of the variances.

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
from pathlib import Path

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


def one_round(template: Path, info: dict, truth: str, seed: int, n: int, scratch: Path) -> dict:
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
    drawn = [b for b, in db.execute("SELECT block FROM board_draws WHERE board = 'b'")]
    docs_of = {b: json.loads(db.execute("SELECT plan FROM board_plans WHERE board = 'b'").fetchone()[0])
               ["documents"][b] for b in drawn}
    q_union = len({q for r in runs for dec in info["decisions"][r] for q in [dec[7]]
                   if dec[1] in {d for b in drawn for d in docs_of[b][r]}})
    q_own = {r: sum(1 for dec in info["decisions"][r] if dec[1] in {d for b in drawn for d in docs_of[b][r]})
             for r in runs}
    db.conn.close()
    return {"est": est, "truth": truth_v, "q_union": q_union, "q_own": q_own, "queue_s": queue_s,
            "metric": "/".join(cell.path)}


def covered(ci, v) -> bool | None:
    return None if ci is None else ci[0] - 1e-12 <= v <= ci[1] + 1e-12


def summarise(truth: str, results: list[dict]) -> dict:
    c = {k: [0, 0] for k in ("sys", "sys_any", "pair_sim", "pair_any", "pair_one", "family")}

    def add(key, ok):
        if ok is not None:
            c[key][0] += ok
            c[key][1] += 1
    se_sys, se_pair_joint, se_pair_own, q_u, q_o = [], [], [], [], []
    for res in results:
        est, tv = res["est"], res["truth"]
        m = res["metric"]
        for r, s in est["systems"].items():
            add("sys", covered(s[m]["ci"], tv[r]))
            add("sys_any", covered(s[m]["anytime"]["ci"], tv[r]))
        fam = []
        for p in est["pairs"]:
            d = tv[p["a"]] - tv[p["b"]]
            add("pair_sim", covered(p["ci_simultaneous"], d))
            add("pair_any", covered(p["anytime"]["ci"], d))
            add("pair_one", covered(p["ci"], d))
            fam.append(covered(p["ci_simultaneous"], d))
        if all(x is not None for x in fam):
            add("family", all(fam))
        ses = {r: s[m]["se"] for r, s in est["systems"].items()}
        pair_se = [p["se"] for p in est["pairs"]]
        if all(v is not None for v in ses.values()) and all(v is not None for v in pair_se):
            se_sys.append(max(v * v for v in ses.values()))
            se_pair_joint.append(max(v * v for v in pair_se))
            se_pair_own.append(max(ses[p["a"]] ** 2 + ses[p["b"]] ** 2 for p in est["pairs"]))
            q_u.append(res["q_union"])
            q_o.append(sum(res["q_own"].values()))
    ratio_pairs = (np.mean(se_pair_joint) * np.mean(q_u)) / (np.mean(se_pair_own) * np.mean(q_o)) if q_u else None
    # per-system widths: joint n_J ∝ max_s SE_s², reviews n_J·q_union; own plans n_s ∝ SE_s² each, Σ n_s·q_s
    ratio_sys = None
    if q_u:
        own = np.mean([sum(res["est"]["systems"][r][res["metric"]]["se"] ** 2 * res["q_own"][r]
                           for r in res["q_own"]) for res in results
                       if all(s[res["metric"]]["se"] is not None for s in res["est"]["systems"].values())])
        ratio_sys = (np.mean(se_sys) * np.mean(q_u)) / own
    sums = {"se_pair_joint": float(np.sum(se_pair_joint)), "se_pair_own": float(np.sum(se_pair_own)),
            "se_sys": float(np.sum(se_sys)), "q_union": float(np.sum(q_u)), "q_own": float(np.sum(q_o)),
            "own_sys": float(own * len(q_u)) if q_u else 0.0, "n": len(q_u),
            "queue_s": float(np.sum([r["queue_s"] for r in results])), "rounds": len(results)}
    return {"truth": truth, "counts": c, "ratio_pairs": ratio_pairs, "ratio_systems": ratio_sys,
            "rounds": len(results), "queue_s": float(np.median([r["queue_s"] for r in results])),
            "q_union": float(np.mean(q_u)) if q_u else None, "q_own": float(np.mean(q_o)) if q_o else None,
            "sums": sums}


def merge(parts: list[dict]) -> dict:
    """One truth's summary from the summaries of runs over disjoint rounds (`--first`)."""
    counts = {k: [sum(p["counts"][k][i] for p in parts) for i in (0, 1)] for k in parts[0]["counts"]}
    s = {k: sum(p["sums"][k] for p in parts) for k in parts[0]["sums"]}
    n = s["n"]
    return {"truth": parts[0]["truth"], "counts": counts, "rounds": s["rounds"],
            "ratio_pairs": (s["se_pair_joint"] * s["q_union"]) / (s["se_pair_own"] * s["q_own"]) if n else None,
            "ratio_systems": (s["se_sys"] / n * s["q_union"] / n) / (s["own_sys"] / n) if n else None,
            "queue_s": s["queue_s"] / s["rounds"], "q_union": s["q_union"] / n if n else None,
            "q_own": s["q_own"] / n if n else None, "sums": s}


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
    for s in summaries:
        truth = s["truth"]
        cells = []
        for key in ("sys", "sys_any", "pair_one", "pair_sim", "pair_any", "family"):
            k_, n_ = s["counts"][key]
            lo, hi = clopper_pearson(k_, n_) if n_ else (float("nan"), float("nan"))
            cells.append(f"{k_ / n_:.3f} [{lo:.2f}, {hi:.2f}] n={n_}" if n_ else "no interval")
        rows.append([truth, s["rounds"], *cells, f"{s['ratio_pairs']:.2f}×" if s["ratio_pairs"] else "-",
                     f"{s['ratio_systems']:.2f}×" if s["ratio_systems"] else "-", f"{s['queue_s'] * 1000:.0f}"])
    print_table(f"Board plan through the product: 3 systems x {a.docs} abstracts, "
                f"{a.n} documents from the board queue, {a.worlds} worlds",
                ["truth", "rounds", "per system (fixed-n)", "per system (anytime)", "pair alone 95%",
                 "pairs simultaneous", "pairs simultaneous anytime", "all pairs at once",
                 "reviews joint / per-system plans (differences)",
                 "(per-system widths)", "queue step ms"], rows)


if __name__ == "__main__":
    main()
