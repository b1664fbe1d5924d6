"""Issue 27: `judge-batch export` and `import` send nothing, so they need no OPENAI_API_KEY, and the requests they
write without one are byte for byte those written with one (the key is no part of a request line or cache key)."""

from __future__ import annotations

import json

import pytest

from audit.cli import main
from tests.conftest import GOLD, PRED_MIXED


def export(db: str, out: str) -> int:
    return main(["judge-batch", "--db", db, "export", "--task", "chimera", "--gold", str(GOLD), "--pred",
                 str(PRED_MIXED), "--judge", "openai:gpt-4o-mini", "--out", out])


def test_export_without_a_key_writes_the_requests_a_key_would(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert export(str(tmp_path / "a.db"), str(tmp_path / "keyless.jsonl")) == 0
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    assert export(str(tmp_path / "b.db"), str(tmp_path / "keyed.jsonl")) == 0
    keyless = (tmp_path / "keyless.jsonl").read_bytes()
    assert keyless == (tmp_path / "keyed.jsonl").read_bytes()
    assert len(keyless.splitlines()) == json.loads(capsys.readouterr().out.split("}\n")[0] + "}")["exported"] > 0
    assert b"sk-test" not in keyless and b"judge-batch-sends" not in keyless


@pytest.mark.parametrize("content", ["", "\n\n", "{not json\n"])
def test_import_without_a_key_of_a_file_that_imports_nothing_exits_2(tmp_path, monkeypatch, capsys, content):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    f = tmp_path / "results.jsonl"
    f.write_text(content)
    assert main(["judge-batch", "--db", str(tmp_path / "a.db"), "import", str(f), "--task", "chimera", "--gold",
                 str(GOLD), "--pred", str(PRED_MIXED), "--judge", "openai:gpt-4o-mini"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {f}: ") and "nothing was" in err and "OPENAI_API_KEY" not in err
