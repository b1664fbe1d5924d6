# ruff: noqa  (scratch scripts of an investigation: README.md)
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.board_replay.replay_common import *
from scoring.stats.estimators import delta_method
from scoring.stats.difference import difference_totals
recs = load(sys.argv[1])
rows = []
for rec in recs:
    ft = full_truth(rec)
    m = "/".join(rec["cell"])
    moved_paths = set()
    for r in rec["runs"]:
        s, c = rec["sys_sample"][r]
        for b in s:
            for i in np.flatnonzero(s[b] != rec["judge"][r][b]):
                moved_paths.add(rec["paths"][r][rec["active"][r][i]])
    for r in rec["runs"]:
        e = rec["est"]["systems"][r][m]
        if e["ci"] is None: continue
        g = metric(rec, r)
        T = sum(ft[r].values())
        j, st, s, c = per_system_inputs(rec, r)
        tot = difference_totals(j, st, s, certain=c, variance="jeffreys")
        _, _, gT = delta_method(g, T, np.zeros((T.size,)*2))
        lin = float(gT @ (tot.total - T)); nonlin = g(tot.total) - g(T) - lin
        rows.append(dict(seed=rec["seed"], r=r, err=e["value"]-rec["truth_v"][r], se=e["se"], lin=lin, nonlin=nonlin,
                         inactive=rec["truth_v"][r]-g(T), other_moved=len(moved_paths)))
import pandas as pd
df = pd.DataFrame(rows)
df["z"] = df.err/df.se
print("n", len(df), "mean z", df.z.mean(), "mean err/se", (df.err/df.se).mean())
print("nonlinear remainder |.|/se: mean", (df.nonlin.abs()/df.se).mean(), "max", (df.nonlin.abs()/df.se).max())
print("err = lin + nonlin + (-inactive) check", np.abs(df.err - (df.lin + df.nonlin - df.inactive)).max())
print("inactive gap/se: mean", (df.inactive/df.se).mean(), "share of rounds with gap!=0", (df.inactive.abs()>1e-12).mean())
print("bias of estimator vs truth, in se:", (df.err.mean()/df.se.mean()))
df.to_pickle(sys.argv[2])
