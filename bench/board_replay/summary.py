# ruff: noqa  (scratch scripts of an investigation: README.md)
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import pickle, copy
from bench.board_replay.replay_common import *
D = sys.argv[1]
import bench.board_plan as bp
from scipy import stats as st
def cp(k, n):
    lo = st.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = st.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return lo, hi
def line(name, rows):
    cov = [lo - 1e-12 <= tv <= hi + 1e-12 for *_, est, (lo, hi), tv, se in rows]
    n, k = len(cov), sum(cov); lo, hi = cp(k, n)
    half = np.mean([(ci[1] - ci[0]) / 2 for *_, est, ci, tv, se in rows])
    z = np.array([(est - tv) / se for *_, est, ci, tv, se in rows])
    return f"{name}: {k/n:.3f} [{lo:.3f}, {hi:.3f}] n={n} half={half:.4f} z<-2 {np.mean(z<-2):.3f} z>2 {np.mean(z>2):.3f}"
for truth, pat, after in [("clustered", D + "/cl[0-9].pkl", D + "/cl_mov.pkl"), ("uniform", D + "/un0.pkl", D + "/un_mov.pkl"),
                          ("lenient-to-one", D + "/le0.pkl", D + "/le_mov.pkl")]:
    recs = load(pat)
    before = {"sys": [], "pair": [], "sim": []}
    recs_b, recs_a = [], []
    A = pickle.load(open(after, "rb"))
    se_a = {(t, s, r): se for t, s, r, est, ci, tv, se in A["sys"]}
    se_p = {(t, s, p): se for t, s, p, est, ci, tv, se in A["pair"]}
    for rec in recs:
        m = "/".join(rec["cell"]); est = rec["est"]
        for r, s in est["systems"].items():
            if s[m]["ci"] is not None:
                before["sys"].append((truth, rec["seed"], r, s[m]["value"], s[m]["ci"], rec["truth_v"][r], s[m]["se"]))
        for p in est["pairs"]:
            d = rec["truth_v"][p["a"]] - rec["truth_v"][p["b"]]
            if p["ci"] is not None:
                before["pair"].append((truth, rec["seed"], (p["a"], p["b"]), p["difference"], p["ci"], d, p["se"]))
                before["sim"].append((truth, rec["seed"], (p["a"], p["b"]), p["difference"], p["ci_simultaneous"], d, p["se"]))
        info = infos()[(rec["seed"] % 1000) % 4]
        recs_b.append(bp.cost_record(info, est, m))
        e2 = copy.deepcopy(est)
        for r in e2["systems"]:
            e2["systems"][r][m]["se"] = se_a.get((truth, rec["seed"], r), e2["systems"][r][m]["se"])
        for p in e2["pairs"]:
            p["se"] = se_p.get((truth, rec["seed"], (p["a"], p["b"])), p["se"])
        recs_a.append(bp.cost_record(info, e2, m))
    print(f"## {truth}: {len(recs)} rounds")
    for k in ("sys", "pair", "sim"):
        print("  before", line(k, before[k])); print("  after ", line(k, A[k]))
    for name, rr in (("before", recs_b), ("after", recs_a)):
        r = bp.review_ratios(rr)
        print(f"  reviews {name}: pairs same {r['pairs_same_shared']:.2f} ({r['pairs_same_counted']:.2f}); systems same {r['systems_same_shared']:.2f} ({r['systems_same_counted']:.2f}); common {r['systems_common_shared']:.2f} ({r['systems_common_counted']:.2f}); overlap {r['overlap_shared']:.2f}/{r['overlap_limit']:.2f}")
