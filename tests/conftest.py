import json
import shutil
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


def _closed(db) -> None:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()


@pytest.fixture(scope="session")
def mixed_template(tmp_path_factory) -> Path:
    """The CHIMERA mixed run scored once per test process; `db_with_run` hands each test a copy."""
    from audit.runs import score_run

    path = tmp_path_factory.mktemp("mixed-template") / "mixed.db"
    db = open_db(path)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="mixed")
    _closed(db)
    return path


@pytest.fixture(scope="session")
def exact_template(tmp_path_factory) -> Path:
    """The CHIMERA mixed predictions scored with the exact judge as run `mixed`, once per test process (for tests
    of the store and of damaged databases, which need a run but not the judge's answers)."""
    from audit.runs import score_run

    path = tmp_path_factory.mktemp("exact-template") / "exact.db"
    db = open_db(path)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="mixed")
    _closed(db)
    return path


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """Every demo run scored (as the first start leaves the database), built once per test process."""
    from audit.demo import load_demo

    path = tmp_path_factory.mktemp("demo-template") / "demo.db"
    db = open_db(path)
    load_demo(db)
    _closed(db)
    return path


def copy_of(template: Path, dst: Path) -> Path:
    shutil.copyfile(template, dst)
    return dst


@pytest.fixture
def db_with_run(db_path, mixed_template):
    """A database holding the CHIMERA mixed run as `mixed` (a copy of the scored template)."""
    db = open_db(copy_of(mixed_template, db_path))
    yield db
    db.conn.close()


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests against the real local LLM (`llm`) run one after another on one xdist worker (`--dist loadgroup` in
    scripts/test.sh): two llama.cpp servers answering at once on 2 cores pass the 60 s per-request deadline."""
    for item in items:
        if item.get_closest_marker("llm"):
            item.add_marker(pytest.mark.xdist_group("llama-server"))
