"""scripts/uv_options.py: the test command's uv installs from where pip is configured to install from (uv reads no
pip configuration), so a machine whose only packages are local indexes and wheel folders still builds the
environment with uv."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "uv_options.py"

# `pip config list` as this machine prints it: a file's global section and the PIP_* environment
CONFIG = """global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/opt/wheels'
:env:.default-timeout='180'
:env:.find-links='/opt/wheels'
install.index-url='https://mirror.example/simple'
"""


def options(text: str, tmp_path) -> list[str]:
    path = tmp_path / "config.txt"
    path.write_text(text)
    out = subprocess.run([sys.executable, str(SCRIPT), str(path)], check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def test_every_index_folder_and_constraint_pip_uses_is_passed_once(tmp_path):
    assert options(CONFIG, tmp_path) == [
        "--index-url=https://mirror.example/simple",
        "--extra-index-url=file:///opt/pypi/simple", "--extra-index-url=file:///opt/pypi-more/simple",
        "--find-links=/opt/wheels", "--constraint=/etc/xdg/pip/constraints.txt",
        "--index-strategy=unsafe-best-match"]


def test_without_configuration_uv_keeps_its_defaults_but_takes_the_best_version_of_every_index(tmp_path):
    assert options("", tmp_path) == ["--index-strategy=unsafe-best-match"]
    # keys uv has no use for, and other tools' sections, are left out
    assert options("global.cert='/x.pem'\nfreeze.find-links='/elsewhere'\n", tmp_path) == \
        ["--index-strategy=unsafe-best-match"]


def test_the_test_command_installs_through_it_and_falls_back_to_pip():
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert "scripts/uv_options.py" in script and '"$venv/bin/python" -m pip install -q "$@"' in script
