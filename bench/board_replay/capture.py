# ruff: noqa  (scratch scripts of an investigation: README.md)
"""Run bench/board_plan.py rounds and pickle, per round, every input the board estimators read."""
import pickle, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import bench.board_plan as bp
from bench.common import workdir

def one(template, info, truth, seed, n, scratch):
    from audit.board.joint import board_state, load_board_plan
    from audit.store.database import run_row
    played = bp.play_round(template, info, truth, seed, n, scratch)  # the round bench/board_plan.py plays
    db, runs, task, cell = played.db, played.runs, played.task, played.cell
    state = board_state(db, load_board_plan(db, "b"))
    rec = {"truth": truth, "seed": seed, "task": task.name if hasattr(task, "name") else run_row(db, runs[0])["task"],
           "cell": cell.path, "runs": runs, "truth_v": played.truth_v, "est": played.est,
           "judge": state.judge, "human": state.human, "strata": state.strata,
           "sys_sample": {r: state.system_sample(r) for r in runs},
           "sampled_blocks": sorted(state.sampled), "known_blocks": sorted(state.known),
           "base": state.base, "active": state.active, "paths": state.paths,
           "options": {r: state.views[r].row["inputs"].get("options") or {} for r in runs},
           "asks": state.asks, "plan_blocks": list(state.stored.plan.blocks),
           "bounds": state.task.metric_bounds(cell), "hib": cell.higher_is_better}
    db.conn.close()
    return rec

def main():
    truth, first, rounds, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    n = 45 if len(sys.argv) < 6 else int(sys.argv[5])
    worlds = bp.make_worlds(4, 120)
    from audit.store.database import open_db
    infos = []
    for w in worlds:
        db = open_db(w); infos.append(bp.world_questions(db)); db.conn.close()
    import os
    scratch = workdir() / f"h7a-scratch-{os.getpid()}"
    scratch.mkdir(parents=True, exist_ok=True)
    t = bp.TRUTHS.index(truth)
    recs = []
    t0 = time.process_time()
    for k in range(first, first + rounds):
        w = k % len(worlds)
        recs.append(one(worlds[w], infos[w], truth, 1000 * t + k, n, scratch))
        if len(recs) % 5 == 0:
            Path(out).write_bytes(pickle.dumps(recs))
            print(truth, k, f"{time.process_time()-t0:.0f}s cpu", file=sys.stderr, flush=True)
    Path(out).write_bytes(pickle.dumps(recs))
main()
