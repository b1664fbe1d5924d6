"""`python -m audit board ...`: create, show, export, delete and list boards (issue 36 §2).

Plugs into `audit/cli.py` through `register(add)`, `add` being its helper that creates a subcommand (with `--db`
and help from the function's docstring). Errors are `AuditError`s: the CLI prints them as one line, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from audit.board import BOARD_FORMATS
from audit.errors import AuditError
from audit.output_paths import OutputRule

if TYPE_CHECKING:
    from sqlite_utils import Database

Add = Callable[[str, Callable[[argparse.Namespace], None]], argparse.ArgumentParser]
FORCE_HELP = "replace an existing output file (never the database or an input of the board's runs)"


def _open(path: str) -> Database:
    """The database with stale audited state rebuilt, as `audit.cli._open` opens it (not imported: a circle)."""
    from audit.stale import rebuild_stale_runs
    from audit.store.database import open_db, seal_on_success

    db = seal_on_success(open_db(path, create=False))  # a board needs runs: never a new database
    rebuild_stale_runs(db)
    return db


def _print_json(obj: object) -> None:
    print(json.dumps(obj, indent=1, ensure_ascii=False))


def _runs(text: str) -> list[str]:
    """--runs A,B[,C]: run names separated by commas."""
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text[:60]!r}: give run names separated by commas (A,B,C), none empty")
    return names


def _rule(args: argparse.Namespace, db: Database) -> OutputRule:
    """Never the database, never a file whose content is an input recorded for one of the board's runs, an
    existing file only with --force (`audit.output_paths`)."""
    from audit.board.store import get_board
    from audit.store.database import run_row

    digests = set()
    for run in get_board(db, args.name)["runs"]:
        recorded = run_row(db, run)["inputs"]
        digests |= {v["sha256"] for v in recorded.values() if isinstance(v, dict) and v.get("sha256")}
    return OutputRule(db=args.db, input_digests=frozenset(digests), force=args.force)


def cmd_board(args: argparse.Namespace) -> None:
    """Boards: several systems scored on the same gold side by side, audited from one set of reviews (a review
    settles its question in every run that asks it). `create NAME --runs A,B[,C]` (runs of one family on the same
    gold; an ideation board is one run, its systems inside it), `show NAME` (JSON: per system judge-only and
    audited metrics, estimate, bias, ranks and rank set; pairs, shared questions, policy), `export NAME --format
    json|csv|latex --out FILE` (the paper's table), `delete NAME` (the runs and reviews stay), `list`, `plan NAME
    [--seed S]` (one sampling plan for the whole board; an ideation board's is its run's own plan) and `queue
    NAME --next [--focus RUN]` (what to review next).

    Example: python -m audit board create extractors --runs demo-chimera-fuzzy-mixed,demo-chimera-fuzzy-terse
    (two prediction sets under one judge)
    """
    from audit.board.export import export_board
    from audit.board.store import create_board, delete_board, list_boards
    from audit.board.table import board_table

    db = _open(args.db)
    if args.action == "create":
        _print_json(create_board(db, args.name, args.runs))
    elif args.action == "show":
        _print_json(board_table(db, args.name, policy=args.policy))
    elif args.action == "export":
        if args.out:  # the database and an existing file are refused before anything is looked up
            OutputRule(db=args.db, force=args.force).check(args.out)
        rule = _rule(args, db)
        if args.out:
            rule.check(args.out)
        text = export_board(db, args.name, args.format, policy=args.policy)
        if args.out:
            rule.write(args.out, text)
            print(f"wrote {args.out}", file=sys.stderr)
        else:
            sys.stdout.write(text)
    elif args.action == "delete":
        delete_board(db, args.name)
        _print_json({"deleted": args.name})
    elif args.action == "list":
        _print_json(list_boards(db))
    elif args.action in ("plan", "queue"):
        _plan_or_queue(db, args)
    else:  # pragma: no cover - argparse allows only the actions above
        raise AuditError(f"unknown board action {args.action!r}")


def _plan_or_queue(db: Database, args: argparse.Namespace) -> None:
    """`plan NAME [--seed S]`: the board's one sampling plan (`audit.board.joint`); `queue NAME --next [--focus
    RUN]`: the document its queue serves next, the runs to review it in, the pair it serves and "N more documents"
    (serving draws it: a served document reviewed whole is a sample draw)."""
    from audit.board.joint import create_board_plan, next_board_document
    from audit.board.store import get_board

    board = get_board(db, args.name)
    runs = board["runs"]
    if board["systems"] is not None:  # systems inside one run: the run's own plan is the board's
        _one_run_plan_or_queue(db, args, runs[0], board["systems"])
        return
    if args.action == "plan":
        _print_json(create_board_plan(db, args.name, runs, seed=args.seed))
        return
    if not args.next:
        raise AuditError("board queue: say --next (the document to review next)")
    pick = next_board_document(db, args.name, runs, focus=args.focus)
    _print_json(pick if pick is not None else {"board": args.name, "done": True,
                                               "more_text": "every planned document is reviewed"})


def _one_run_plan_or_queue(db: Database, args: argparse.Namespace, run: str, systems: list[str]) -> None:
    """`plan` creates the run's own sampling plan; `queue --next` serves what the run's sample queue serves
    (`audit.board.one_run`)."""
    from audit.board.one_run import create_one_run_plan, next_one_run_document

    if args.action == "plan":
        _print_json(create_one_run_plan(db, args.name, run, seed=args.seed))
        return
    if not args.next:
        raise AuditError("board queue: say --next (the document to review next)")
    if args.focus is not None:
        raise AuditError(f"board {args.name!r}: --focus is for boards of several runs; the systems of this board "
                         f"live inside run {run!r}, whose sample queue serves every system at once")
    pick = next_one_run_document(db, args.name, run, systems)
    _print_json(pick if pick is not None else {"board": args.name, "done": True,
                                               "more_text": "every planned document is reviewed"})


def register(add: Add) -> None:
    """Add `board` and its actions to the CLI's parser."""
    board = add("board", cmd_board)
    db_action = next(a for a in board._actions if a.dest == "db")
    actions = board.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        sp = actions.add_parser(name, help=help_text, description=help_text)
        sp.add_argument("--db", default=argparse.SUPPRESS, type=db_action.type, help=db_action.help)
        return sp

    def policy(sp: argparse.ArgumentParser) -> None:
        from audit.effective import DEFAULT_POLICY, POLICIES

        sp.add_argument("--policy", default=DEFAULT_POLICY, choices=list(POLICIES),
                        help="effective-label policy: who settles a decision humans disagree on (recorded in exports)")

    sp = action("create", "create a board over runs of one family on the same gold")
    sp.add_argument("name", metavar="NAME")
    sp.add_argument("--runs", required=True, type=_runs, help="the runs, separated by commas: A,B[,C...]")
    sp = action("show", "print the board as JSON")
    sp.add_argument("name", metavar="NAME")
    policy(sp)
    sp = action("export", "write the board's paper table (one row per system)")
    sp.add_argument("name", metavar="NAME")
    sp.add_argument("--format", default="json", choices=list(BOARD_FORMATS))
    sp.add_argument("--out", default=None, help="the file to write (default: standard output)")
    sp.add_argument("--force", action="store_true", help=FORCE_HELP)
    policy(sp)
    sp = action("delete", "delete the board (its runs and their reviews stay)")
    sp.add_argument("name", metavar="NAME")
    action("list", "list the boards as JSON")
    sp = action("plan", "create the board's one sampling plan (documents drawn once for every system)")
    sp.add_argument("name", metavar="NAME")
    sp.add_argument("--seed", type=int, default=0, help="the seed of the plan's random order (default 0)")
    sp = action("queue", "the document the board's sample queue serves next, and how many more settle the ranking")
    sp.add_argument("name", metavar="NAME")
    sp.add_argument("--next", action="store_true", help="serve the next document (it becomes a draw of the plan)")
    sp.add_argument("--focus", default=None, metavar="RUN",
                    help="aim at one system instead of the whole table")
