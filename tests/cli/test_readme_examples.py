"""The README as a contract: every CLI example in it runs as written, in order, against the bundled data.

The examples run in-process through `audit.cli.main` (the same parser and code as `python -m audit`, without
paying an interpreter start per line); `tests/cli/test_entry_points.py` keeps a real subprocess smoke test. The
LLM-judge examples run against the scripted OpenAI-compatible server of `devtools/judge_server.py`, with the batch
step between `judge-batch export` and `import` done as a batch engine would.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest

from audit.cli import main
from devtools.batch_round_trip import run_batch
from devtools.judge_server import JudgeServer
from tests.conftest import ROOT


def readme_blocks() -> list[list[str]]:
    """The `python -m audit ...` lines of every bash block of the README, block by block (comments cut)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    out = [[line.split("  #")[0].strip() for line in b.splitlines() if line.startswith("python -m audit")]
           for b in blocks]
    return [b for b in out if b]


def needs_llm(block: list[str]) -> bool:
    """A block of examples that talks to an LLM judge (run against the scripted server)."""
    return any("--judge openai" in c for c in block)


def run_as_written(cmd: str, capsys: pytest.CaptureFixture[str]) -> str:
    argv = shlex.split(cmd)
    assert argv[:3] == ["python", "-m", "audit"], cmd
    status = main(argv[3:])
    captured = capsys.readouterr()
    assert status == 0, f"{cmd}\n{captured.err}"
    return captured.out


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    os.symlink(ROOT / "data", tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REJUDGE_DB", str(tmp_path / "readme.db"))
    return tmp_path


def test_readme_cli_examples_run(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    offline = [c for b in readme_blocks() if not needs_llm(b) for c in b]
    assert len(offline) >= 8
    # a database that holds a run already (as after the dashboard's first start): ids no longer start at 1 for the
    # README's runs, and its examples must still work as written
    assert main(["score", "chimera", "--gold", "data/chimera/eval.csv", "--pred", "data/chimera/pred_mixed.jsonl",
                 "--judge", "exact", "--run", "earlier"]) == 0
    capsys.readouterr()
    for cmd in offline:
        run_as_written(cmd, capsys)
    assert (workdir / "audited.json").exists() and (workdir / "ana.reviews.jsonl").exists()
    assert (workdir / "demo-fuzzy.judge.jsonl").exists()


def test_readme_llm_judge_examples_run(workdir: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    llm = [c for b in readme_blocks() if needs_llm(b) for c in b]
    assert any("judge-batch import" in c for c in llm) and any(c.endswith("results.jsonl") for c in llm)
    with JudgeServer() as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-readme-test")
        monkeypatch.setenv("REJUDGE_JUDGE_BACKOFF", "0.001")
        for cmd in llm:
            if "judge-batch import" in cmd:
                run_batch(srv, workdir / "requests.jsonl", workdir / "results.jsonl")
                out = json.loads(run_as_written(cmd, capsys))
                assert out["imported"] > 0
            else:
                run_as_written(cmd, capsys)
        assert srv.requests > 0


def test_judge_batch_import_takes_the_results_file_after_the_options(workdir: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The README's order (`judge-batch import --task ... results.jsonl`) parses; a second stray word does not."""
    (workdir / "results.jsonl").write_text("", encoding="utf-8")
    common = ["--task", "chimera", "--gold", "data/chimera/eval.csv", "--pred", "data/chimera/pred_mixed.jsonl",
              "--judge", "openai:gpt-4o-mini"]
    with pytest.raises(SystemExit) as e:
        main(["judge-batch", "import", *common, "results.jsonl", "extra.jsonl"])
    assert e.value.code == 2 and "unrecognized arguments: results.jsonl extra.jsonl" in capsys.readouterr().err
    main(["judge-batch", "import", *common, "results.jsonl"])
    assert "unrecognized" not in capsys.readouterr().err


def test_readme_notebook_example_runs(tmp_path: Path) -> None:
    """The README's Python example scores a run without the dashboard or a database and gives DataFrames."""
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text(encoding="utf-8")
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
