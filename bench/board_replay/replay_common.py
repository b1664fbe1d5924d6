# ruff: noqa  (scratch scripts of an investigation: README.md)
"""Shared helpers of the board replay scripts (README.md)."""
import pickle, sys, glob
import numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from scoring.families import get_task
from audit.review.sampling import metric_of_totals
from scoring.stats.board import board_estimate

_task_cache = {}
def metric(rec, r):
    task = get_task(rec["task"])
    cell = next(c for c in task.headline if c.path == rec["cell"])
    full = metric_of_totals(task, cell, rec["paths"][r], rec["options"][r])
    base, active = rec["base"][r], rec["active"][r]
    def g(vec):
        t = base.copy(); t[active] = vec; return full(t)
    return g

def load(pattern):
    out = []
    for f in sorted(glob.glob(pattern)):
        out += pickle.load(open(f, "rb"))
    return out

def per_system_inputs(rec, r):
    sampled, certain = rec["sys_sample"][r]
    return rec["judge"][r], rec["strata"], sampled, certain

def pair_inputs(rec):
    runs = rec["runs"]; S = set(rec["sampled_blocks"]); K = set(rec["known_blocks"])
    sampled = {r: {b: rec["human"][r][b] for b in S} for r in runs}
    certain = {r: {b: rec["human"][r][b] for b in rec["human"][r] if b not in rec["strata"] or rec["strata"][b] == "no decisions" or b in K} for r in runs}
    return sampled, certain

import random
_infos = None
def infos():
    global _infos
    if _infos is None:
        import bench.board_plan as bp
        from audit.store.database import open_db
        _infos = []
        for w in bp.make_worlds(4, 120):
            db = open_db(w); _infos.append(bp.world_questions(db)); db.conn.close()
    return _infos

def full_truth(rec):
    """run -> block -> true (human) vector on the active counts, for EVERY block."""
    import bench.board_plan as bp
    from audit.review.count_vectors import flatten
    t = bp.TRUTHS.index(rec["truth"]); k = rec["seed"] - 1000 * t
    info = infos()[k % 4]
    labels = bp.true_labels(info, rec["truth"], random.Random(rec["seed"]))
    task = get_task(rec["task"])
    out = {}
    for r in rec["runs"]:
        by_doc = {}
        for _, doc, kind, typ, left, right, _, q in info["decisions"][r]:
            by_doc.setdefault(doc, {})[(kind, typ, left, right)] = labels[q]
        out[r] = {doc: np.asarray(flatten(task.counts(p, by_doc.get(doc, {})), rec["paths"][r]))[rec["active"][r]]
                  for doc, p in info["payloads"][r].items()}
    return out


def report(out, label):
    from scipy import stats as st
    for k, rows in out.items():
        cov = [lo <= tv <= hi for *_, est, (lo, hi), tv, se in rows]
        n, kk = len(cov), sum(cov)
        lo = st.beta.ppf(0.025, kk, n - kk + 1); hi = st.beta.ppf(0.975, kk + 1, n - kk) if kk < n else 1.0
        half = np.mean([(ci[1] - ci[0]) / 2 for *_, est, ci, tv, se in rows])
        z = np.array([(est - tv) / se for *_, est, ci, tv, se in rows])
        print(f"{label} {k}: {kk/n:.3f} [{lo:.3f}, {hi:.3f}] n={n} half={half:.4f} z<-2 {np.mean(z<-2):.3f} z>2 {np.mean(z>2):.3f}")

