import shutil

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


@pytest.fixture(autouse=True)
def _navigation_through_app(monkeypatch):
    """Run app.py (and its st.navigation) on every AppTest run, as a real server does once app.py has run.

    AppTest resets Streamlit's "old-style multipage app" switch before each run; with a `pages/` folder beside
    app.py it would then run a page's script on its own. (A real server's first deep link is handled by
    `ui.entry.page_prologue`; the browser test `test_e2e_first_visit` checks it.)
    """
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):  # noqa: ANN001, ANN202
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture
def app_db(tmp_path, monkeypatch, demo_template):
    """The dashboard's database after its first start: a copy of the seeded template (tests of the first start
    itself use `new_app_db`)."""
    path = tmp_path / "app.db"
    shutil.copyfile(demo_template, path)
    monkeypatch.setenv("REJUDGE_DB", str(path))
    monkeypatch.chdir(ROOT)
    return path


@pytest.fixture
def conn(app_db):
    """An open connection to `app_db`, closed after the test."""
    from audit.store.database import open_db

    c = open_db(app_db)
    yield c
    c.conn.close()


@pytest.fixture
def new_app_db(tmp_path, monkeypatch):
    """A database path that does not exist yet: the app's first run creates it and scores the demo runs."""
    path = tmp_path / "new.db"
    monkeypatch.setenv("REJUDGE_DB", str(path))
    monkeypatch.chdir(ROOT)
    return path


@pytest.fixture
def app(app_db):
    """The app after its first run on the seeded database."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    return at


def open_page(at: AppTest, page: str, reviewer: str | None = None, **params: str) -> AppTest:
    if page == "queue":  # AppTest runs no JavaScript: the queue's tests drive the classic card unless they ask
        params.setdefault("card", "classic")
    at.switch_page(f"pages/{page}.py")
    for k, v in params.items():
        at.query_params[k] = v
    if reviewer:
        at.session_state["reviewer_name"] = reviewer
    return at.run()


def table(at: AppTest, *columns: str):
    """The first dataframe shown with all these columns (AppTest gives non-selectable dataframes no key)."""
    for df in at.dataframe:
        value = df.value
        if all(c in value.columns for c in columns):
            return value
    raise AssertionError(f"no dataframe with columns {columns}")


def plain(text: str) -> str:
    """Markdown shown by `ui.text.show_text` without its backslash escapes and the invisible word joiners that
    keep an address from becoming a link (what the reader sees)."""
    import re

    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")
