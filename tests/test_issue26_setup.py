"""Issue 26 "Set-up edges" and the CLI's help: the dashboard listens on this machine only (the README's team
set-up says how to serve others), the favicon is a bundled file (no icon font fetched from the internet), the
README names the Python version the test script enforces and how long the first start takes, and every `--help`
summary is a whole paragraph, not a docstring's first line cut mid-sentence."""

from __future__ import annotations

import os
import re
import subprocess
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
LOOPBACK = {"127.0.0.1", "::1"}


def test_the_config_binds_localhost_and_the_readme_says_how_a_team_serves_others():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config.get("server", {}).get("address") in ("localhost", "127.0.0.1")
    team = README[README.index("## Team mode"):]
    team = team[:team.index("\n## ", 1)]
    assert "--server.address" in team  # the one place that says otherwise


def _listening_addresses(port: int) -> set[str]:
    """Local addresses in LISTEN state on `port` (Linux /proc/net/tcp and tcp6)."""
    out = set()
    for name, width in (("tcp", 8), ("tcp6", 32)):
        path = Path("/proc/net") / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:
                continue
            raw = bytes.fromhex(addr)
            if width == 8:
                out.add(".".join(str(b) for b in raw[::-1]))
            else:  # four little-endian 32-bit words
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                import ipaddress

                out.add(str(ipaddress.IPv6Address(words)))
    return out


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the listening sockets from /proc/net")
def test_streamlit_run_as_the_readme_says_listens_on_loopback_only(tmp_path):
    """`streamlit run app.py` from the repository root, without any address option: no Network URL, and every
    listening socket of its port is a loopback address."""
    from tests.e2e.e2e_server import free_port, streamlit_command

    port = free_port()
    log = tmp_path / "streamlit.log"
    env = {**os.environ, "HOME": str(tmp_path), "REJUDGE_DB": str(tmp_path / "r.db"), "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen([*streamlit_command(), "run", "app.py", "--server.headless", "true",
                                 "--server.port", str(port), "--server.fileWatcherType", "none"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "URL" not in log.read_text(errors="replace"):
            assert proc.poll() is None, log.read_text(errors="replace")
            time.sleep(0.25)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as r:
            assert r.read().decode().strip() == "ok"
        addresses = _listening_addresses(port)
        assert addresses and addresses <= LOOPBACK, addresses
        text = log.read_text(errors="replace")
        assert "Network URL" not in text and "External URL" not in text, text
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=15)


def test_the_favicon_is_a_bundled_image(monkeypatch):
    """The page icon is a file in the repository: a `:material/…:` icon loads Google's icon font and an emoji
    Streamlit's emoji CDN, both fetched from the internet (console errors offline)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    seen: list[dict] = []
    original = st.set_page_config

    def record(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(st, "set_page_config", record)
    monkeypatch.setenv("REJUDGE_DB", "/nonexistent-dir-for-favicon-test/r.db")  # the icon is set before any read
    monkeypatch.chdir(ROOT)
    AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert seen, "app.py sets its page config"
    icon = seen[0].get("page_icon")
    path = Path(str(icon))
    assert path.is_file() and ROOT in path.resolve().parents, icon
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_readme_names_the_python_version_the_test_script_enforces_and_the_first_start_time():
    setup = README[README.index("## Set up"):]
    named = re.search(r"Python (3\.\d+) or newer", setup)
    assert named, "the README's set-up names the Python version"
    enforced = re.search(r"sys\.version_info\[:2\] < \((3), (\d+)\)", (ROOT / "scripts" / "test.sh").read_text())
    assert enforced and named[1] == f"{enforced[1]}.{enforced[2]}"
    first_start = re.search(r"first\s+start[^.]*?(\d+)[–-](\d+)\s*s\b", setup)
    assert first_start and 0 < int(first_start[1]) < int(first_start[2]), "the README says how long it takes"


def test_every_help_summary_is_the_whole_first_paragraph():
    from audit.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    listing = parser.format_help()
    flat_listing = " ".join(listing.split())
    for action in sub._choices_actions:
        doc = (sub.choices[action.dest].description or "").strip()
        paragraph = " ".join(doc.split("\n\n")[0].split())
        assert action.help == paragraph, action.dest
        assert re.search(r"[.)!?]$", action.help), (action.dest, action.help)  # a sentence ends there
        assert action.help.count("(") == action.help.count(")") and action.help.count("`") % 2 == 0, action.dest
        assert paragraph in flat_listing, action.dest  # `python -m audit --help` prints it whole
