"""Every CLI example in the README runs, in order, against the bundled data in a temporary directory."""

import os
import re
import shlex
import subprocess
import sys

from tests.conftest import ROOT


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## CLI\n\n```bash\n(.*?)```", text, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("python -m audit")]


def test_readme_cli_examples_run(tmp_path):
    os.symlink(ROOT / "data", tmp_path / "data")
    env = os.environ | {"REJUDGE_DB": str(tmp_path / "readme.db"), "PYTHONPATH": str(ROOT)}
    commands = readme_commands()
    assert len(commands) >= 8
    for cmd in commands:
        argv = shlex.split(cmd)
        p = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert p.returncode == 0, f"{cmd}\n{p.stderr}"
    assert (tmp_path / "audited.json").exists() and (tmp_path / "ana.reviews.jsonl").exists()
    assert (tmp_path / "demo-fuzzy.judge.jsonl").exists()


def test_readme_notebook_example_runs(tmp_path):
    """The README's Python example scores a run without the dashboard or a database and gives DataFrames."""
    text = (ROOT / "README.md").read_text()
    code = re.search(r"## Notebook use\n.*?```python\n(.*?)```", text, re.S).group(1)
    os.symlink(ROOT / "data", tmp_path / "data")
    script = tmp_path / "nb.py"
    script.write_text(code + "\nimport pandas as pd\n"
                      "assert isinstance(decisions, pd.DataFrame) and len(decisions) > 0\n"
                      "assert isinstance(metrics, pd.DataFrame) and 'f1' in metrics\n"
                      "import sys; assert 'audit' not in sys.modules and 'streamlit' not in sys.modules\n")
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
