"""`python -m audit`: score, list decisions, review, agreement and export, headless.

Each subcommand parses arguments, calls one function in `audit/`, prints JSON and turns errors into a single
`error: ...` line on stderr: exit status 2 for bad input, 1 for an internal error (never a traceback).

Each command is declared beside its body, as click's decorators do: `@command("review", RUN, arg("--label", ...))`
above `def cmd_review`; its help is the body's docstring, and `--db` is declared once (`DB`) and given to every
command by `build_parser`. A command module outside this file (e.g. `audit/board/cli.py`) exposes
`register(add)`, listed in `command_modules`: `add(name, fn)` makes the subcommand (with `--db`, help from
`fn.__doc__`) and returns its parser for the module's own arguments.

What is imported when: this module's own imports are light (no sqlite_utils, which imports pandas; no store; no
family), so `--help` and argument errors answer at interpreter speed (#38). The store is imported in one place,
`_open`, when a command opens the database; each command imports the module that does its work; a family is
imported when a command line names it (`build_parser`) or a run of it is opened.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audit.effective import DEFAULT_POLICY, POLICIES
from audit.errors import AuditError, DatabaseRefused
from audit.judge_batch_args import add_arguments as judge_batch_arguments
from audit.output_paths import OutputRule, cause
from audit.store.limits import BUSY_TIMEOUT_MS, MAX_DECISION_ID, default_db_path, disk_full, disk_full_message
from scoring.errors import InputError, JudgeSpecError, text_problem
from scoring.families import IMPORTERS, TASKS, get_importer
from scoring.improve.preflight import DEFAULT_K, DEFAULT_MIN_ALPHA, MIN_DOCUMENTS, MIN_DOUBLE
from scoring.improve.preflight import STRATEGIES as IMPROVE_STRATEGIES

if TYPE_CHECKING:
    from sqlite_utils import Database

    from audit.outputs.improved_judge import Improved


def _print_json(obj: object) -> None:
    print(json.dumps(obj, indent=1, ensure_ascii=False))


def _emit(text: str, out: str | None, rule: OutputRule, option: str = "--out") -> None:
    """Write to `out` whole (`audit.output_paths`; saying so on stderr), or to stdout."""
    if out:
        rule.write(out, text, option)
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def _rule(args: argparse.Namespace, *, inputs: Sequence[str | None] = ()) -> OutputRule:
    """The output rule of this command: never its database, never its inputs, an existing file only with --force
    (`delete-run --exported` never replaces one: its --force deletes reviews)."""
    if args.fn is cmd_delete_run:
        return OutputRule(db=args.db, force=False, force_hint="")
    return OutputRule(db=args.db, inputs=tuple(i for i in inputs if i), force=bool(getattr(args, "force", False)))


def _run_rule(args: argparse.Namespace, db: Database) -> OutputRule:
    """`_rule` plus the run's recorded inputs (by SHA-256: the store keeps their digests, not their paths)."""
    from dataclasses import replace

    from audit.store.database import run_row

    recorded = run_row(db, args.run)["inputs"]
    digests = frozenset(v["sha256"] for v in recorded.values() if isinstance(v, dict) and v.get("sha256"))
    return replace(_rule(args), input_digests=digests)


def _open(path: str, *, create: bool = False) -> Database:
    """The database, with any audited state a migration left stale rebuilt (`audit.stale`): the one place the
    CLI imports the store. Only the commands that store a new run or judge answers (`create`:
    `store.database.MADE_BY`) start a database where none is; the others refuse the path."""
    from audit.stale import rebuild_stale_runs
    from audit.store.database import open_db, seal_on_success

    db = seal_on_success(open_db(path, create=create))
    rebuild_stale_runs(db)
    return db


