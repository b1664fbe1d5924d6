"""Issue 27: the dashboard shows a refused database (0 bytes, pages damaged behind an intact header, a table gone, a
newer schema) as one clear error page, not a traceback, and leaves the file byte for byte as it was."""

from __future__ import annotations

import hashlib
import random
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit.store.migrations import SCHEMA_VERSION
from tests.conftest import ROOT, copy_of


@pytest.fixture(autouse=True)
def _navigation_through_app(monkeypatch):
    """As tests/app/conftest.py: run app.py's st.navigation on every AppTest run."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):  # noqa: ANN001, ANN202
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture(scope="module")
def scored(tmp_path_factory, exact_template) -> Path:
    return copy_of(exact_template, tmp_path_factory.mktemp("dash") / "base.db")


def overwrite_pages(data: bytes, pages: tuple[int, ...] = (3, 9, 17), page_size: int = 4096) -> bytes:
    out = bytearray(data)
    rng = random.Random(27)
    for n in pages:
        out[(n - 1) * page_size:n * page_size] = rng.randbytes(page_size)
    return bytes(out)


def _sql(scored: Path, p: Path, *sql: str) -> None:
    shutil.copy(scored, p)
    c = sqlite3.connect(p)
    for s in sql:
        c.execute(s)
    c.commit()
    c.close()


STATES = {
    "0-byte file": lambda s, p: p.write_bytes(b""),
    "three pages overwritten": lambda s, p: p.write_bytes(overwrite_pages(s.read_bytes())),
    "effective table gone": lambda s, p: _sql(s, p, "DROP TABLE effective"),
    "newer schema": lambda s, p: _sql(s, p, f"PRAGMA user_version = {SCHEMA_VERSION + 1}"),
}


@pytest.mark.parametrize("state", STATES)
def test_the_dashboard_shows_a_refused_database_as_a_clear_page(scored, tmp_path, monkeypatch, state):
    folder = tmp_path / "f"
    folder.mkdir()
    p = folder / "x.db"
    STATES[state](scored, p)
    before = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in folder.iterdir()}
    monkeypatch.setenv("REJUDGE_DB", str(p))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # shown as literal text: Markdown escaped
    assert len(errors) == 1 and errors[0].startswith("Cannot open the database.") and str(p) in errors[0], errors
    assert {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in folder.iterdir()} == before
