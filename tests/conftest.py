import fcntl
import functools
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from audit.store import database as store
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


def run_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temp folder: under xdist the parent of the worker's own (`pytest-N/popen-gwK`), shared by workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _scan_installed_components_once() -> None:
    """Every `AppTest` run scans the metadata of each installed distribution for Streamlit components (about 0.15 s
    here, 43 s of the fast suite's CPU); nothing is installed while the tests run, so a worker scans once."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # another Streamlit: nothing to spare
        return
    scan = functools.cache(manifest_scanner.scan_component_manifests)
    manifest_scanner.scan_component_manifests = lambda *a, **kw: list(scan(*a, **kw))


def pytest_configure(config: pytest.Config) -> None:
    _scan_installed_components_once()
    config.addinivalue_line("markers", "alone: a browser test that runs while no other xdist worker runs a browser "
                                       "test (it asserts a timing)")


@pytest.fixture(autouse=True)
def _no_command_database_left_open(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that runs a CLI command's body without `main` must close what it opened (`seal_all`): a database left
    in the list is sealed by the next command this worker runs, which failed once its file had been removed with
    the passed test's tmp_path."""
    yield
    refuse_command_databases_left_open(request.node.nodeid)


def refuse_command_databases_left_open(nodeid: str) -> None:
    """Close the databases a command opened and nothing sealed; fail `nodeid` naming them, if there were any."""
    if store._TO_SEAL:
        left = [store.db_file(db) for db in store._TO_SEAL]
        store.seal_all(succeeded=False)
        pytest.fail(f"{nodeid} left command databases open (call seal_all after the command): {left}")


@pytest.fixture(autouse=True)
def _alone_or_together(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Under xdist, for the browser tests (`e2e`): a test marked `alone` waits until the other workers' browser
    tests are done and holds them off until it is done itself; other tests run side by side (a shared lock). An
    `xdist_group` only keeps its tests off each other. The gate lets no new test start while an `alone` test waits, so
    a busy worker cannot starve it.

    The real-LLM tests, which scripts/test.sh runs beside the browser tests, pass through: an `alone` test waiting
    minutes for one of them would idle every worker. Their llama.cpp server takes at most one core (one thread).
    The fast suite never asserts a timing."""
    node = request.node
    if not os.environ.get("PYTEST_XDIST_WORKER") or not node.get_closest_marker("e2e"):
        yield
        return
    alone = node.get_closest_marker("alone") is not None
    root = run_temp(tmp_path_factory)
    with (root / "e2e-gate.lock").open("a") as gate, (root / "e2e-run.lock").open("a") as run:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(run, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(run, fcntl.LOCK_UN)
            if alone:
                fcntl.flock(gate, fcntl.LOCK_UN)


def shared_template(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The database `build(path)` writes, built once per test run: xdist workers share one base folder, and the
    first worker to ask builds it under a lock while the others wait for it (each worker built its own before:
    the demo alone costs about 5 s of CPU per worker). Callers copy it and never write to it."""
    folder = run_temp(tmp_path_factory) / "shared-templates"
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

    The real-LLM tests come first: xdist hands out groups in the order collected, and theirs, the longest (4-5
    minutes on a loaded machine), was handed out last, after the browser tests (a CI run waited 7 minutes for it
    alone at the end of the browser phase).
    """
    for item in items:
        if item.get_closest_marker("llm"):
            item.add_marker(pytest.mark.xdist_group("llama-server"))
        elif _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items.sort(key=lambda item: item.get_closest_marker("llm") is None)  # stable: the rest keep their order
