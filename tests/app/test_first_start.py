"""First start and page views: the demo runs are scored once into a new database; a page view never writes.

A demo run deleted on purpose stays deleted; the Runs page loads missing demo runs on request; a read-only
database (with or without the demo runs) browses every page and exports without an error.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit.demo import SEEDED, demo_runs
from audit.runs import delete_run
from audit.store.database import open_db
from tests.app.conftest import open_page
from tests.conftest import ROOT, copy_of
from ui import first_start

PAGES = ("runs", "overview", "queue", "scores", "agreement", "export", "document", "errata", "compare")


def run_names(path: Path) -> set[str]:
    return {r[0] for r in open_db(path).execute("SELECT name FROM runs").fetchall()}


def first_run() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    assert not at.exception, at.exception
    return at


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_the_first_start_scores_every_demo_run_once_and_records_it(new_app_db: Path) -> None:
    app_db = new_app_db
    first_run()
    assert run_names(app_db) == {d.name for _, d in demo_runs()}
    assert open_db(app_db).execute("SELECT value FROM settings WHERE key = ?", [SEEDED]).fetchone() == ("1",)


def test_the_statistics_warm_up_starts_after_the_first_start_scored_the_demo(
        new_app_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The background import of the statistics stack (~1.3 s of CPU) does not compete with the first start's
    scoring for the GIL and a core (#40.9)."""
    events: list[str] = []
    real_load = first_start.load_demo
    monkeypatch.setattr(first_start, "load_demo", lambda *a, **k: events.append("demo scored") or real_load(*a, **k))
    monkeypatch.setattr(first_start, "warm_statistics", lambda: events.append("statistics warm-up"))
    first_run()
    assert events == ["demo scored", "statistics warm-up"]


def test_a_demo_run_deleted_on_purpose_stays_deleted_until_loaded_again(app_db: Path) -> None:
    at = first_run()
    gone = demo_runs()[-1][1].name
    delete_run(open_db(app_db), gone, force=True)
    at = open_page(at, "overview")
    at = open_page(at, "runs")
    assert gone not in run_names(app_db)
    at.button(key="runs.load_demo").click().run()
    assert not at.exception and gone in run_names(app_db)


@pytest.fixture(params=["empty", "with demo"])
def read_only_db(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ro"
    folder.mkdir()
    p = folder / "ro.db"
    if request.param == "with demo":
        copy_of(request.getfixturevalue("demo_template"), p)
    db = open_db(p)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    for side in folder.glob("ro.db-*"):
        side.unlink()
    p.chmod(0o444)
    folder.chmod(0o555)
    monkeypatch.setenv("REJUDGE_DB", str(p))
    monkeypatch.chdir(ROOT)
    yield p
    folder.chmod(0o755)
    p.chmod(0o644)


def test_a_read_only_database_browses_every_page_and_is_not_modified(read_only_db: Path) -> None:
    before = digest(read_only_db.parent)
    at = first_run()
    for page in PAGES:
        at = open_page(at, page)
        assert not at.exception, (page, at.exception)
        assert not any("readonly" in e.value or "read-only database" in e.value for e in at.error), page
    assert digest(read_only_db.parent) == before
    if run_names(read_only_db):
        at = open_page(at, "export", run=demo_runs()[0][1].name)
        assert at.get("download_button"), "the export page offers its downloads on a read-only database"
    else:
        at = open_page(at, "runs")
        assert any("read-only" in c.value for c in at.caption)


def test_copying_a_seeded_database_keeps_the_seeded_flag(app_db: Path, tmp_path: Path) -> None:
    """The seeded flag travels with the file (a database copied elsewhere is not re-seeded)."""
    first_run()
    db = open_db(app_db)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    copy = tmp_path / "copy.db"
    shutil.copy(app_db, copy)
    from audit.demo import needs_seeding

    assert not needs_seeding(open_db(copy))
