"""Team mode under AppTest: Streamlit's `[auth]` secrets and a signed-in `st.user` are AppTest's own seams
(`at.secrets`, `at.user`); the roles file is a temp file named by `$REJUDGE_ROLES`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import _navigation_through_app, app_db  # noqa: F401 - shared fixtures
from tests.conftest import ROOT

ROLES = """[roles]
owners = ["olga@lab.org"]
adjudicators = ["adam@lab.org"]
reviewers = ["@lab.org"]
"""


@pytest.fixture
def roles_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "rejudge.toml"
    path.write_text(ROLES)
    monkeypatch.setenv("REJUDGE_ROLES", str(path))
    return path


class _Discovery(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = json.dumps({"issuer": "http://127.0.0.1", "authorization_endpoint": "http://127.0.0.1/auth"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def discovery_url() -> Iterator[str]:
    """A loopback server answering an OpenID discovery document (the sign-in page checks the provider first)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Discovery)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/.well-known/openid-configuration"
    server.shutdown()


def auth_secrets(metadata_url: str) -> dict:
    return {"auth": {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
                     "client_id": "rejudge", "client_secret": "secret", "server_metadata_url": metadata_url}}


def team_app(metadata_url: str, email: str | None, *, sub: str | None = None, **params: str) -> AppTest:
    """The app in team mode: signed in as `email` (None: signed out), with `params` in the URL; not yet run."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.secrets.update(auth_secrets(metadata_url))
    at.user = ({"is_logged_in": True, "email": email, "sub": sub or f"sub-{email}", "name": email} if email
               else {"is_logged_in": False})
    at.query_params.update(params)
    return at
