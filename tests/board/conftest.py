"""Boards' test databases: three CHIMERA runs on the bundled gold (two judges of the mixed predictions, and the
perfect predictions: they share some questions), one on other gold, the ideation demo run (three systems) and two
LitXBench demo runs on the same gold."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from audit.demo import DATA
from audit.review.reviews_io import import_reviews
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import decisions
from devtools.generate import generate
from scoring.families import TASKS
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED, PRED_PERFECT, shared_template

CHIMERA_RUNS = {"a": (PRED_MIXED, JUDGE_LOG), "b": (PRED_MIXED, DATA / "chimera" / "judge_smollm2_structured.jsonl"),
                "c": (PRED_PERFECT, JUDGE_LOG)}

LITX_RUNS = ("demo-litxbench-drop-meas30", "demo-litxbench-process-perturb")


def _boards(path: Path) -> None:
    other = path.parent / "boards-other"
    db = open_db(path)
    for name, (pred, judge) in CHIMERA_RUNS.items():
        score_run(db, "chimera", {"gold": str(GOLD), "pred": str(pred)}, f"replay:{judge}", run=name)
    generate(6, other, seed=3)
    score_run(db, "chimera", {"gold": str(other / "gold.csv"), "pred": str(other / "pred.jsonl")},
              f"replay:{other / 'judge.jsonl'}", run="other-gold")
    demo = TASKS["ideation"].demo_runs(DATA)[0]
    score_run(db, "ideation", demo.inputs, demo.judge, run="ideas")
    for demo in TASKS["litxbench"].demo_runs(DATA):
        if demo.name in LITX_RUNS:
            score_run(db, "litxbench", demo.inputs, demo.judge, run=demo.name)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()


@pytest.fixture(scope="session")
def board_template(tmp_path_factory) -> Path:
    """`_boards`, built once per test run (shared by the xdist workers)."""
    return shared_template(tmp_path_factory, "boards", _boards)


@pytest.fixture
def bdb(board_template, tmp_path):
    path = tmp_path / "b.db"
    shutil.copyfile(board_template, path)
    db = open_db(path)
    yield db
    db.conn.close()


def review_all(db, run: str, tmp_path: Path, *, seed: int = 0, reviewer: str = "ana") -> None:
    """Every decision of `run` labelled by `reviewer` with a random allowed label (one import)."""
    rng = random.Random(seed)
    task = TASKS[db.execute("SELECT task FROM runs WHERE name = ?", [run]).fetchone()[0]]
    lines = []
    for n, d in enumerate(decisions(db, run)):
        labels = task.label_schemes[d["kind"]].labels
        lines.append(json.dumps({"uid": f"{run}-{seed}-{n}", "doc": d["doc"], "kind": d["kind"], "type": d["type"],
                                 "left": d["left"], "right": d["right"], "reviewer": reviewer,
                                 "label": rng.choice(labels), "role": "reviewer", "note": None, "blind": False,
                                 "created": "2026-01-01T00:00:00+00:00"}))
    p = tmp_path / f"{run}-{seed}.jsonl"
    p.write_text("\n".join(lines) + "\n")
    import_reviews(db, run, p)
