"""The dependency check of the test command can fail: a requirement line removed is noticed.

`scripts/check_deps.sh` runs deptry over the product (against requirements.txt) and over tests and benches
(against requirements-dev.txt). Test tools that are run rather than imported are checked here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

ENV = os.environ | {"PYTHON": sys.executable}


def check(*files: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts/check_deps.sh"), *map(str, files)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)


def requirement_names(path: Path) -> list[str]:
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.append(re.split(r"[=<>\[ ;]", line)[0].lower())
    return names


def test_the_declared_dependencies_pass() -> None:
    p = check()
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("removed", ["pint", "numpy", "rapidfuzz"])
def test_removing_a_product_requirement_fails_the_check(removed: str, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("".join(line + "\n" for line in (ROOT / "requirements.txt").read_text().splitlines()
                           if not line.lower().startswith(removed + "==")))
    dev = tmp_path / "requirements-dev.txt"
    dev.write_text((ROOT / "requirements-dev.txt").read_text().replace("-r requirements.txt", f"-r {req}"))
    p = check(req, dev)
    assert p.returncode != 0 and f"'{removed}' imported" in p.stdout + p.stderr, p.stdout + p.stderr


def test_every_dev_requirement_is_used() -> None:
    """deptry does not report unused dev dependencies: each must be imported by tests, benches or devtools, or run by
    test.sh."""
    script = (ROOT / "scripts/test.sh").read_text() + (ROOT / "scripts/check_deps.sh").read_text()
    sources = "\n".join(p.read_text(encoding="utf-8") for folder in ("tests", "bench", "devtools")
                        for p in (ROOT / folder).rglob("*.py"))
    run_by_script = {"pytest": "-m pytest", "pytest-xdist": "--dist loadgroup", "ruff": "-m ruff",
                     "deptry": "-m deptry"}
    module_of = {"ppi-python": "ppi_py"}  # distributions whose module has another name
    for name in requirement_names(ROOT / "requirements-dev.txt"):
        module = module_of.get(name, name.replace("-", "_"))
        used = (run_by_script.get(name, "\0") in script
                or re.search(rf"^\s*(import|from) {module}\b", sources, re.M) is not None
                or re.search(rf"importorskip\(\s*[\"']{module}[\"']", sources) is not None)
        assert used, f"requirements-dev.txt declares {name}, which no test or bench imports and test.sh does not run"
