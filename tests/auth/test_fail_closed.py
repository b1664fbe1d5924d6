"""A team server whose sign-in settings are broken refuses everyone with a page that says why, never falls back to
local mode (where every visitor is the owner) and never raises (issue 34)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit import config
from streamlit.testing.v1 import AppTest

from audit.review.roles import RolesFileError, load_roles
from tests.auth.conftest import auth_secrets, team_app
from tests.auth.test_team_mode import texts
from tests.conftest import ROOT

DEMO = "demo-chimera-mixed"
REFUSED = "Rejudge — no access"


@pytest.fixture
def secrets_file(tmp_path: Path) -> Iterator[Path]:
    """A secrets file the app reads (Streamlit's `secrets.files` option pointed at a temp file)."""
    path = tmp_path / "secrets.toml"
    before = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(path)])
    st.secrets._reset()
    yield path
    config.set_option("secrets.files", before)
    st.secrets._reset()


def export_page(**secrets: object) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.secrets.update(secrets)
    at.user = {"is_logged_in": False}
    at.switch_page("pages/export.py")
    at.query_params.update(run=DEMO)
    return at.run()


def assert_refused(at: AppTest, says: str) -> None:
    assert not at.exception, at.exception
    assert at.title[0].value == REFUSED, [t.value for t in at.title]
    assert says in texts(at)
    assert not at.sidebar.text_input and not at.dataframe  # no reviewer box (local mode), no page drawn
    assert "Export" not in [t.value for t in at.title]


def test_an_unterminated_string_in_the_secrets_file_refuses_and_names_the_file_and_line(app_db, discovery_url,
                                                                                      secrets_file):
    good = "\n".join(f'{k} = "{v}"' for k, v in auth_secrets(discovery_url)["auth"].items())
    secrets_file.write_text(f"[auth]\n{good}\nclient_secret = \"unterminated\n")
    at = export_page()
    assert_refused(at, str(secrets_file))
    assert "line 7" in texts(at)


@pytest.mark.parametrize("secrets", [{"Auth": {"client_id": "x"}}, {"auth": {}}, {"AUTH": {}, "other": 1}],
                         ids=["miscased", "empty", "empty-miscased"])
def test_an_empty_or_miscased_auth_section_refuses(app_db, secrets):
    assert_refused(export_page(**secrets), "[auth]")


def test_a_roles_file_without_an_auth_section_refuses(app_db, roles_file):
    assert_refused(export_page(other={"x": 1}), str(roles_file))


def test_no_secrets_and_no_roles_file_is_local_mode(app_db, tmp_path, monkeypatch):
    monkeypatch.setenv("REJUDGE_ROLES", str(tmp_path / "absent.toml"))
    at = export_page(other={"x": 1})
    assert not at.exception and at.title[0].value == "Export"


def test_a_latin1_byte_in_the_roles_file_is_a_refusal_page_naming_the_file_and_line(app_db, roles_file,
                                                                                   discovery_url):
    roles_file.write_bytes(b'[roles]\nowners = ["olga@lab.org"]\n# Ren\xe9\nreviewers = ["@lab.org"]\n')
    with pytest.raises(RolesFileError, match=r"line 3: byte 0xe9 is not UTF-8"):
        load_roles(roles_file)
    at = team_app(discovery_url, "olga@lab.org", run=DEMO).run()
    assert_refused(at, f"{roles_file}, line 3")
