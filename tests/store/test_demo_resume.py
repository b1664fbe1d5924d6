"""A first start interrupted half-way (the user left the page while the demo runs were scored) is resumed at the
next visit: every demo run and board ends up stored. A database of an earlier release, which holds demo runs but
never started a first start of this kind, is still left as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.board.store import list_boards
from audit.demo import SEEDED, SEEDING, demo_boards, demo_runs, load_demo, needs_seeding
from audit.runs import delete_run
from audit.store.database import open_db
from tests.conftest import copy_of


class Interrupted(Exception):
    pass


def test_an_interrupted_first_start_is_resumed(tmp_path: Path) -> None:
    db = open_db(tmp_path / "new.db")
    assert needs_seeding(db)

    def leave(done: int, total: int, name: str) -> None:
        if done == 1:
            raise Interrupted  # the page's script stopped after the first run was stored

    with pytest.raises(Interrupted):
        load_demo(db, leave)
    assert [r["name"] for r in db.query("SELECT name FROM runs")] == [demo_runs()[0][1].name]
    assert needs_seeding(db), "a first start that did not finish is resumed, not taken for an old database"


def _half_seeded(demo_template: Path, dst: Path, *, started: bool):
    """The demo database as a first start leaves it when it stopped before its last run and the boards."""
    db = open_db(copy_of(demo_template, dst))
    for b in list_boards(db):
        db.execute("DELETE FROM boards WHERE name = ?", [b["name"]])
    delete_run(db, demo_runs()[-1][1].name, force=True)
    db.execute("DELETE FROM settings WHERE key IN (?, ?)", [SEEDED, SEEDING])
    if started:
        db.execute("INSERT INTO settings (key, value, updated) VALUES (?, '1', '')", [SEEDING])
    db.conn.commit()
    return db


def test_the_resumed_first_start_stores_the_missing_run_and_every_board(demo_template: Path, tmp_path: Path) -> None:
    db = _half_seeded(demo_template, tmp_path / "half.db", started=True)
    assert needs_seeding(db)
    assert load_demo(db) == [demo_runs()[-1][1].name]
    assert {b["name"] for b in list_boards(db)} == set(demo_boards())
    assert not needs_seeding(db)


def test_an_earlier_releases_database_with_demo_runs_is_left_as_it_is(demo_template: Path, tmp_path: Path) -> None:
    db = _half_seeded(demo_template, tmp_path / "old.db", started=False)
    assert not needs_seeding(db)
    assert not list_boards(db)
