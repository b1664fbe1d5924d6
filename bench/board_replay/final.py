# ruff: noqa  (scratch scripts of an investigation: README.md)
"""Per captured product round: the board estimator (scoring.stats.board.board_estimate, as audit/board/joint.py calls
it) with and without `movable`, its movable rule the product's (_movable_vectors: every decision given each label)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import pickle
from bench.board_replay.replay_common import *
from audit.review.count_vectors import flatten
from audit.review.sampling import metric_of_totals
from scoring.stats.board import board_estimate
import bench.board_plan as bp
_world = {}
def world_vectors(rec, w):
    key = (w, tuple(rec["runs"]))
    if key not in _world:
        info = infos()[w]; task = get_task(rec["task"]); out = {}
        for r in rec["runs"]:
            paths = rec["paths"][r]
            keys, jl = {}, {}
            for _, doc, kind, typ, left, right, lab, q in info["decisions"][r]:
                keys.setdefault(doc, []).append((kind, typ, left, right)); jl.setdefault(doc, {})[(kind, typ, left, right)] = lab
            J, MV = {}, {}
            for doc, p in info["payloads"][r].items():
                J[doc] = np.asarray(flatten(task.counts(p, jl.get(doc, {})), paths), dtype=float)
                can = np.zeros(len(paths), bool)
                for i in range(2):
                    labs = {k: task.label_schemes[k[0]].labels[min(i, len(task.label_schemes[k[0]].labels) - 1)] for k in keys.get(doc, [])}
                    can |= np.asarray(flatten(task.counts(p, labs), paths)) != J[doc]
                MV[doc] = can
            out[r] = (J, MV)
        _world[key] = out
    return _world[key]

def one(rec, use_movable):
    t = bp.TRUTHS.index(rec["truth"]); k = rec["seed"] - 1000 * t; w = k % 4
    info = infos()[w]; task = get_task(rec["task"])
    cell = next(c for c in task.headline if c.path == rec["cell"])
    labels = bp.true_labels(info, rec["truth"], random.Random(rec["seed"]))
    wv = world_vectors(rec, w); runs = rec["runs"]
    J, H, MV, G = {}, {}, {}, {}
    for r in runs:
        paths = rec["paths"][r]; Jr, MVr = wv[r]
        by = {}
        for _, doc, kind, typ, left, right, _, q in info["decisions"][r]:
            by.setdefault(doc, {})[(kind, typ, left, right)] = labels[q]
        Hr = {doc: np.asarray(flatten(task.counts(p, by.get(doc, {})), paths), dtype=float) for doc, p in info["payloads"][r].items()}
        rv = set(rec["sampled_blocks"]) | set(rec["known_blocks"])
        eff = {b: (Hr[b] if b in rv else Jr[b]) for b in Hr}
        moved = np.any(np.array([Jr[b] != eff[b] for b in Jr]), axis=0)
        if use_movable: moved |= np.any(np.array([MVr[b] for b in Jr]), axis=0)
        act = np.flatnonzero(moved)
        if act.size == 0: act = np.array([0])
        base = sum(Jr.values())
        full = metric_of_totals(task, cell, paths, rec["options"][r])
        def g(v, base=base, act=act, full=full):
            t_ = base.copy(); t_[act] = v; return full(t_)
        J[r] = {b: Jr[b][act] for b in Jr}; H[r] = {b: Hr[b][act] for b in Hr}; MV[r] = {b: MVr[b][act] for b in Jr}; G[r] = g
    res = {"sys": [], "pair": [], "sim": []}
    for r in runs:
        s, c = rec["sys_sample"][r]
        b = board_estimate({r: J[r]}, rec["strata"], {r: {d: H[r][d] for d in s}}, {r: G[r]}, certain={r: {d: H[r][d] for d in c}},
                           bounds=rec["bounds"], movable={r: MV[r]} if use_movable else None)
        e = b.per_system[r]
        if e.ci is not None: res["sys"].append((rec["truth"], rec["seed"], r, e.estimate, e.ci, rec["truth_v"][r], e.se))
    S = set(rec["sampled_blocks"]); K = set(rec["known_blocks"])
    cert_blocks = {b for b in rec["strata"] if rec["strata"][b] == "no decisions" or b in K}
    bd = board_estimate({r: J[r] for r in runs}, rec["strata"], {r: {d: H[r][d] for d in S} for r in runs}, G,
                        certain={r: {d: H[r][d] for d in cert_blocks} for r in runs}, bounds=rec["bounds"],
                        movable=MV if use_movable else None)
    for p in bd.pairs:
        tv = rec["truth_v"][p.a] - rec["truth_v"][p.b]
        if p.estimate.ci is not None:
            res["pair"].append((rec["truth"], rec["seed"], (p.a, p.b), p.estimate.estimate, p.estimate.ci, tv, p.estimate.se))
            res["sim"].append((rec["truth"], rec["seed"], (p.a, p.b), p.simultaneous.estimate, p.simultaneous.ci, tv, p.simultaneous.se))
    return res

if __name__ == "__main__":
    recs = load(sys.argv[1]); mode = sys.argv[3] == "movable"
    out = {"sys": [], "pair": [], "sim": []}
    for rec in recs:
        for k, v in one(rec, mode).items(): out[k] += v
    report(out, sys.argv[3]); pickle.dump(out, open(sys.argv[2], "wb"))
