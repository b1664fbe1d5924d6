# ruff: noqa  (scratch scripts of an investigation: README.md)
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.board_replay.replay_common import *
recs = load(sys.argv[1])
rows = []
for rec in recs:
    ft = full_truth(rec)
    m = "/".join(rec["cell"])
    for r in rec["runs"]:
        e = rec["est"]["systems"][r][m]
        if e["ci"] is None: continue
        g = metric(rec, r)
        T = sum(ft[r].values())
        ta = g(T)
        tv = rec["truth_v"][r]
        # per-stratum count of differing sampled blocks; judge-only
        s, c = rec["sys_sample"][r]
        ndiff = sum(int(np.any(s[b] != rec["judge"][r][b])) for b in s)
        # true number of differing blocks in population
        ndiff_pop = sum(int(np.any(ft[r][b] != rec["judge"][r][b])) for b in ft[r])
        rows.append(dict(seed=rec["seed"], r=r, est=e["value"], se=e["se"], lo=e["ci"][0], hi=e["ci"][1], tv=tv, ta=ta,
                         jo=e["judge_only"], ns=len(s), nd=ndiff, ndp=ndiff_pop, N=len(s)+len(c)))
import pandas as pd
df = pd.DataFrame(rows)
df["z"] = (df.est - df.tv) / df.se
df["za"] = (df.est - df.ta) / df.se
df["cov"] = (df.lo <= df.tv) & (df.tv <= df.hi)
df["cova"] = (df.lo <= df.ta) & (df.ta <= df.hi)
df["gap_inactive"] = df.tv - df.ta
pd.set_option("display.width", 200)
print(len(df), "cov", df["cov"].mean(), "cov vs active-truth", df.cova.mean())
print("z<-2", (df.z < -2).mean(), "z>2", (df.z > 2).mean(), "za<-2", (df.za < -2).mean(), "za>2", (df.za > 2).mean())
print(df[~df["cov"]].to_string())
df.to_pickle(sys.argv[2])
