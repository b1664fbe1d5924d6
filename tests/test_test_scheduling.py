"""The suite's own machinery (tests/conftest.py): session templates built once per run and shared by the xdist
workers; `--dist loadgroup` groups that keep a module-scoped fixture on one worker; the guard that fails a test
leaving a command's databases open."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from audit.store import database as store
from tests.conftest import refuse_command_databases_left_open, shared_template


@pytest.fixture
def factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A stand-in for pytest's tmp_path_factory, as an xdist worker sees it (its base folder under the run's)."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")

    class Factory:
        def getbasetemp(self) -> Path:
            (tmp_path / "popen-gw0").mkdir(exist_ok=True)
            return tmp_path / "popen-gw0"

    return Factory()


def test_a_template_is_built_once_while_a_second_caller_waits_for_it(factory, tmp_path):
    builds: list[str] = []

    def build(path: Path) -> None:
        builds.append(threading.current_thread().name)
        time.sleep(0.3)  # the second caller arrives while this one builds
        path.write_text("scored")

    got: list[Path] = []
    workers = [threading.Thread(target=lambda: got.append(shared_template(factory, "t", build)), name=f"w{i}")
               for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(builds) == 1 and len(got) == 2 and got[0] == got[1]
    assert got[0].read_text() == "scored" and got[0].parent.parent == tmp_path  # the run's folder, not the worker's


def test_a_build_that_failed_half_way_is_built_again_from_nothing(factory):
    def broken(path: Path) -> None:
        path.write_text("half")
        Path(f"{path}-wal").write_text("half")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        shared_template(factory, "t", broken)

    def build(path: Path) -> None:
        assert not path.exists() and not Path(f"{path}-wal").exists()
        path.write_text("whole")

    assert shared_template(factory, "t", build).read_text() == "whole"


@pytest.fixture(scope="module")
def _module_wide() -> int:
    return 1


def test_a_test_on_a_module_fixture_is_grouped_by_its_module(request, _module_wide):
    (group,) = [m.args[0] for m in request.node.iter_markers("xdist_group")]
    assert group == "tests/test_test_scheduling.py"


def test_a_test_without_one_is_dealt_out_on_its_own(request, tmp_path):
    assert not list(request.node.iter_markers("xdist_group"))


def test_a_command_database_left_open_fails_the_test_and_is_closed(tmp_path):
    refuse_command_databases_left_open("t")  # nothing left: passes
    db = store.seal_on_success(store.open_db(tmp_path / "left.db"))  # what a command's body opens, never sealed
    with pytest.raises(pytest.fail.Exception, match=r"t left command databases open .*left\.db"):
        refuse_command_databases_left_open("t")
    assert store._TO_SEAL == []
    with pytest.raises(Exception, match="closed"):
        db.execute("SELECT 1")
    refuse_command_databases_left_open("t")  # closed and forgotten: the next test is not failed for it
