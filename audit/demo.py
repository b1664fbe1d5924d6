"""The bundled demo run that the dashboard opens on."""

from __future__ import annotations

from pathlib import Path

from sqlite_utils import Database

from audit.errors import RunExists
from audit.runs import score_run

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "chimera"
DEMO_RUN = "demo-chimera-mixed"
DEMO = {
    "gold": DATA / "eval.csv",
    "pred": DATA / "pred_mixed.jsonl",
    "judge": f"replay:{DATA / 'judge_mixed.jsonl'}",
}
BUNDLED_FILES = {
    "CHIMERA eval.csv (216 abstracts, gold)": DATA / "eval.csv",
    "pred_mixed.jsonl (sample predictions)": DATA / "pred_mixed.jsonl",
    "pred_perfect.jsonl (gold spans as predictions)": DATA / "pred_perfect.jsonl",
    "judge_mixed.jsonl (judge log for pred_mixed)": DATA / "judge_mixed.jsonl",
}


def ensure_demo(db: Database) -> str:
    """Score the demo run once (replay judge: no network); return its name."""
    if not list(db.query("SELECT 1 FROM runs WHERE name = ?", [DEMO_RUN])):
        try:
            score_run(db, "chimera", str(DEMO["gold"]), str(DEMO["pred"]), DEMO["judge"], run=DEMO_RUN)
        except RunExists:
            pass  # another session scored it at the same moment
    return DEMO_RUN
