import json
from pathlib import Path

import pytest

from audit.store.database import open_db

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "chimera"
FIXTURES = ROOT / "tests" / "fixtures"
GOLD = DATA / "eval.csv"
PRED_MIXED = DATA / "pred_mixed.jsonl"
PRED_PERFECT = DATA / "pred_perfect.jsonl"
JUDGE_LOG = DATA / "judge_mixed.jsonl"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "rejudge.db"


@pytest.fixture
def fresh_db(db_path: Path):
    db = open_db(db_path)
    yield db
    db.conn.close()


@pytest.fixture
def db_with_run(fresh_db):
    from audit.runs import score_run

    score_run(fresh_db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="mixed")
    return fresh_db


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path