def _decision_id(text: str) -> int | str:
    """argparse type of --decision: `#N`, the decision's number in its run as the pages and the review card show
    it (kept as the string `#N`, resolved against the run), or its id, a positive whole number SQLite can hold."""
    number = text.strip().startswith("#")
    try:
        value = int(text.strip().removeprefix("#"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number or #number") from None
    if not 0 < value <= MAX_DECISION_ID:
        raise argparse.ArgumentTypeError(f"{text[:40]} is not a decision id (1 .. {MAX_DECISION_ID})")
    return f"#{value}" if number else value


def _db_path(text: str) -> str:
    """argparse type of --db: a file's path. An empty one would fall back to ./rejudge.db unseen, and `:memory:`
    (SQLite's database that lives only while the command runs) would store a run nobody can open again."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give the database file's path (or leave --db out for "
                                         "$REJUDGE_DB or ./rejudge.db)")
    if text.strip() == ":memory:" or text.startswith("file:"):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a file: a database there would vanish with the "
                                         "command; give a file's path")
    folder = Path(text).parent
    if not folder.is_dir():  # a mistyped path would otherwise leave new folders and an empty database behind
        raise argparse.ArgumentTypeError(f"{text[:200]!r}: its folder {str(folder)[:200]!r} does not exist; check "
                                         "the path, or create the folder first")
    return text


Spec = Callable[[argparse.ArgumentParser, set[str]], None]
"""A piece of a command's arguments, added when the parser is built: given the command's parser and the families
the command line names (`_requested_families`; only `score` and `judge-batch` look at them)."""
CommandFn = Callable[[argparse.Namespace], None]


@dataclass(frozen=True)
class Command:
    name: str
    fn: CommandFn
    arguments: tuple[Spec, ...]


COMMANDS: list[Command] = []
"""The built-in commands, in the order they are declared below and `--help` lists them."""


def command(name: str, *arguments: Spec) -> Callable[[CommandFn], CommandFn]:
    """Declare a subcommand beside its body: its name and its arguments, in the order its `--help` lists them (help
    text: the body's docstring; `--db`: added to every command by `build_parser`)."""

    def declare(fn: CommandFn) -> CommandFn:
        COMMANDS.append(Command(name, fn, arguments))
        return fn

    return declare


def arg(*flags: str, **options: Any) -> Spec:
    """One argument: `parser.add_argument(*flags, **options)` when the parser is built."""

    def add_to(parser: argparse.ArgumentParser, _wanted: set[str]) -> None:
        parser.add_argument(*flags, **options)

    return add_to


def defaults(**values: object) -> Spec:
    """Values the command's namespace carries without an argument (`parser.set_defaults`)."""

    def set_on(parser: argparse.ArgumentParser, _wanted: set[str]) -> None:
        parser.set_defaults(**values)

    return set_on


FORCE_HELP = "replace an existing output file (never the database or an input of the run)"
DB = arg("--db", default=argparse.SUPPRESS, type=_db_path, help="database path (default $REJUDGE_DB or ./rejudge.db)")
"""`--db`, on the top parser and every command's (and `score TASK`'s, `import FRAMEWORK`'s), so it may come before
or after the command's name; unset it is None (`build_parser`), then $REJUDGE_DB or ./rejudge.db (`main`)."""
RUN = arg("--run", required=True)
OUT = arg("--out", default=None, help="the file to write (default: standard output)")
FORCE = arg("--force", action="store_true", help=FORCE_HELP)
POLICY = arg("--policy", default=DEFAULT_POLICY, choices=list(POLICIES),
             help="effective-label policy: who settles a decision humans disagree on (recorded in exports)")


def _task_commands(parser: argparse.ArgumentParser, wanted: set[str]) -> None:
    """`score TASK`: a subcommand per family with its inputs, options and judges; a family the command line does
    not name is listed by name alone, so its module is not imported."""
    fams = parser.add_subparsers(dest="task", required=True, metavar="TASK", help=f"task family: {', '.join(TASKS)}")
    for name in TASKS:
        if name not in wanted:
            fams.add_parser(name, add_help=False)
            continue
        fam = TASKS[name]
        f = fams.add_parser(fam.name, help=fam.title, description=f"Score a {fam.title} run.")
        DB(f, wanted)
        for spec in fam.inputs:
            f.add_argument(f"--{spec.name}", required=spec.required, metavar="DIR" if spec.folder else "PATH",
                           help=f"{spec.title}: {spec.help}")
        for opt in fam.options:
            f.add_argument(f"--{opt.name}", choices=opt.choices, default=opt.choices[0], help=opt.help)
        replays = (f", or replay:PATH with a judge log: {fam.describe_judge_log()}; or improved:ID, a judge "
                   "improve-judge stored" if fam.replays_judge_logs else
                   " (the judge is a fixed algorithm: a judge log exported from a run is a record, not replayed)")
        f.add_argument("--judge", default=None, help=f"judge spec (default {fam.judge_specs[0]}; offered: "
                       f"{', '.join(fam.judge_specs)}{replays})")
        f.add_argument("--run", default=None, help="run name (default derived from the predictions and judge)")
        f.add_argument("--judge-log", default=None, help="also write the run's judge log (replay format) to this "
                       "file (it is always available later with `export --format judgelog`)")
        f.add_argument("--force", action="store_true", help=FORCE_HELP)
        f.add_argument("--allow-partial", action="store_true", help="store the run even when most judge answers "
                       f"are missing (each labelled 'invalid', counting as {fam.unanswered_counts_as}); without it "
                       "such a run fails and stores nothing")
        f.add_argument("--allow-empty", action="store_true", help="store the run even when no gold item has a "
                       "prediction (all count as empty) or there is nothing to score (ideas without judge ratings); "
                       "without it such inputs are refused")
        f.add_argument("--learnt-from", default=None, metavar="FILE", help="the judge was improved on reviews: the "
                       "improve-judge result that made it (recorded with the run; withdrawing one of those reviews "
                       "marks it stale)")
        f.add_argument("--no-fold-answers", action="store_true", help="with a few-shot or rules judge improved on "
                       "reviews of documents this run holds: do not also ask its fold judges (K times the requests); "
                       "the run's estimate then says its interval is too narrow")


@command("score", _task_commands)
def cmd_score(args: argparse.Namespace) -> None:
    """Score a run with a judge; store it with every decision; print its metrics as JSON (the run name on stderr).

    Example: python -m audit score chimera --gold data/chimera/eval.csv --pred data/chimera/pred_mixed.jsonl
    --judge replay:data/chimera/judge_mixed.jsonl
    """
    from audit.cli_progress import Progress
    from audit.runs import JudgeLogWriter, execute_run, plan_run
    from scoring.families import get_task
    from scoring.judges.answer import JudgeStats

    task = get_task(args.task)
    bar = Progress("judging", "questions")  # plain lines every 30 s when stderr is a file
    stats = JudgeStats()

    def progress(done: int, total: int) -> None:
        bar.update(done, total, cached=stats.cached, failed=stats.failed, invalid=stats.invalid)

    if args.judge is not None and not args.judge.strip():
        raise AuditError(f"--judge is empty; give a judge spec ({', '.join(task.judge_specs)}, or replay:PATH)")
    inputs = {s.name: getattr(args, s.name) for s in task.inputs if getattr(args, s.name, None)}
    judge = args.judge or task.judge_specs[0]
    replay = judge.split(":", 1)[1] if judge.startswith("replay:") else None
    rule = _rule(args, inputs=[*inputs.values(), replay])
    if args.judge_log:
        rule.check(args.judge_log, "--judge-log")
    db = _open(args.db, create=True)
    options = {o.name: getattr(args, o.name) for o in task.options}
    improved = None
    if args.learnt_from or judge.startswith("improved:"):
        from audit.outputs.improved_judge import resolve

        judge, improved = resolve(db, judge.strip(), args.learnt_from)
        if improved.learnt_from.get("improved") is False:
            from audit.learning import NOT_IMPROVED

            print(f"warning: {NOT_IMPROVED}; scoring with it as asked", file=sys.stderr)
        source = db.execute("SELECT task FROM runs WHERE name = ?", [improved.learnt_from.get("run")]).fetchone()
        if source is not None and source[0] != task.name:
            raise AuditError(f"--judge {args.judge.strip()}: that judge was fitted on run "
                             f"{improved.learnt_from.get('run')!r} of family {source[0]}; this is a {task.name} run")
    log = JudgeLogWriter(task, args.judge_log, rule) if args.judge_log else None
    ok = False
    try:
        plan = plan_run(db, task.name, inputs, judge, run=args.run, options=options, allow_empty=args.allow_empty)
        if improved is not None:
            from audit.outputs.improved_judge import improved_judge

            plan.judge = improved_judge(task, plan.judge, improved)
        row = execute_run(db, plan, progress=progress, stats=stats, allow_partial=args.allow_partial,
                          before_store=log.stage if log else None,
                          learnt_from=improved.learnt_from if improved else None)
        if improved is not None:
            _ask_fold_judges(db, row["name"], improved, skip=args.no_fold_answers)
        ok = True
    except BaseException:
        if log:
            log.discard()
        raise
    finally:
        bar.close(final=ok)
    print(f"run: {row['name']}", file=sys.stderr)
    if log:
        try:
            n = log.commit()
        except AuditError:  # the rename failed after the store: take the run back, as if it failed before
            from audit.runs import delete_run

            delete_run(db, row["name"], force=True)
            raise
        print(f"judge log: {args.judge_log} ({n} lines; re-score offline with --judge replay:{args.judge_log})",
              file=sys.stderr)
    for w in row["summary"].get("warnings", []):
        print(f"warning: {w}", file=sys.stderr)
    _print_json(row["original_metrics"] | {"judge": row["summary"]["judge"]})


def _ask_fold_judges(db: Database, run: str, improved: Improved, *, skip: bool) -> None:
    """Ask an LLM-improved judge's fold judges on a run sharing its reviewed documents (the run's estimate is then
    cross-fitted offline); the cost is printed first. A failure takes the stored run back, as if scoring failed."""
    from audit.outputs.fold_labels import ask_fold_labels, fold_cost_text, shares_reviewed_documents
    from audit.runs import delete_run
    from audit.views import load_view

    view = load_view(db, run)
    if not shares_reviewed_documents(view, improved):
        return
    if skip:
        print("warning: --no-fold-answers: this run shares documents with the reviews its judge learnt from; its "
              "estimate will say its interval is too narrow", file=sys.stderr)
        return
    print(fold_cost_text(view, improved), file=sys.stderr)
    try:
        cost = ask_fold_labels(db, view, improved)
    except BaseException:
        delete_run(db, run, force=True)
        raise
    print(f"fold judges: {cost['requests']} requests, {cost['cached']} answers from the cache", file=sys.stderr)


@command("delete-run", RUN,
         arg("--exported", default=None, metavar="FILE",
             help="export the run's reviews to FILE first, and its gold errata (if any) beside it, to "
                  "FILE's name with .errata.json for its last suffix"),
         arg("--force", action="store_true", help="delete the reviews no other run asks, and the errata, without an "
             "export (reviews of questions another run asks move there all the same)"))
def cmd_delete_run(args: argparse.Namespace) -> None:
    """Delete a run (documents, decisions, audited state). A review whose question another run asks moves to that
    run (a review settles its question in every run that asks it), so the other runs keep their labels
    (`reviews_moved`). Refuses while it has other reviews or gold errata unless --exported FILE (every review and
    erratum is written out first) or --force. A board holding the run keeps its other runs while two
    or more remain (its plan is deleted: make a new one with `board plan`) and is deleted otherwise; the output
    names both (`boards_without_it`, `boards_deleted`).

    Example: python -m audit delete-run --run old-run --exported old-run.reviews.jsonl
    """
    from audit.outputs.errata_export import export_errata_json
    from audit.review.reviews_io import export_reviews
    from audit.runs import delete_run, export_marks
    from audit.store.database import run_row

    db = _open(args.db)
    exported, errata_file = None, None
    if args.exported:
        exported = export_marks(db, args.run)  # before the export reads: a row written after it refuses the delete
        rule = _run_rule(args, db)
        if db.execute("SELECT 1 FROM errata WHERE run_id = ? LIMIT 1", [run_row(db, args.run)["id"]]).fetchone():
            errata_file = str(errata_beside(args.exported))
            rule.check(errata_file, "--exported (its errata)")
        rule.check(args.exported, "--exported")
        _emit(export_reviews(db, args.run), args.exported, rule, "--exported")
        if errata_file:
            _emit(export_errata_json(db, args.run), errata_file, rule, "--exported (its errata)")
    try:
        result = delete_run(db, args.run, force=args.force, exported=exported)
    except Exception:  # refused, or the database busy or failing: nothing was deleted
        if exported is not None:  # nothing was deleted: the files this command wrote go, so running it again works
            for written in (args.exported, errata_file):
                if written:
                    Path(written).unlink(missing_ok=True)
        raise
    _print_json(result)


def errata_beside(reviews_file: str) -> Path:
    """Where `delete-run --exported FILE` writes the run's gold errata: FILE with `.errata.json` for its last suffix.

    >>> str(errata_beside("out/old-run.reviews.jsonl"))
    'out/old-run.reviews.errata.json'
    """
    p = Path(reviews_file)
    return p.with_name(p.stem + ".errata.json")


@command("check")
def cmd_check(args: argparse.Namespace) -> None:
    """Read every page and index of the database (SQLite's full integrity check) and print what it found; exit
    status 2 if it is damaged. Opening a database checks its pages only when the file changed since a check passed
    on it (`audit/store/check_record.py`); this checks it whenever you ask.

    Example: python -m audit check
    """
    from audit.store.database import integrity_check

    result = integrity_check(_open(args.db), args.db)
    _print_json(result)
    if not result["ok"]:
        raise DatabaseRefused(f"{args.db}: the database is damaged ({result['problems'][0][:120]}); restore it from "
                              "a backup")


@command("runs")
def cmd_runs(args: argparse.Namespace) -> None:
    """List the runs in the database (newest first) as JSON lines; a judge improved on reviews adds `judge_stale`
    (true when one of those reviews was withdrawn or changed since) and `judge_learning` (the sentence saying so).

    Example: python -m audit runs
    """
    from audit.learning import learning_by_run
    from audit.store.database import list_runs

    db = _open(args.db)
    learning = learning_by_run(db)
    runs = list_runs(db)
    if not runs:  # said, so that an empty database does not pass for an empty result
        print(f"no runs in {args.db}", file=sys.stderr)
    for r in runs:
        line = {k: r[k] for k in ("name", "task", "judge_spec", "created", "n_docs", "n_decisions")}
        if r["name"] in learning:
            line |= {"judge_stale": learning[r["name"]]["stale"], "judge_learning": learning[r["name"]]["text"]}
        print(json.dumps(line))


@command("demo")
def cmd_demo(args: argparse.Namespace) -> None:
    """Score the bundled demo runs the database lacks (what the dashboard does on its first start).

    Example: python -m audit demo
    """
    from audit.demo import load_demo

    def progress(done: int, total: int, name: str) -> None:
        if name:
            print(f"[{done + 1}/{total}] {name}", file=sys.stderr)

    _print_json({"scored": load_demo(_open(args.db, create=True), progress)})


DECISIONS_PRINTED_AT_ONCE = 1000
"""`decisions` reads and prints this many at a time (numbered together: one lookup of the run's ids per batch)."""


@command("decisions", RUN,
         arg("--doc", default=None, help="only this document"),
         arg("--verbose", action="store_true", help="add human labels and the judge's answers"),
         POLICY)
def cmd_decisions(args: argparse.Namespace) -> None:
    """Print the run's decisions as JSON lines: decision (#N, as the pages and `review --decision '#N'` name it), id,
    doc, kind, type, left, right, judge, effective.

    Example: python -m audit decisions --run demo-chimera-mixed
    """
    from itertools import islice

    from audit.views import as_view

    view = as_view(_open(args.db), args.run, args.policy)
    # printed as read, a thousand at a time: the run's whole list took 1.3 GB at 344,000 decisions
    listed = view.iter_decisions(args.doc)
    while part := list(islice(listed, DECISIONS_PRINTED_AT_ONCE)):
        for d, tag in zip(part, view.decision_tags([d["id"] for d in part]), strict=True):
            out = {"decision": tag,
                   **{k: d[k] for k in ("id", "doc", "kind", "type", "left", "right", "judge", "effective", "source")}}
            if args.verbose:
                out |= {"human": d["human"], "detail": d["detail"]}
            print(json.dumps(out, ensure_ascii=False))


@command("review", RUN,
         arg("--decision", required=True, type=_decision_id,
             help="the decision as the review card shows it (#12: its number in the run) or its id"),
         arg("--label", required=True, help="a label of the decision kind's scheme (see `decisions`) or undo"),
         arg("--reviewer", required=True),
         arg("--note", default=None),
         arg("--role", default="reviewer", choices=["reviewer", "adjudicator"]),
         arg("--blind", action="store_true", help="record that the judge's answer was hidden"),
         arg("--sampled", action="store_true", help="the decision was served by the sample queue (`queue`)"),
         arg("--json", action="store_true", help="print the review row, review counts and audited metrics"))
def cmd_review(args: argparse.Namespace) -> None:
    """Confirm or overrule one decision (append-only); `--label undo` undoes your last label, as the review cards
    do: back to the label you held before it (none, for a first label: withdrawn), stored as a new row (a second
    undo undoes that). Prints what the review changed in two lines (`--json`: the review row, review counts and
    audited metrics).

    Example: python -m audit review --run demo-chimera-mixed --decision '#1' --label no-match --reviewer ana
    """
    from audit.review.queue import describe_change
    from audit.review.reviews import UNDO_NOTE, add_review, last_review_by, newest_seen, undo_label
    from audit.views import load_view
    from scoring.nouns import Noun

    db = _open(args.db)
    label = None if args.label == "undo" else args.label
    first = load_view(db, args.run)
    before = first.audit.metrics
    decision = args.decision
    if isinstance(decision, str):  # `#N`, as the card shows it
        try:
            decision = first.decision_by_number(int(decision[1:]))
        except KeyError as e:
            raise AuditError(e.args[0]) from None
    note, seen = args.note, None
    if args.label == "undo":  # the cards' undo rule; with nothing to undo, add_review refuses the withdrawal
        reviews = first.reviews.get(decision, [])
        last = last_review_by(reviews, args.reviewer, args.role)
        if last is not None:
            label = undo_label(reviews, last["id"], who=args.reviewer, role=args.role)
            note = note or UNDO_NOTE
            seen = newest_seen(reviews)
    row = add_review(db, args.run, decision, label, args.reviewer, note=note, blind=args.blind,
                     role=args.role, sampled=args.sampled, expect_last_review=seen)
    view = load_view(db, args.run)
    a = view.audit
    if args.json:
        _print_json({"review": row, "reviews": a.review_counts, "audited": a.metrics})
        return
    rc = a.review_counts
    print(describe_change(view.task, decision, label, before, a.metrics,
                          number=view.decision_numbers([decision])[decision]))
    print(f"run {args.run}: {Noun('decision').count(rc['reviewed'])} reviewed, {rc['overruled']} overruled, "
          f"{rc['conflicted']} conflicted (--json: the review row and the audited metrics)")


@command("plan", RUN,
         arg("--kind", default=None, help="one decision kind (default: all kinds together)"),
         arg("--seed", type=int, default=0, help="seed of the plan's random ranks (default 0; same seed, same plan)"))
def cmd_plan(args: argparse.Namespace) -> None:
    """Create the run's sampling plan for a partial audit (strata, blocks, seed, random ranks), before reviewing.

    Example: python -m audit plan --run demo-chimera-mixed --seed 1
    """
    from audit.review.sampling import create_plan

    _print_json(create_plan(_open(args.db), args.run, kind=args.kind, seed=args.seed))


@command("assign", RUN,
         arg("--reviewers", default=None, help="comma-separated reviewer names (e-mail addresses in team mode)"),
         arg("--min-reviewers", type=int, default=2, help="reviewers per double-coded document (default 2)"),
         arg("--double-code", default="0", help="documents to double-code: a fraction (0.2, 20%%) or a count"),
         arg("--documents", type=int, default=None, help="sample size: the first N documents of the sampling "
             "plan's order (default: all)"),
         arg("--seed", type=int, default=0, help="seed of the double-coded subset and of the turn order"),
         arg("--clear", action="store_true", help="remove the assignment (reviews stay)"))
def cmd_assign(args: argparse.Namespace) -> None:
    """Show, set or clear the run's assigned review: which reviewers share its sampled documents, and a seeded
    subset each of `--min-reviewers` of them double-codes (for the human-human ceiling). Without --reviewers (or
    --clear) it shows the assignment; each reviewer's queue then serves their share only.

    Example: python -m audit assign --run demo-chimera-mixed --reviewers ana@lab.org,bo@lab.org --double-code 0.2
    """
    from audit.review.assigned_review import (
        DoubleCode,
        clear_review_assignment,
        review_assignment,
        set_review_assignment,
    )
    from audit.store.database import run_row

    db = _open(args.db)
    run_row(db, args.run)  # an unknown run is said as such (showing printed `null`, as for a run without one)
    if args.clear:
        _print_json({"cleared": clear_review_assignment(db, args.run)})
    elif args.reviewers is not None:
        _print_json(set_review_assignment(db, args.run, args.reviewers.split(","), min_reviewers=args.min_reviewers,
                                          double_code=DoubleCode.parse(args.double_code), documents=args.documents,
                                          seed=args.seed, set_by="cli"))
    else:
        _print_json(review_assignment(db, args.run))


@command("queue", RUN,
         arg("--next", action="store_true", help="print the next document to review (the default)"),
         arg("--kind", default=None, help="the plan of one decision kind (default: the all-kinds plan)"),
         arg("--half-width", type=float, default=0.03, help="target half-width of the headline interval"),
         arg("--metric", default=None, help="headline metric to aim at, as estimate names it (e.g. "
             "entities/avg/f1); default: the first headline metric reviews can move"))
def cmd_queue(args: argparse.Namespace) -> None:
    """Print the next document the sample queue serves (its decisions, stratum, why) and how many more reviews
    reach the target half-width; review its decisions with `review --sampled`.

    Example: python -m audit queue --run demo-chimera-mixed --next
    """
    from audit.review.sampling import next_sample

    _print_json(next_sample(_open(args.db), args.run, args.kind, half_width=args.half_width, metric=args.metric))


@command("estimate", RUN, arg("--kind", default=None,
                               help="the plan of one decision kind (default: the all-kinds plan)"))
def cmd_estimate(args: argparse.Namespace) -> None:
    """Estimate the run's headline metrics under full human review from the sampled reviews, with intervals and the
    judge's bias (judge-only minus estimate). `ci` is the fixed-n interval (`"interval": "fixed-n"`: valid when the
    number of reviews was fixed in advance); `anytime.ci` the anytime one (`"interval": "anytime"`: valid however
    you decide when to stop, e.g. on the queue's "N more reviews to ±0.03").

    Example: python -m audit estimate --run demo-chimera-mixed
    """
    from audit.review.sampling import estimate

    _print_json(estimate(_open(args.db), args.run, args.kind))


def _epsilon(text: str) -> float:
    """--epsilon: a number in [0, 1)."""
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not (0 <= v < 1):  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number from 0 up to (not including) 1, got {text[:40]!r}")
    return v


@command("agreement", RUN, POLICY,
         arg("--epsilon", type=_epsilon, default=0.2,
             help="the alternative annotator test's cost-benefit margin (0.2 expert annotators, 0.15 skilled, "
                  "0.1 crowd workers; docs/alt-test.md)"))
def cmd_agreement(args: argparse.Namespace) -> None:
    """Print human-vs-judge and human-vs-human agreement as JSON.

    Example: python -m audit agreement --run demo-chimera-mixed
    """
    from audit.outputs.agreement import agreement

    _print_json(agreement(_open(args.db), args.run, policy=args.policy, epsilon=args.epsilon))


@command("export", RUN,
         arg("--format", default="json", choices=["json", "csv", "latex", "judgelog"]),
         POLICY, OUT, FORCE)
def cmd_export(args: argparse.Namespace) -> None:
    """Export the run: json (original and audited metrics, reviews, agreement, judge, inputs), csv of decisions,
    latex table, or judgelog (the judge's answers in replay format).

    Example: python -m audit export --run demo-chimera-mixed --format json --out audited.json
    """
    from audit.outputs.export import export_run

    if args.out:
        _rule(args).check(args.out)
    db = _open(args.db)
    text = export_run(db, args.run, args.format, policy=args.policy)
    _emit(text, args.out, _run_rule(args, db))


@command("report", RUN,
         arg("--out", required=True, help="the HTML file to write"),
         arg("--figures", default=None, metavar="DIR", help="also write every figure as SVG and PDF, and the "
             "LaTeX table, into DIR (created if missing)"),
         FORCE, POLICY)
def cmd_report(args: argparse.Namespace) -> None:
    """Write the run's audit report: one self-contained HTML file (figures, tables, provenance; opens offline).

    With --figures DIR, every figure is also written as SVG and PDF, with the LaTeX table beside them.

    Example: python -m audit report --run demo-chimera-mixed --out demo-chimera-mixed.report.html --figures figs
    """
    from audit.outputs.report import write_report
    from audit.views import load_view
    from ui.families import report_panel  # the composition root hands the family's section to the report

    _rule(args).check(args.out)
    if args.figures is not None and Path(args.figures).exists() and not Path(args.figures).is_dir():
        raise AuditError(f"{args.figures}: --figures must be a folder")
    db = _open(args.db)
    rule = _run_rule(args, db)
    rule.check(args.out)
    view = load_view(db, args.run, args.policy)
    result = write_report(view, args.out, args.figures, rule=rule, panel=report_panel(view.task.name))
    print(f"wrote {args.out}", file=sys.stderr)
    _print_json(result)


@command("compare",
         arg("--run", required=True, help="run A (rows of the confusion matrix)"),
         arg("--other", required=True, help="run B, same gold file"))
def cmd_compare(args: argparse.Namespace) -> None:
    """Compare the judges of two runs on the same inputs, decision by decision (agreement and differences).

    Example: python -m audit compare --run demo-chimera-mixed --other demo-chimera-fuzzy-mixed
    """
    from audit.outputs.compare import compare_runs

    _print_json(compare_runs(_open(args.db), args.run, args.other))


@command("export-reviews", RUN, OUT, FORCE)
def cmd_export_reviews(args: argparse.Namespace) -> None:
    """Write the run's review rows as JSON lines (keyed by decision content, so another database can merge them).

    Example: python -m audit export-reviews --run demo-chimera-mixed --out ana.reviews.jsonl
    """
    from audit.review.reviews_io import export_reviews

    if args.out:
        _rule(args).check(args.out)
    db = _open(args.db)
    text = export_reviews(db, args.run)
    _emit(text, args.out, _run_rule(args, db))


@command("import-reviews", RUN, arg("file", help="a file written by export-reviews"))
def cmd_import_reviews(args: argparse.Namespace) -> None:
    """Merge review rows exported from another database into the run (duplicates skipped, nothing lost).

    Example: python -m audit import-reviews --run demo-chimera-mixed ana.reviews.jsonl
    """
    from audit.review.reviews_io import import_reviews

    _print_json(import_reviews(_open(args.db), args.run, args.file))


def _framework_commands(parser: argparse.ArgumentParser, wanted: set[str]) -> None:
    """`import FRAMEWORK`: a subcommand per framework whose logs can be imported, with that importer's options."""
    frameworks = parser.add_subparsers(dest="framework", required=True, metavar="FRAMEWORK",
                                       help=f"the framework that wrote the log: {', '.join(IMPORTERS)}")
    for framework in IMPORTERS:
        imp = get_importer(framework)
        f = frameworks.add_parser(framework, help=imp.title, description=f"Import a log as a run: {imp.title}."
                                  + (f" The framework's own aggregate, to compare with, is read from "
                                     f"{imp.reported_from}." if imp.reported_from else ""))
        DB(f, wanted)
        f.add_argument("log", help=imp.title)
        f.add_argument("--run", default=None, help="run name (default derived from the log's name)")
        for opt, text in imp.options.items():
            f.add_argument(f"--{opt}", default=None, help=text)
        f.set_defaults(importer_options=tuple(imp.options))


@command("import", _framework_commands)
def cmd_import(args: argparse.Namespace) -> None:
    """Import an eval framework's log (its judge's verdicts) as a run: records that cannot be read are skipped and
    listed (`FILE: record N: reason`), the rest stored at once; the framework's own aggregate is printed beside
    the run's.

    Example: python -m audit import inspect logs/task.eval --scorer model_graded_fact --run my-task
    """
    from audit.framework_logs import import_log

    options = {k: v for k, v in vars(args).items() if k in getattr(args, "importer_options", ()) and v is not None}
    result = import_log(_open(args.db, create=True), args.framework, args.log, run=args.run, options=options)
    for err in result["errors"][:20]:
        print(f"skipped: {err}", file=sys.stderr)
    for said in result["warnings"]:
        print(f"warning: {said}", file=sys.stderr)
    _print_json(result)


def _write_back_framework(parser: argparse.ArgumentParser, _wanted: set[str]) -> None:
    parser.add_argument("framework", choices=[f for f in IMPORTERS if get_importer(f).write_back is not None],
                        help="the framework whose log takes the edits")


@command("write-back", _write_back_framework, arg("--run", required=True, help="the run imported from the log"),
         arg("--log", required=True, help="the log the run was imported from"),
         arg("--out", required=True, help="where to write the edited copy of the log"),
         FORCE)
def cmd_write_back(args: argparse.Namespace) -> None:
    """Write a run's reviewed verdicts into a copy of the framework log it was imported from, each as the
    framework's own edit with the reviewer and the note as provenance (Inspect: `edit_score`).

    Example: python -m audit write-back inspect --run my-task --log logs/task.eval --out logs/task.audited.eval
    """
    from audit.framework_logs import write_back

    target = _rule(args, inputs=[args.log]).check(args.out, "--out")
    # the framework writes the file itself: to a temporary name beside the target (its suffix kept, which tells the
    # framework the format), renamed into place once whole
    tmp = target.with_name(f".{target.stem}.{os.getpid()}.tmp{target.suffix}")
    try:
        result = write_back(_open(args.db), args.framework, args.run, args.log, str(tmp))
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _print_json(result | {"out": args.out})


@command("stability", RUN,
         arg("--repeats", type=int, default=3, help="times each question is asked again (default 3)"),
         arg("--temperature", type=float, default=None, help="sampling temperature (LLM judges)"),
         arg("--judge", default=None, help="judge spec to ask (default: the run's judge)"),
         arg("--sample", type=int, default=100, help="decisions to re-ask (default 100; 0 = all)"),
         arg("--seed", type=int, default=0, help="sample seed (same size and seed: same decisions)"),
         arg("--name", default=None, help="name of the check (default from judge, temperature, repeats)"),
         arg("--check", action="append", default=None, metavar="NAME",
             help="also report over this stored check (repeatable; with --report: only these)"),
         arg("--report", action="store_true", help="ask nothing; report the stored checks"))
def cmd_stability(args: argparse.Namespace) -> None:
    """Judge stability: re-ask a seeded sample of the run's judge questions K times (bypassing the cache; every
    answer stored with its attempt number), or ask another judge spec; print per-decision answer distributions and
    the flip rate with a Wilson interval, by type and by judge label. `--report` only reports stored checks.

    Example: python -m audit stability --run my-gpt-run --repeats 5 --temperature 0.7 --sample 100 --seed 1
    """
    from audit.cli_progress import Progress
    from audit.outputs.stability import run_check, stability_report

    db = _open(args.db)
    if args.report:
        _print_json(stability_report(db, args.run, args.check or None))
        return
    bar = Progress("re-asking", "questions")

    def progress(done: int, total: int) -> None:
        bar.update(done, total)

    ok = False
    try:
        check = run_check(db, args.run, repeats=args.repeats, temperature=args.temperature, judge_spec=args.judge,
                          sample=args.sample, seed=args.seed, name=args.name, progress=progress)
        ok = True
    finally:
        bar.close(final=ok)
    print(f"check: {check['check']}", file=sys.stderr)
    _print_json({"check": check, "report": stability_report(db, args.run, [check["check"], *(args.check or [])])})


@command("improve-judge", RUN,
         arg("--strategy", required=True, choices=list(IMPROVE_STRATEGIES)),
         arg("--seed", type=int, default=0, help="seed of the document folds and the bootstrap (default 0)"),
         arg("--folds", type=int, default=5, help="document folds K of the cross-fitting (default 5)"),
         arg("--min-alpha", type=float, default=DEFAULT_MIN_ALPHA, help="refuse when the human-human alpha on "
             f"double-reviewed decisions is below this (default {DEFAULT_MIN_ALPHA}; on fewer than "
             f"{MIN_DOUBLE} such decisions it is said, not a refusal)"),
         arg("--min-documents", type=int, default=MIN_DOCUMENTS, help="refuse with fewer reviewed documents "
             f"(at most and by default {MIN_DOCUMENTS}; at least two per fold in any case)"),
         arg("--k", type=int, default=DEFAULT_K, help=f"few-shot: examples per question (default {DEFAULT_K})"),
         arg("--rules", default=None, metavar="FILE", help="rules: a text file of instructions (the distilled "
             "rules as you edited them) that the judge to keep uses instead of the distilled ones"),
         arg("--out", required=True, help="the JSON file to write (refused if it exists, unless --force)"),
         FORCE, POLICY)
def cmd_improve_judge(args: argparse.Namespace) -> None:
    """Improve the run's judge from its reviews and prove it out of sample: K-fold cross-fitting by document
    (each reviewed decision judged by a judge fitted without its document), kappa before and after, the change with
    a paired document-bootstrap interval; an improvement is claimed only when that interval excludes 0. Strategies:
    threshold (fuzzy, embed judges), calibrate (ordinal ratings), few-shot and rules (LLM judges: the run's model is
    asked again, at $OPENAI_BASE_URL, through the answer cache).

    Example: python -m audit improve-judge --run my-fuzzy-run --strategy threshold --seed 0 --out improved.json
    """
    from audit.outputs.improve_judge import improve_judge, judge_after_text, judge_to_use

    db = _open(args.db)
    rule = _run_rule(args, db)
    rule.check(args.out, "--out")
    rules = None
    if args.rules:
        try:
            rules = Path(args.rules).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise AuditError(f"{args.rules}: --rules must be a readable UTF-8 text file ({e})") from None
    result = improve_judge(db, args.run, args.strategy, seed=args.seed, folds=args.folds, min_alpha=args.min_alpha,
                           min_documents=args.min_documents, policy=args.policy, k=args.k, rules=rules)
    _emit(json.dumps(result, indent=1, ensure_ascii=False) + "\n", args.out, rule)
    ev = result["evaluation"]
    stored = result.get("stored_as")
    use = judge_to_use(result, args.out)
    print(f"{result['reason']} ({ev['n_decisions']} decisions in {ev['n_documents']} documents; judge after: "
          f"{judge_after_text(result)}; folds stored as result {stored if stored is not None else '(not stored)'}"
          f"; {use})", file=sys.stderr)


def _judge_batch_options(parser: argparse.ArgumentParser, wanted: set[str]) -> None:
    """Every family's input flags when the command line names no task (`judge-batch --help`), else its task's."""
    judge_batch_arguments(parser, [i.name for name in TASKS if name in wanted for i in TASKS[name].inputs],
                          list(TASKS))


@command("judge-batch", _judge_batch_options, FORCE, defaults(late_positional="results"))
def cmd_judge_batch(args: argparse.Namespace) -> None:
    """Judge at scale: `export` writes every uncached judge question of a run as OpenAI Batch API request lines
    (custom_id = cache key; for the OpenAI Batch API or vLLM run-batch); `import` caches a results file's answers
    (bad lines reported, never cached); `score` with the same judge then sends no requests for them.

    Example: python -m audit judge-batch export --task chimera --gold data/chimera/eval.csv
    --pred data/chimera/pred_mixed.jsonl --judge openai:gpt-4o-mini --out requests.jsonl
    """
    from audit.judge_batch import run_command
    from scoring.families import TASKS

    names = [s.name for s in TASKS[args.task].inputs]
    rule = _rule(args, inputs=[*(getattr(args, n, None) for n in names), args.results])
    if args.action == "export" and args.out:
        rule.check(args.out)
    report = run_command(_open(args.db, create=True), args, names, rule)
    for prob in report.get("problem_lines", [])[:20]:
        print(f"warning: line {prob['line']}: {prob['reason']}", file=sys.stderr)
    _print_json(report)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The CLI's parser for this command line: only the families it names are imported (see
    `_requested_families`), so `--help`, `runs` or `review` load no family and `score chimera` loads CHIMERA alone."""
    p = argparse.ArgumentParser(prog="python -m audit", description="Rejudge: audit LLM-judged evaluations.")
    wanted = _requested_families(argv, TASKS)
    DB(p, wanted)
    p.set_defaults(db=None)
    sub = p.add_subparsers(dest="command", required=True)

    def add(name: str, fn: CommandFn) -> argparse.ArgumentParser:
        """The subcommand `name` running `fn`, with `--db` and its help from `fn`'s docstring (the first paragraph
        in the list of commands): what a command module outside this file gets to register its commands."""
        doc = (fn.__doc__ or "").strip()
        summary = " ".join(doc.split("\n\n")[0].split())  # the whole first paragraph, never half a sentence
        sp = sub.add_parser(name, help=summary, description=doc,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        DB(sp, wanted)
        sp.set_defaults(fn=fn)
        return sp

    for c in COMMANDS:
        sp = add(c.name, globals()[c.fn.__name__])  # by name, when called: a command patched in a test runs
        for spec in c.arguments:
            spec(sp, wanted)
    for register in command_modules():
        register(add)
    return p


def command_modules() -> list[Callable[[Callable[[str, CommandFn], argparse.ArgumentParser]], None]]:
    """The `register(add)` of each command module outside this file, called by `build_parser` after the built-in
    commands (so their commands come last in `--help`)."""
    from audit.board.cli import register as register_board

    return [register_board]


def _requested_families(argv: Sequence[str] | None, tasks: Mapping[str, object]) -> set[str]:
    """The families a command line needs built into the parser: the one after `score` or `judge-batch --task`;
    all of them only where a help text lists every family's flags (`score --help`, `judge-batch` without a task)."""
    words = list(sys.argv[1:] if argv is None else argv)
    while words[:1] == ["--db"] or words[:1] and words[0].startswith("--db="):
        words = words[2:] if words[0] == "--db" else words[1:]
    command, words = (words[0], words[1:]) if words else ("", [])
    if command == "score":
        named = [w for w in words if w in tasks][:1]
        return set(named) if named else set(tasks)
    if command == "judge-batch":
        for i, w in enumerate(words):
            if w == "--task" and i + 1 < len(words) and words[i + 1] in tasks:
                return {words[i + 1]}
            if w.startswith("--task=") and w[7:] in tasks:
                return {w[7:]}
        return set(tasks) if any(w in ("-h", "--help") for w in words) else set()
    return set()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; every failure is one `error: ...` line on stderr.

    Exit status 0 on success, 2 for a request that cannot be carried out (bad input, arguments, database), 1 for
    an internal error (a bug: the message says so), 130 when interrupted.
    """
    parser = build_parser(argv)
    args, extra = parser.parse_known_args(argv)
    late = getattr(args, "late_positional", None)
    if late and len(extra) == 1 and not extra[0].startswith("-") and getattr(args, late) is None:
        # argparse gives an optional positional its value at its first chance, so `judge-batch import --task ...
        # results.jsonl` (the README's order) would leave it unrecognised; take it here
        setattr(args, late, extra[0])
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.db is None:
        args.db = default_db_path()
    succeeded = False
    try:
        _check_arguments(args)
        args.fn(args)
        _seal_databases(succeeded=True)
        succeeded = True
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as e:  # noqa: BLE001 - the CLI's promise: one line, never a traceback
        message, status = explain(e, args.db)
        return _fail(message, status)
    finally:
        if not succeeded:
            _seal_databases(succeeded=False)
    return 0


def _seal_databases(*, succeeded: bool) -> None:
    """After a command that succeeded, check the database as it leaves it, if it changed
    (`audit.store.database.seal`): the next command then skips reading every page. After one that failed, close
    it unchecked. Nothing to do for a command that opened none."""
    from audit.store.database import seal_all

    seal_all(succeeded=succeeded)


def explain(e: BaseException, db_path: str) -> tuple[str, int]:
    """The one-line message and exit status for an exception raised by a subcommand."""
    if isinstance(e, InputError | JudgeSpecError | AuditError):
        return str(e), 2
    if isinstance(e, sqlite3.DatabaseError):
        text = str(e) if len(str(e)) < 200 else str(e)[:160] + "..."
        if disk_full(e, db_path):
            return disk_full_message(db_path), 2
        if isinstance(e, sqlite3.IntegrityError):
            return f"internal error: {db_path}: the database refused a change ({text}); please report it", 1
        if "readonly" in text or "read-only" in text:
            return (f"{db_path}: the database is read-only (the file or its folder is not writable): it can be "
                    "browsed and exported, not changed", 2)
        if "locked" in text or "busy" in text:
            return (f"{db_path}: the database is busy: another process held its write lock for "
                    f"{BUSY_TIMEOUT_MS // 1000} s; try again", 2)
        if "I/O" in text:
            return f"{db_path}: cannot write the database (SQLite: {text}); the change was not stored", 2
        return f"{db_path}: the database is damaged or not a Rejudge database (SQLite: {text})", 2
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        full = e.errno in (errno.ENOSPC, errno.EDQUOT)  # a full disk is named as such, never "cannot read"
        return f"{where}{cause(e) if full else e.strerror or e}", 2
    if isinstance(e, RecursionError):
        return "input nested too deeply to read", 2
    if isinstance(e, MemoryError):
        return "out of memory: the input is too large; split it into smaller files", 2
    if isinstance(e, UnicodeError):
        return f"text that is not valid UTF-8 ({e})", 2
    return f"internal error ({type(e).__name__}: {e}); please report it with the command you ran", 1


def _check_arguments(args: argparse.Namespace) -> None:
    """Every text argument must be Unicode text: undecodable bytes in argv arrive as lone surrogates."""
    for name, value in vars(args).items():
        if isinstance(value, str):
            problem = text_problem(value)
            if problem:
                option = name.upper() if name == "file" else "--" + name.replace("_", "-")
                raise AuditError(f"{option} {problem}: arguments must be UTF-8 text")


def _fail(message: str, status: int) -> int:
    line = " ".join(message.split("\n"))
    print(f"error: {line}", file=sys.stderr)
    return status


def _silence_stdout() -> None:
    """After EPIPE (`... | head`), point stdout at /dev/null so the interpreter's final flush does not fail."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError:
        pass
