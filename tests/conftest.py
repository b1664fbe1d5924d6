import fcntl
import json
import os
import shutil
from collections.abc import Callable
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


def shared_template(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The database `build(path)` writes, built once per test run: xdist workers share one base folder, and the
    first worker to ask builds it under a lock while the others wait for it (each worker built its own before:
    the demo alone costs about 5 s of CPU per worker). Callers copy it and never write to it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's base folder, above each worker's own
    folder = root / "shared-templates"
    folder.mkdir(exist_ok=True)
    path, done = folder / f"{name}.db", folder / f"{name}.done"
    with (folder / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the builder fails
        if not done.exists():
            for leftover in folder.glob(f"{name}.db*"):  # a build that failed half-way
                leftover.unlink()
            build(path)
            done.touch()
    return path


def _scored(path: Path, judge: str) -> None:
    from audit.runs import score_run

    db = open_db(path)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, judge, run="mixed")
    _closed(db)


@pytest.fixture(scope="session")
def mixed_template(tmp_path_factory) -> Path:
    """The CHIMERA mixed run scored once per test run; `db_with_run` hands each test a copy."""
    return shared_template(tmp_path_factory, "mixed", lambda p: _scored(p, f"replay:{JUDGE_LOG}"))


@pytest.fixture(scope="session")
def exact_template(tmp_path_factory) -> Path:
    """The CHIMERA mixed predictions scored with the exact judge as run `mixed`, once per test run (for tests
    of the store and of damaged databases, which need a run but not the judge's answers)."""
    return shared_template(tmp_path_factory, "exact", lambda p: _scored(p, "exact"))


def _demo(path: Path) -> None:
    from audit.demo import load_demo

    db = open_db(path)
    load_demo(db)
    _closed(db)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """Every demo run scored (as the first start leaves the database), built once per test run."""
    return shared_template(tmp_path_factory, "demo", _demo)


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


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)  # pytest's own record of the fixtures a test uses
    return info is not None and any(d.scope in ("module", "class") for defs in info.name2fixturedefs.values()
                                    for d in defs)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for `--dist loadgroup` (scripts/test.sh), which otherwise hands out each test on its own:

    - tests against the real local LLM (`llm`) run one after another on one xdist worker: two llama.cpp servers
      answering at once on 2 cores pass the 60 s per-request deadline;
    - the tests of a module that share a module- or class-scoped fixture run on one worker, so the fixture is
      built once rather than once on each worker (dealt out one by one, a module's tests alternate between them).
    """
    for item in items:
        if item.get_closest_marker("llm"):
            item.add_marker(pytest.mark.xdist_group("llama-server"))
        elif _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
