"""How commands are declared: each beside its body (`@command`), `--db` once for all of them, and command modules
outside `audit/cli.py` plugging in through `add(name, fn)` (their `register(add)`)."""

from __future__ import annotations

import argparse

import pytest

from audit import cli
from audit.cli import COMMANDS, build_parser, main


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_every_declared_command_is_built_in_declaration_order() -> None:
    built = list(_subcommands(build_parser(["--help"])))
    assert built[:len(COMMANDS)] == [c.name for c in COMMANDS]
    assert built[len(COMMANDS):] == ["board"]  # the command modules' (`command_modules`), after the built-in ones
    assert len({c.name for c in COMMANDS}) == len(COMMANDS)


@pytest.mark.parametrize("argv", [
    ["runs"], ["score", "chimera", "--gold", "g.csv", "--pred", "p.jsonl"], ["import", "inspect", "task.eval"],
])
@pytest.mark.parametrize("where", ["before", "after"])
def test_an_empty_db_is_refused_wherever_it_is_given(argv: list[str], where: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`--db` is declared once, so every (sub)command checks it alike; `import FRAMEWORK --db ""` used to open
    SQLite's temporary database and fail later on the log, never naming --db."""
    full = ["--db", "", *argv] if where == "before" else [*argv, "--db", ""]
    with pytest.raises(SystemExit) as e:
        main(full)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "argument --db: is empty" in err, err


def test_a_db_in_a_missing_folder_is_refused_and_nothing_is_made(tmp_path, capsys) -> None:
    """A mistyped `--db some/dir/x.db` made the folders and an empty database, and `runs` then printed nothing
    with exit status 0."""
    missing = tmp_path / "nodir" / "x.db"
    with pytest.raises(SystemExit) as e:
        main(["--db", str(missing), "runs"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"its folder '{missing.parent}' does not exist" in err, err
    assert list(tmp_path.iterdir()) == []


READING = [["runs"], ["check"], ["decisions", "--run", "demo"], ["estimate", "--run", "demo"],
           ["agreement", "--run", "demo"], ["queue", "--run", "demo", "--next"],
           ["review", "--run", "demo", "--decision", "1", "--label", "match", "--reviewer", "ana"],
           ["export-reviews", "--run", "demo", "--out", "{tmp}/r.jsonl"], ["board", "show", "b"]]


@pytest.mark.parametrize("argv", READING, ids=lambda a: " ".join(a[:2]))
def test_a_command_that_needs_a_run_refuses_a_database_that_is_not_there_and_makes_none(tmp_path, capsys,
                                                                                         argv) -> None:
    """A mistyped `--db audit.db` (for audits.db) in a folder that exists: every command but those that store a
    new run left an empty database there ("unknown run", or `runs` printing none)."""
    mistyped = tmp_path / "audit.db"
    assert main(["--db", str(mistyped), *(a.replace("{tmp}", str(tmp_path)) for a in argv)]) == 2
    err = capsys.readouterr().err
    assert f"{mistyped}: no database there (a new one is started by score, import, demo and judge-batch)" in err
    assert list(tmp_path.iterdir()) == []


def test_an_empty_database_says_it_holds_no_runs(tmp_path, capsys) -> None:
    from audit.store.database import open_db

    open_db(tmp_path / "new.db").conn.close()
    assert main(["--db", str(tmp_path / "new.db"), "runs"]) == 0
    out = capsys.readouterr()
    assert out.out == "" and out.err == f"no runs in {tmp_path / 'new.db'}\n"


def test_db_after_the_command_wins_over_none_and_defaults_apply(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("REJUDGE_DB", raising=False)
    args = build_parser(["runs"]).parse_args(["runs", "--db", str(tmp_path / "a.db")])
    assert args.db == str(tmp_path / "a.db")
    assert build_parser(["runs"]).parse_args(["runs"]).db is None  # then $REJUDGE_DB or ./rejudge.db, in main


def cmd_hello(args: argparse.Namespace) -> None:
    """Greet someone from a command module of its own.

    Example: python -m audit hello --who ana
    """
    print(f"hello {args.who} ({args.db})")


def register(add) -> None:
    add("hello", cmd_hello).add_argument("--who", required=True)


def test_a_command_module_plugs_in_through_add(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setattr(cli, "command_modules", lambda: [register])
    db = str(tmp_path / "h.db")
    assert main(["--db", db, "hello", "--who", "ana"]) == 0
    assert capsys.readouterr().out == f"hello ana ({db})\n"
    assert main(["hello", "--who", "bo", "--db", db]) == 0
    assert capsys.readouterr().out == f"hello bo ({db})\n"
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "Greet someone from a command module of its own." in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["hello", "--help"])
    out = capsys.readouterr().out
    assert "Example: python -m audit hello --who ana" in out and "--db DB" in out
