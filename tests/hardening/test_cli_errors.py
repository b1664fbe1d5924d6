"""Issue 17 item 8: every bad input ends in one `error: FILE:LINE: reason` line with exit 2, and nothing is stored.

Each case runs `audit.cli.main` in-process on a copy of a scored database and checks: the exit status, that
stderr is one line starting with `error:` (no traceback), what it names, and that the runs, documents, decisions
and reviews are exactly what they were.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from audit import cli
from audit.cli import main
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED

DEEP = 100_000


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """A database with run `mixed` (replay judge) and one review, checkpointed so it can be copied as one file."""
    db = tmp_path_factory.mktemp("base") / "base.db"
    assert main(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", f"replay:{JUDGE_LOG}", "--run", "mixed"]) == 0
    assert main(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", "exact", "--run", "other"]) == 0
    assert main(["review", "--db", str(db), "--run", "mixed", "--decision", "1", "--label", "match",
                 "--reviewer", "ana"]) == 0
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    return db


@pytest.fixture
def db(scored, tmp_path) -> Path:
    p = tmp_path / "case.db"
    shutil.copy(scored, p)
    return p


def state(db: Path) -> tuple:
    with sqlite3.connect(db) as c:
        out = (c.execute("SELECT name, n_docs, n_decisions FROM runs ORDER BY name").fetchall(),
               *(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("documents", "decisions")),
               c.execute("SELECT uid, decision_id, label FROM reviews ORDER BY id").fetchall())
    c.close()
    return out


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
    return str(p)


def first_pred() -> dict:
    return json.loads(PRED_MIXED.read_text().splitlines()[0])


def review_line(db: Path, **change: object) -> str:
    with sqlite3.connect(db) as c:
        doc, kind, typ, left, right = c.execute(
            "SELECT doc_id, kind, type, left, right FROM decisions WHERE run_id = (SELECT id FROM runs WHERE name = "
            "'mixed') ORDER BY id LIMIT 1").fetchone()
    c.close()
    rec = {"uid": "u-1", "doc": doc, "kind": kind, "type": typ, "left": left, "right": right, "reviewer": "bo",
           "label": "no-match", "role": "reviewer", "note": None, "blind": False,
           "created": "2026-01-31T09:30:00+00:00"}
    return json.dumps(rec) + "\n" + json.dumps({**rec, "uid": "u-2", **change}) + "\n"


PID = first_pred()["paper_id"]
PRED_CASES = {
    "list nested 100,000 deep": (f'{{"paper_id": "{PID}", "relations": {"[" * DEEP + "]" * DEEP}}}', 1,
                                 "invalid JSON: nested too deeply"),
    "object nested 100,000 deep": ('{"a":' * DEEP + "1" + "}" * DEEP, 1, "invalid JSON: nested too deeply"),
    "nested 1,000 deep": ("[" * 1000 + "]" * 1000, 1, "nested too deeply"),
    "lone surrogate in a span": (json.dumps({"paper_id": PID, "relations": {"combination": [
        {"comb-element": ["a\ud800", "b"]}]}}), 1, "field 'comb-element' is not valid Unicode text ('a\\\\ud800' "
                                                     "holds a lone surrogate \\ud800"),
    "integer of 10,000 digits": (f'{{"paper_id": "{PID}", "relations": {"1" * 10_000}}}', 1,
                                 "integer of 10000 digits is too large"),
}


@pytest.mark.parametrize("case", PRED_CASES, ids=list(PRED_CASES))
def test_hostile_prediction_json_is_one_error_line(db, tmp_path, capsys, case):
    text, line, reason = PRED_CASES[case]
    pred = write(tmp_path, "pred.jsonl", text + "\n")
    before = state(db)
    assert main(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", pred, "--judge", "exact"]) == 2
    msg = one_error(capsys)
    assert msg.startswith(f"error: {pred}:{line}: ") and reason in msg
    assert state(db) == before


def test_deep_json_in_a_gold_column_names_the_line(db, tmp_path, capsys):
    lines = GOLD.read_text(encoding="utf-8").split("\n", 1)
    header = lines[0]
    assert header.endswith("readable_relations,readable_entities")
    gold = write(tmp_path, "gold.csv", f'{header}\nx1,"text",relevant,[],{{}},"{"[" * DEEP + "]" * DEEP}",{{}}\n')
    pred = write(tmp_path, "pred.jsonl", '{"paper_id": "x1", "relations": {}}\n')
    assert main(["score", "chimera", "--db", str(db), "--gold", gold, "--pred", pred, "--judge", "exact"]) == 2
    assert one_error(capsys) == f"error: {gold}:2: readable_relations is not valid JSON: nested too deeply"


IMPORT_CASES = {
    "doc a list": ({"doc": ["x"]}, "field 'doc' must be a string, got a list"),
    "created null": ({"created": None}, "field 'created' must be a string, got null"),
    "uid null": ({"uid": None}, "field 'uid' must be a string, got null"),
    "note an object": ({"note": {"a": 1}}, "field 'note' must be a string or null, got an object"),
    "blind the string no": ({"blind": "no"}, "field 'blind' must be true or false, got a string 'no'"),
    "created not a timestamp": ({"created": "last tuesday"}, "field 'created' must be an ISO-8601 date and time "
                                "with a UTC offset, like 2026-01-31T09:30:00+00:00; got 'last tuesday'"),
    "reviewer of 101 characters": ({"reviewer": "r" * 101}, "reviewer name is 101 characters long; the limit is 100"),
    "lone surrogate in the note": ({"note": "x\udfff"}, "field 'note' is not valid Unicode text ('x\\\\udfff' holds a "
                                                          "lone surrogate \\udfff, an escape without its pair, which "
                                                          "UTF-8 cannot hold)"),
}


@pytest.mark.parametrize("case", IMPORT_CASES, ids=list(IMPORT_CASES))
def test_import_reviews_with_wrong_field_types(db, tmp_path, capsys, case):
    change, reason = IMPORT_CASES[case]
    f = write(tmp_path, "r.jsonl", review_line(db, **change))
    before = state(db)
    assert main(["import-reviews", "--db", str(db), "--run", "mixed", f]) == 2
    assert one_error(capsys) == f"error: {f}:2: {reason}"
    assert state(db) == before  # line 1 was valid: nothing of the file is stored


@pytest.mark.parametrize("text", ["[" * DEEP + "]" * DEEP, '{"a":' * 5000 + "1" + "}" * 5000], ids=["list", "object"])
def test_import_reviews_nested_deep(db, tmp_path, capsys, text):
    f = write(tmp_path, "r.jsonl", text + "\n")
    assert main(["import-reviews", "--db", str(db), "--run", "mixed", f]) == 2
    assert one_error(capsys) == f"error: {f}:1: invalid JSON: nested too deeply"


def test_import_of_a_uid_that_belongs_to_another_run(db, tmp_path, capsys):
    """A review stored under run mixed, imported into run other: where other asks the same question the review
    settles it there already (a duplicate, skipped); where it asks another, the file is refused whole."""
    f = str(tmp_path / "mixed.jsonl")
    assert main(["export-reviews", "--db", str(db), "--run", "mixed", "--out", f]) == 0
    capsys.readouterr()
    before = state(db)
    assert main(["import-reviews", "--db", str(db), "--run", "other", f]) == 0
    assert '"skipped_duplicates": ' in capsys.readouterr().out and state(db) == before
    with sqlite3.connect(db) as c:  # other's decisions ask other questions now
        c.execute("UPDATE decisions SET qkey = 'other: ' || qkey WHERE run_id = (SELECT id FROM runs WHERE name = "
                  "'other')")
    c.close()
    assert main(["import-reviews", "--db", str(db), "--run", "other", f]) == 2
    msg = one_error(capsys)
    assert msg.startswith(f"error: {f}:1: review uid ") and "already stored for run 'mixed'" in msg
    assert state(db) == before


ARG_CASES = {
    "--note with invalid UTF-8 (surrogateescape)": (["--note", "caf\udce9"], "--note is not valid Unicode text"),
    "--reviewer with a lone surrogate": (["--reviewer", "\udcff"], "--reviewer is not valid Unicode text"),
    "--reviewer of 10,000 characters": (["--reviewer", "r" * 10_000], "reviewer name is 10000 characters long"),
    "--run of 10,000 characters": (["--run", "r" * 10_000], "(10,000 characters); runs in this database: other, mixed"),
}


@pytest.mark.parametrize("case", ARG_CASES, ids=list(ARG_CASES))
def test_review_arguments(db, capsys, case):
    change, reason = ARG_CASES[case]
    args = {"--run": "mixed", "--decision": "1", "--label": "no-match", "--reviewer": "bo"}
    args.update(dict(zip(change[::2], change[1::2], strict=True)))
    before = state(db)
    assert main(["review", "--db", str(db), *[x for kv in args.items() for x in kv]]) == 2
    assert reason in one_error(capsys)
    assert state(db) == before


@pytest.mark.parametrize("value", [str(2**70), str(2**63), "0", "-3", "1e3"])
def test_decision_id_out_of_range_is_an_argument_error(db, capsys, value):
    with pytest.raises(SystemExit) as e:
        main(["review", "--db", str(db), "--run", "mixed", "--decision", value, "--label", "match", "--reviewer", "x"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "argument --decision" in err.splitlines()[-1] and "Traceback" not in err


def test_a_10000_character_run_name_is_refused_before_scoring(db, capsys):
    before = state(db)
    assert main(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", "exact", "--run", "n" * 10_000]) == 2
    assert one_error(capsys) == "error: run name is 10000 characters long; the limit is 120"
    assert state(db) == before


def test_db_that_is_a_folder_or_not_sqlite(tmp_path, capsys):
    folder = tmp_path / "d"
    folder.mkdir()
    assert main(["runs", "--db", str(folder)]) == 2
    assert one_error(capsys).startswith(f"error: {folder}: is a folder, not a database file")
    text = tmp_path / "notes.txt"
    text.write_text("not sqlite\n" * 20)
    assert main(["runs", "--db", str(text)]) == 2
    assert one_error(capsys).startswith(f"error: {text}: is not an SQLite database")
    assert text.read_text() == "not sqlite\n" * 20


@pytest.mark.parametrize("fmt", ["json", "csv", "latex", "judgelog"])
def test_export_into_a_missing_folder(db, tmp_path, capsys, fmt):
    out = tmp_path / "no" / "such" / "out.txt"
    assert main(["export", "--db", str(db), "--run", "mixed", "--format", fmt, "--out", str(out)]) == 2
    assert one_error(capsys) == f"error: {out}: --out: the folder {out.parent} does not exist"


@pytest.mark.parametrize("where", ["folder", "missing folder"])
def test_judge_log_path_is_checked_before_anything_is_stored(db, tmp_path, capsys, where):
    target = tmp_path if where == "folder" else tmp_path / "missing" / "log.jsonl"
    before = state(db)
    assert main(["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", "exact", "--run", "new", "--judge-log", str(target)]) == 2
    assert one_error(capsys).startswith(f"error: {target}: --judge-log")
    assert state(db) == before  # the run is not stored when its judge log cannot be written


def test_delete_run_exporting_into_a_missing_folder_deletes_nothing(db, tmp_path, capsys):
    before = state(db)
    out = tmp_path / "missing" / "r.jsonl"
    assert main(["delete-run", "--db", str(db), "--run", "mixed", "--exported", str(out)]) == 2
    assert one_error(capsys).startswith(f"error: {out}: --exported")
    assert state(db) == before


def _raiser(exc: BaseException):
    def fn(_args):
        """Stands in for a subcommand that fails unexpectedly."""
        raise exc
    return fn


UNEXPECTED = {
    "a bug": (RuntimeError("boom"), 1, "error: internal error (RuntimeError: boom); please report it"),
    "an OS error on a file": (FileNotFoundError(2, "No such file or directory", "/x/y.json"), 2,
                              "error: /x/y.json: No such file or directory"),
    "a read-only database": (sqlite3.OperationalError("attempt to write a readonly database"), 2,
                             "the database is read-only"),
    "a damaged database": (sqlite3.DatabaseError("database disk image is malformed"), 2,
                           "the database is damaged or not a Rejudge database (SQLite: database disk image is "
                           "malformed)"),
    "a recursion error": (RecursionError("maximum recursion depth exceeded"), 2, "error: input nested too deeply"),
    "a message with a line break": (ValueError("line one\nline two"), 1, "line one line two"),
}


@pytest.mark.parametrize("case", UNEXPECTED, ids=list(UNEXPECTED))
def test_main_turns_any_exception_into_one_line(monkeypatch, tmp_path, capsys, case):
    exc, status, text = UNEXPECTED[case]
    monkeypatch.setattr(cli, "cmd_runs", _raiser(exc))
    assert main(["runs", "--db", str(tmp_path / "x.db")]) == status
    line = one_error(capsys)
    assert text in line
    if "database" in text:
        assert str(tmp_path / "x.db") in line


def test_an_unknown_run_names_five_runs_and_counts_the_rest(db, capsys):
    with sqlite3.connect(db) as c:
        cols = [r[1] for r in c.execute("PRAGMA table_info(runs)") if r[1] not in ("id", "name")]
        for i in range(6):  # copies of run `other` under new names: eight runs in all
            c.execute(f"INSERT INTO runs (name, {', '.join(cols)}) SELECT ?, {', '.join(cols)} FROM runs "
                      "WHERE name = 'other'", [f"copy{i}"])
    c.close()
    assert main(["decisions", "--db", str(db), "--run", "nope"]) == 2
    assert one_error(capsys) == ("error: unknown run 'nope'; runs in this database: copy5, copy4, copy3, copy2, copy1 "
                                 "and 3 more (`runs` lists them)")


def test_decisions_of_an_unknown_document_is_an_error_not_silence(db, capsys):
    assert main(["decisions", "--db", str(db), "--run", "mixed", "--doc", "nope"]) == 2
    assert one_error(capsys) == "error: document 'nope' is not in run 'mixed'"
    with sqlite3.connect(db) as c:
        doc, n = c.execute("SELECT doc_id, count(*) FROM decisions WHERE run_id = (SELECT id FROM runs WHERE name = "
                           "'mixed') GROUP BY doc_id ORDER BY doc_id LIMIT 1").fetchone()
    c.close()
    assert main(["decisions", "--db", str(db), "--run", "mixed", "--doc", doc]) == 0
    assert len(capsys.readouterr().out.splitlines()) == n


def test_a_bare_number_that_is_another_runs_id_points_to_the_number_form(db, capsys):
    """Ids count across runs: decision 1 is the first run's; the error says `#1` is this run's first decision."""
    assert main(["review", "--db", str(db), "--run", "other", "--decision", "1", "--label", "match",
                 "--reviewer", "bo"]) == 2
    msg = one_error(capsys)
    assert msg.startswith("error: decision 1 is not in run 'other' (a bare number is a decision's id") and "#1" in msg
    assert main(["review", "--db", str(db), "--run", "other", "--decision", "#1", "--label", "match",
                 "--reviewer", "bo"]) == 0


def test_decisions_name_each_decision_by_the_number_review_takes(db, capsys):
    """`review` prints `#N`; `decisions` lists that number beside the id, and `review --decision '#N'` takes it."""
    assert main(["decisions", "--db", str(db), "--run", "other"]) == 0
    listed = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [d["decision"] for d in listed] == [f"#{n}" for n in range(1, len(listed) + 1)]
    third = listed[2]
    assert main(["review", "--db", str(db), "--run", "other", "--decision", third["decision"], "--label", "match",
                 "--reviewer", "bo"]) == 0
    assert capsys.readouterr().out.startswith("#3 ")
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT decision_id FROM reviews ORDER BY id DESC LIMIT 1").fetchone()[0] == third["id"]
    c.close()
