"""Issue 27: the new-run form refuses what `python -m audit score` refuses, with the CLI's one-line message (the
file named as the user named it), never a traceback on the page. AppTest on the Runs page."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from audit.cli import main
from tests.app.conftest import plain
from tests.conftest import GOLD, ROOT

BAD_PREDICTIONS = {
    "nested 100,000 deep": '{"paper_id": "x", "relations": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
    "latin-1 byte": b'{"paper_id": "caf\xe9", "relations": {}}\n',
    "duplicate key": '{"paper_id": "x", "relations": {}, "relations": {}}\n',
    "NaN": '{"paper_id": "x", "relations": {"combination": [{"comb-element": [NaN, "b"]}]}}\n',
}


def cli_error(capsys: pytest.CaptureFixture, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err.removeprefix("error: ")


def runs(db: Path) -> int:
    with sqlite3.connect(db) as c:
        n = c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    c.close()
    return n


def form(at, task: str, field: str, path: Path) -> None:
    at.selectbox(key="newrun.task").set_value(task).run()
    at.selectbox(key=f"newrun.{task}.{field}.choice").set_value("A path on this machine…").run()
    at.text_input(key=f"newrun.{task}.{field}.path").set_value(str(path)).run()


@pytest.mark.parametrize("case", BAD_PREDICTIONS, ids=list(BAD_PREDICTIONS))
def test_the_form_refuses_a_bad_prediction_file_as_the_cli_does(app_db, tmp_path, capsys, case) -> None:
    from streamlit.testing.v1 import AppTest

    pred = tmp_path / "pred.jsonl"
    content = BAD_PREDICTIONS[case]
    pred.write_bytes(content if isinstance(content, bytes) else content.encode())
    cli = cli_error(capsys, ["score", "chimera", "--db", str(tmp_path / "cli.db"), "--gold", str(GOLD), "--pred",
                             str(pred), "--judge", "exact"])
    before = runs(app_db)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    form(at, "chimera", "pred", pred)
    judge = at.selectbox(key="newrun.chimera.judge")
    judge.set_value(next(o for o in judge.options if o.startswith("exact"))).run()
    at.button(key="newrun.score").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [plain(e.value) for e in at.error] == ["Nothing was stored. " + cli.replace(str(pred), pred.name)]
    assert runs(app_db) == before


@pytest.mark.parametrize("content", [b"[" * 100_000 + b"]" * 100_000, b'{"gpt-x": [1e309, 1]}'],
                         ids=["nested 100,000 deep", "1e309"])
def test_a_bad_price_file_is_one_error_line_on_the_form(app_db, tmp_path, monkeypatch, content) -> None:
    """The price file ($REJUDGE_PRICES) fed the form a RecursionError: a traceback on the page."""
    from streamlit.testing.v1 import AppTest

    prices = tmp_path / "prices.json"
    prices.write_bytes(content)
    monkeypatch.setenv("REJUDGE_PRICES", str(prices))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    label = next(o for o in at.selectbox(key="newrun.chimera.judge").options if o.startswith("openai-json:"))
    at.selectbox(key="newrun.chimera.judge").set_value(label).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [plain(e.value).split(": ", 1)[0] for e in at.error] == [str(prices)]


def test_a_litxbench_folder_with_a_link_outside_is_refused_on_the_form(app_db, tmp_path, capsys) -> None:
    from streamlit.testing.v1 import AppTest

    pred = tmp_path / "pred"
    pred.mkdir()
    (pred / "root").symlink_to("/")
    gold = ROOT / "data" / "litxbench" / "gold"
    cli = cli_error(capsys, ["score", "litxbench", "--db", str(tmp_path / "cli.db"), "--gold", str(gold), "--pred",
                             str(pred)])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    form(at, "litxbench", "pred", pred)
    at.button(key="newrun.score").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [plain(e.value) for e in at.error] == ["Nothing was stored. " + cli.replace(str(pred), pred.name)]
