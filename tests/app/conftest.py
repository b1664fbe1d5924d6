import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    path = tmp_path / "app.db"
    monkeypatch.setenv("REJUDGE_DB", str(path))
    monkeypatch.chdir(ROOT)
    return path


@pytest.fixture
def app(app_db):
    """The app after its first run (which scores the demo run into a fresh database)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    return at


def open_page(at: AppTest, page: str, reviewer: str | None = None, **params: str) -> AppTest:
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
