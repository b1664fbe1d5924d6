"""Full CHIMERA scoring of N generated abstracts with the replay judge, beside the paper's procedure done naively.

Rejudge side: `audit.runs.score_run` into a fresh SQLite file (every decision stored), in a fresh interpreter.
Naive side: `devtools/naive_chimera.py` (the loops of CHIMERA-KB `src/eval.py`, both passes, both span orders
every time, no cache, each judge call a dict lookup into the same replay log; nothing stored), in another
fresh interpreter. Each side runs `--repeat` times (fresh process and fresh database each time); the table
shows the median wall time and the largest peak RSS. Both must give identical metrics (OK / DIFF).

Judge lookups are counted by wrapping `ReplayJudge.answer` (Rejudge) and the replay lookup (naive); the
expected Rejudge count, the distinct ordered same-type span pairs, is computed independently from the files.

    python bench/score_chimera.py N [--seed S] [--repeat R] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    RUN_NAME,
    data_paths,
    median,
    peak_rss_mb,
    print_table,
    run_child,
    verdict,
    workdir,
)

TARGET_S = 10.0


def _leaves(d: dict, prefix: tuple = ()):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _leaves(v, (*prefix, k))
        else:
            yield (*prefix, k), v


def compare_metrics(a: dict, b: dict) -> tuple[int, int, float, list[str]]:
    """(leaves compared, leaves differing by more than 1e-9, max abs difference, first differing paths)."""
    n = bad = 0
    worst = 0.0
    where: list[str] = []
    for path, v in _leaves(b):
        node: object = a
        for k in path:
            node = node.get(k) if isinstance(node, dict) else None  # type: ignore[assignment]
        n += 1
        diff = abs(float(node) - float(v)) if isinstance(node, int | float) else float("inf")
        worst = max(worst, diff)
        if diff > 1e-9:
            bad += 1
            if len(where) < 5:
                where.append(f"{'/'.join(path)}: {node} vs {v}")
    return n, bad, worst, where


# ---------------------------------------------------------------- children (fresh interpreters)


def child_ours(gold: str, pred: str, log: str, db_path: str) -> dict:
    t_start = time.perf_counter()
    import audit.runs as runs
    from audit.store.database import open_db
    from scoring.families import get_task
    from scoring.judges.replay import ReplayJudge

    import_s = time.perf_counter() - t_start
    rss_imports = peak_rss_mb()
    phases: Counter[str] = Counter()
    asked: list[tuple] = []
    orig_answer = ReplayJudge.answer

    def answer(self, query):  # counts every lookup into the replay log
        asked.append((query.doc, query.entity_type, query.span1, query.span2))
        return orig_answer(self, query)

    ReplayJudge.answer = answer  # type: ignore[method-assign]

    def timed(name, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                phases[name] += time.perf_counter() - t
        return wrapper

    task = get_task("chimera")
    task.load = timed("load inputs", task.load)  # type: ignore[method-assign]
    task.make_judge = timed("read judge log", task.make_judge)  # type: ignore[method-assign]
    task.decide = timed("decide (judge lookups)", task.decide)  # type: ignore[method-assign]
    runs._store = timed("store (counts + SQL)", runs._store)

    class TimedTx:
        def __init__(self, db):
            self.inner = orig_tx(db)

        def __enter__(self):
            self.t = time.perf_counter()
            return self.inner.__enter__()

        def __exit__(self, *exc):
            try:
                return self.inner.__exit__(*exc)
            finally:
                phases["  of which SQL transaction"] += time.perf_counter() - self.t

    orig_tx = runs.transaction
    runs.transaction = TimedTx  # type: ignore[assignment]
    for suffix in ("", "-wal", "-shm"):
        Path(db_path + suffix).unlink(missing_ok=True)
    t0 = time.perf_counter()
    db = open_db(db_path)
    phases["open database"] += time.perf_counter() - t0
    row = runs.score_run(db, "chimera", {"gold": gold, "pred": pred}, f"replay:{log}", run=RUN_NAME)
    wall = time.perf_counter() - t0
    n_dec = db.conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    n_docs = db.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    judge = row["summary"]["judge"]
    return {"wall_s": wall, "import_s": import_s, "phases": dict(phases), "lookups": len(asked),
            "distinct_lookups": len(set(asked)), "decisions_stored": n_dec, "documents_stored": n_docs,
            "distinct_queries": judge["distinct_queries"], "paper_calls_estimate": judge["paper_calls"],
            "missing": judge["missing"], "invalid": judge["invalid"], "metrics": row["original_metrics"],
            "peak_rss_mb": peak_rss_mb(), "rss_after_imports_mb": rss_imports,
            "db_mib": Path(db_path).stat().st_size / 2**20}


def child_naive(gold: str, pred: str, log: str) -> dict:
    t_start = time.perf_counter()
    from devtools import naive_chimera

    import_s = time.perf_counter() - t_start
    rss_imports = peak_rss_mb()
    t0 = time.perf_counter()
    inputs = naive_chimera.load_inputs(gold, pred, log)
    t1 = time.perf_counter()
    metrics, calls = naive_chimera.score(inputs)
    t2 = time.perf_counter()
    return {"wall_s": t2 - t0, "import_s": import_s, "phases": {"load inputs + judge log": t1 - t0,
                                                                 "score (both passes)": t2 - t1},
            "lookups": calls["total"], "entity_pass_lookups": calls["entity_pass"],
            "relation_pass_lookups": calls["relation_pass"], "metrics": metrics, "peak_rss_mb": peak_rss_mb(),
            "rss_after_imports_mb": rss_imports}


# ---------------------------------------------------------------- parent


def expected_pairs(paths: dict) -> tuple[int, int]:
    """(distinct ordered same-type span pairs, same-type (pred, gold) decisions), computed from the files."""
    import csv

    from devtools.generate import _norm_relations, ordered_pairs

    csv.field_size_limit(64 * 1024 * 1024)
    preds = {}
    with open(paths["pred"], encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            preds[rec["paper_id"]] = _norm_relations(rec["relations"])
    n_keys = n_dec = 0
    with open(paths["gold"], encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            gold = _norm_relations(json.loads(r["readable_relations"] or "{}"))
            keys = ordered_pairs(r["paper_id"], preds.get(r["paper_id"], {}), gold)
            n_keys += len(keys)
            p = {(t, pv) for rel in preds.get(r["paper_id"], {}).values() for x in rel for t, ss in x.items()
                 for pv in ss}
            g = {(t, gv) for rel in gold.values() for x in rel for t, ss in x.items() for gv in ss}
            n_dec += sum(1 for t, _ in p for u, _ in g if t == u)
    return n_keys, n_dec


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    ap.add_argument("--child", choices=("ours", "naive"), help=argparse.SUPPRESS)
    ap.add_argument("--paths", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        rep = child_ours(*args.paths) if args.child == "ours" else child_naive(*args.paths)
        print(json.dumps(rep))
        return rep

    paths = data_paths(args.n, args.seed)
    want_keys, want_decisions = expected_pairs(paths)
    me = str(Path(__file__).resolve())
    ours, naive = [], []
    for i in range(args.repeat):
        db_path = str(workdir() / f"score-{args.n}-{i}.db")
        ours.append(run_child([me, str(args.n), "--child", "ours", "--paths", str(paths["gold"]), str(paths["pred"]),
                               str(paths["log"]), db_path]))
        naive.append(run_child([me, str(args.n), "--child", "naive", "--paths", str(paths["gold"]),
                                str(paths["pred"]), str(paths["log"])]))
    o, nv = ours[0], naive[0]
    n_leaves, n_bad, worst, where = compare_metrics(o["metrics"], nv["metrics"])
    same = n_bad == 0
    t_ours = median([r["wall_s"] for r in ours])
    t_naive = median([r["wall_s"] for r in naive])
    rss_ours = max(r["peak_rss_mb"] for r in ours)
    rss_naive = max(r["peak_rss_mb"] for r in naive)

    print_table(f"Full scoring, N = {args.n:,} abstracts (median of {args.repeat} fresh processes)",
                ["side", "wall s", "peak RSS MiB", "RSS after imports MiB", "judge lookups", "stores"],
                [["Rejudge score_run (replay judge, SQLite)", t_ours, rss_ours,
                  max(r["rss_after_imports_mb"] for r in ours), o["lookups"],
                  f"{o['decisions_stored']:,} decisions, {o['documents_stored']:,} docs, {o['db_mib']:.1f} MiB"],
                 ["paper's procedure, naive in memory", t_naive, rss_naive,
                  max(r["rss_after_imports_mb"] for r in naive), nv["lookups"], "nothing"],
                 ["ratio Rejudge / naive", t_ours / t_naive, rss_ours / rss_naive, "", o["lookups"] / nv["lookups"],
                  ""]])
    order = ["open database", "load inputs", "read judge log", "decide (judge lookups)", "store (counts + SQL)",
             "  of which SQL transaction"]
    print_table("Phases (first repeat, seconds)", ["side", "phase", "s"],
                [["Rejudge", k, o["phases"][k]] for k in order if k in o["phases"]]
                + [["Rejudge", "interpreter imports (not in wall)", o["import_s"]]]
                + [["naive", k, v] for k, v in nv["phases"].items()])
    print_table("Judge lookups", ["count", "value"], [
        ["Rejudge lookups (ReplayJudge.answer calls)", o["lookups"]],
        ["  of which distinct", o["distinct_lookups"]],
        ["distinct ordered same-type pairs (from the files)", want_keys],
        ["Rejudge summary: distinct_queries / paper_calls estimate", f"{o['distinct_queries']:,} / "
                                                                     f"{o['paper_calls_estimate']:,}"],
        ["naive lookups, entity-agreement pass", nv["entity_pass_lookups"]],
        ["naive lookups, relation pass", nv["relation_pass_lookups"]],
        ["naive lookups, total", nv["lookups"]],
        ["naive entity pass / Rejudge", nv["entity_pass_lookups"] / max(1, o["lookups"])],
        ["naive total / Rejudge", nv["lookups"] / max(1, o["lookups"])],
        ["decisions stored / expected same-type pairs", f"{o['decisions_stored']:,} / {want_decisions:,}"],
        ["replay answers missing / invalid", f"{o['missing']} / {o['invalid']}"]])
    lookups_ok = o["lookups"] == o["distinct_lookups"] == want_keys
    print_table("Checks", ["check", "result"], [
        ["metrics identical (Rejudge vs naive)", f"{'OK' if same else 'DIFF'} ({n_leaves} numbers, max abs diff "
                                                 f"{worst:.1e})" + ("" if same else "; " + "; ".join(where))],
        [f"full scoring <= {TARGET_S:g} s", verdict(t_ours <= TARGET_S)],
        ["lookups = distinct ordered pairs", verdict(lookups_ok)],
        ["every decision stored", verdict(o["decisions_stored"] == want_decisions)],
        ["naive lookups = Rejudge's paper_calls estimate", verdict(nv["lookups"] == o["paper_calls_estimate"])]])
    out = {"n": args.n, "ours": ours, "naive": naive, "metrics_identical": same, "ours_wall_s": t_ours,
           "naive_wall_s": t_naive, "expected_pairs": want_keys}
    for side in (ours, naive):
        for r in side:
            r.pop("metrics", None)
    if args.json:
        print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
