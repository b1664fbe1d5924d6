"""Issue 27, the store: damaged and half-migrated databases, newer schema stamps, review imports, plan / queue
arguments, sample draws and judge failures.

Damaged files are prepared once and copied into a folder of their own per case (named in the argv, watched byte
for byte): every command, and the dashboard, must refuse them with one line and leave them untouched. Tests:
tests/store/test_schema_stamp.py, test_reviews_import_trust.py, test_sampling_arguments.py,
test_judge_batch_keyless.py, tests/hardening/test_dashboard_databases.py, test_round2_store.py.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from devtools.hardening_cases import Case2

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "chimera"
GOLD, PRED, LOG = DATA / "eval.csv", DATA / "pred_mixed.jsonl", DATA / "judge_mixed.jsonl"
RUN = "base"
IDEATION = True
"""Include the ideation import cases (they score the ideation demo first; tests leave them to the bench)."""
DAMAGED, IMPORT, SAMPLE, JUDGE = ("store: damaged databases", "store: review import", "store: plan, queue, draws",
                                  "store: judge failures")


# ---------------------------------------------------------------- prepared databases


def _checkpointed(p: Path) -> None:
    c = sqlite3.connect(p)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()


def _copy(src: Path, dst: Path) -> Path:
    from devtools.sqlite_files import copy_db

    dst.parent.mkdir(parents=True, exist_ok=True)
    copy_db(src, dst)
    return dst


def _sql(base: Path, dst: Path, *sql: str) -> None:
    _copy(base, dst)
    c = sqlite3.connect(dst)
    for s in sql:
        c.execute(s)
    c.commit()
    c.close()
    _checkpointed(dst)


def overwrite_pages(data: bytes, pages: tuple[int, ...] = (3, 9, 17), page_size: int = 4096) -> bytes:
    """Three pages overwritten with random bytes; the 100-byte header (page 1) intact."""
    out = bytearray(data)
    rng = random.Random(27)
    for n in pages:
        out[(n - 1) * page_size:n * page_size] = rng.randbytes(page_size)
    return bytes(out)


def damaged_states(base: Path) -> dict[str, Callable[[Path], None]]:
    from audit.store.migrations import SCHEMA_VERSION
    from audit.store.schema_check import last_schema_migration

    last = last_schema_migration()
    return {
        "three pages overwritten (header intact)": lambda p: p.write_bytes(overwrite_pages(base.read_bytes())),
        "effective table gone": lambda p: _sql(base, p, "DROP TABLE effective"),
        "half-migrated, rollback journal": lambda p: _sql(base, p, "PRAGMA journal_mode = DELETE",
                                                          f"DELETE FROM _sqlite_migrations WHERE name = '{last}'"),
        "newer schema stamp (user_version)": lambda p: _sql(base, p, f"PRAGMA user_version = {SCHEMA_VERSION + 1}"),
        "migration of a newer Rejudge": lambda p: _sql(base, p, "INSERT INTO _sqlite_migrations (migration_set, "
                                                                "name, applied_at) VALUES ('rejudge', 'm099_future', "
                                                                "'2030-01-01')"),
        "another application's id": lambda p: _sql(base, p, "PRAGMA application_id = 1234"),
        "0-byte file": lambda p: p.write_bytes(b""),
    }


def _commands(work: Path) -> dict[str, list[str]]:
    reviews = work / "inputs" / "base.reviews.jsonl"
    return {
        "runs": ["runs"], "decisions": ["decisions", "--run", RUN], "export": ["export", "--run", RUN],
        "review": ["review", "--run", RUN, "--decision", "1", "--label", "match", "--reviewer", "x"],
        "score": ["score", "chimera", "--gold", str(GOLD), "--pred", str(PRED), "--judge", "exact", "--run", "n"],
        "plan": ["plan", "--run", RUN], "queue": ["queue", "--run", RUN], "estimate": ["estimate", "--run", RUN],
        "agreement": ["agreement", "--run", RUN], "export-reviews": ["export-reviews", "--run", RUN],
        "import-reviews": ["import-reviews", "--run", RUN, str(reviews)],
        "delete-run": ["delete-run", "--run", RUN, "--force"],
        "stability": ["stability", "--run", RUN, "--judge", "exact", "--sample", "3"],
        "compare": ["compare", "--run", RUN, "--other", "other"], "demo": ["demo"],
    }


def _own(src: Path | Callable[[Path], None], work: Path, name: str) -> Path:
    """A copy (or a freshly written state) in a folder of its own: the case's database, watched byte for byte."""
    folder = work / "cases" / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    p = folder / "x.db"
    if isinstance(src, Path):
        _copy(src, p)
    else:
        src(p)
    return p


def _on(db: Path, argv: list[str]) -> list[str]:
    return [argv[0], "--db", str(db), *argv[1:]]


# ---------------------------------------------------------------- the dashboard


def _dashboard(db: Path) -> tuple[int, str]:
    """The dashboard's first page on `db` through AppTest: (2, "error: <the page's error>") for one clear error
    page, (1, what went wrong) for an exception or anything else."""
    import re

    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import AppTest

    original = PagesManager.__init__

    def init(self, *args, **kwargs):  # noqa: ANN001, ANN202 - as tests/app/conftest.py: app.py navigates
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    saved, cwd = os.environ.get("REJUDGE_DB"), os.getcwd()
    PagesManager.__init__ = init  # type: ignore[method-assign]
    os.environ["REJUDGE_DB"] = str(db)
    os.chdir(ROOT)
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    finally:
        PagesManager.__init__ = original  # type: ignore[method-assign]
        os.chdir(cwd)
        if saved is None:
            os.environ.pop("REJUDGE_DB", None)
        else:
            os.environ["REJUDGE_DB"] = saved
    if at.exception:
        return 1, "Traceback (most recent call last): " + " ".join(str(e.value)[:200] for e in at.exception)
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    if len(errors) == 1 and errors[0].startswith("Cannot open the database."):
        return 2, f"error: {errors[0]}"
    return 0, f"page shown without a refusal: {errors}"


# ---------------------------------------------------------------- reviews


def _review_lines(base: Path) -> list[dict]:
    from audit.review.reviews_io import export_reviews
    from audit.store.database import open_db

    copy = _copy(base, base.parent / "export-source" / "x.db")
    db = open_db(copy)
    lines = [json.loads(x) for x in export_reviews(db, RUN).splitlines()]
    db.conn.close()
    return lines


def _write(p: Path, rows: list[dict]) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def _ideation_db(work: Path) -> tuple[Path, dict]:
    """A database with the ideation demo run `idea` and one review of a comparison by `ana` (label a)."""
    from audit.demo import DATA as DEMO
    from audit.review.reviews import add_review
    from audit.runs import score_run
    from audit.store.database import open_db
    from audit.views import decisions
    from scoring.families import TASKS

    p = work / "prepared" / "ideation.db"
    p.parent.mkdir(parents=True, exist_ok=True)
    for f in p.parent.glob("ideation.db*"):
        f.unlink()
    db = open_db(p)
    demo = TASKS["ideation"].demo_runs(DEMO)[0]
    score_run(db, "ideation", demo.inputs, demo.judge, run="idea")
    d = next(x for x in decisions(db, "idea") if x["kind"] == "comparison")
    add_review(db, "idea", d["id"], "a", "ana")
    db.conn.close()
    _checkpointed(p)
    return p, d


def _labels(db: Path, decision_id: int) -> dict[str, str]:
    c = sqlite3.connect(db)
    try:
        return dict(c.execute("SELECT reviewer, label FROM reviews WHERE decision_id = ? ORDER BY id",
                              [decision_id]).fetchall())
    finally:
        c.close()


def _review_count(db: Path) -> int:
    c = sqlite3.connect(db)
    try:
        return c.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    finally:
        c.close()


def _import_cases(work: Path, base: Path) -> list[Case2]:
    lines = _review_lines(base)
    inputs = work / "inputs"
    fresh = lines[0] | {"uid": "r2-future", "reviewer": "ana"}
    out = [
        Case2(IMPORT, "a review dated 2999", ["import-reviews", "--db", "{db}", "--run", RUN, str(
            _write(inputs / "future.jsonl", [fresh | {"created": "2999-01-01T00:00:00+00:00"}]))]),
        Case2(IMPORT, "a review dated an hour ahead of the clock", ["import-reviews", "--db", "{db}", "--run", RUN,
              str(_write(inputs / "hour.jsonl", [fresh | {"created": _ahead(3600)}]))]),
        Case2(IMPORT, "a stored uid with another label (tampered export)", ["import-reviews", "--db", "{db}",
              "--run", RUN, str(_write(inputs / "tampered.jsonl", [
                  lines[0] | {"label": "match" if lines[0]["label"] != "match" else "no-match"}, *lines[1:]]))]),
        Case2(IMPORT, "a stored uid with another reviewer", ["import-reviews", "--db", "{db}", "--run", RUN, str(
            _write(inputs / "tampered-reviewer.jsonl", [lines[0] | {"reviewer": "mallory"}]))]),
        Case2(IMPORT, "one uid twice in the file with two labels", ["import-reviews", "--db", "{db}", "--run", RUN,
              str(_write(inputs / "twice.jsonl", [fresh | {"uid": "r2-twice", "label": "match"},
                                                  fresh | {"uid": "r2-twice", "label": "no-match"}]))]),
        Case2(IMPORT, "the untouched export again (duplicates skipped)", ["import-reviews", "--db", "{db}", "--run",
              RUN, str(_write(inputs / "same.jsonl", lines))], expect="ok",
              check=lambda _w, db, _e: None if _review_count(db) == len(lines) else "reviews were added"),
    ]
    if not IDEATION:
        return out
    idea, d = _ideation_db(work)
    mine = next(x for x in _review_lines_of(idea, "idea") if x["reviewer"] == "ana")
    swapped = mine | {"left": mine["right"], "right": mine["left"]}
    out.append(Case2(IMPORT, "ideation: a stored comparison resent with first/second swapped, label kept",
                     ["import-reviews", "--db", str(own := _own(idea, work, "idea-swapped")), "--run", "idea",
                      str(_write(inputs / "idea-swapped.jsonl", [swapped]))], watch=[own.parent]))
    reoriented = _own(idea, work, "idea-reoriented")
    out.append(Case2(IMPORT, "ideation: a new comparison review written first/second swapped is re-oriented",
                     ["import-reviews", "--db", str(reoriented), "--run", "idea", str(_write(
                         inputs / "idea-new.jsonl", [swapped | {"uid": "r2-bo", "reviewer": "bo"}]))], expect="ok",
                     check=lambda _w, _db, _e: None if _labels(reoriented, d["id"]).get("bo") == "b" else
                     f"bo's label {_labels(reoriented, d['id']).get('bo')!r}, expected 'b' (re-oriented)"))
    return out


def _review_lines_of(db: Path, run: str) -> list[dict]:
    from audit.review.reviews_io import export_reviews
    from audit.store.database import open_db

    copy = _copy(db, db.parent / f"{db.stem}-export" / "x.db")
    conn = open_db(copy)
    lines = [json.loads(x) for x in export_reviews(conn, run).splitlines()]
    conn.conn.close()
    return lines


def _ahead(seconds: int) -> str:
    from datetime import UTC, datetime, timedelta

    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


# ---------------------------------------------------------------- plan, queue and sample draws


def _planned(work: Path, base: Path) -> tuple[Path, Path, dict, str]:
    """(a copy with a plan, the same with the served block reviewed by hand, the served pick, a later block's
    decision id)."""
    from audit.review.reviews import add_review
    from audit.review.sampling import create_plan, load_plan, next_sample
    from audit.store.database import open_db

    planned = _copy(base, work / "prepared" / "planned.db")
    db = open_db(planned)
    create_plan(db, RUN, seed=1)
    served = next_sample(db, RUN)
    plan = load_plan(db, RUN)
    later = next(b for b in reversed(plan.blocks) if b.stratum == served["stratum"] and b.id != served["doc"])
    db.conn.close()
    _checkpointed(planned)
    handed = _copy(planned, work / "prepared" / "handed.db")
    db = open_db(handed)
    for dec in served["decisions"]:
        add_review(db, RUN, dec, "no-match", "ana")
    db.conn.close()
    _checkpointed(handed)
    return planned, handed, served, later.units[0]


def _sampled(db: Path) -> int:
    c = sqlite3.connect(db)
    try:
        return c.execute("SELECT COUNT(*) FROM reviews WHERE sampled = 1").fetchone()[0]
    finally:
        c.close()


def _sample_cases(work: Path, base: Path) -> list[Case2]:
    planned, handed, served, later = _planned(work, base)
    out = []
    for value in ("0", "-1", "nan", "inf", "1e308"):
        own = _own(planned, work, f"hw{value}")
        out.append(Case2(SAMPLE, f"queue --half-width {value}", ["queue", "--db", str(own), "--run", RUN,
                                                                 f"--half-width={value}"], watch=[own.parent]))
    out.append(Case2(SAMPLE, "queue --half-width 0.05", ["queue", "--db", str(_own(planned, work, "hw-ok")), "--run",
                                                         RUN, "--half-width", "0.05"], expect="ok",
                     check=lambda *_: None))
    out.append(Case2(SAMPLE, "plan --seed 2**70", ["plan", "--db", "{db}", "--run", RUN, "--seed", str(2**70)]))
    out.append(Case2(SAMPLE, "plan --seed -1", ["plan", "--db", "{db}", "--run", RUN, "--seed", "-1"]))
    review = ["--run", RUN, "--label", "match", "--reviewer", "bo", "--sampled", "--decision"]
    out.append(Case2(SAMPLE, "review --sampled without a plan", ["review", "--db", "{db}", *review,
                                                                  str(served["decisions"][0])]))
    own = _own(planned, work, "later")
    out.append(Case2(SAMPLE, "review --sampled on a block the queue does not serve",
                     ["review", "--db", str(own), *review, str(later)], watch=[own.parent]))
    own = _own(handed, work, "handed")
    out.append(Case2(SAMPLE, "review --sampled on a block reviewed by hand",
                     ["review", "--db", str(own), *review, str(served["decisions"][0])], watch=[own.parent]))
    ok = _own(planned, work, "served")
    out.append(Case2(SAMPLE, "review --sampled on the block the queue serves",
                     ["review", "--db", str(ok), *review, str(served["decisions"][0])], expect="ok",
                     check=lambda *_: None if _sampled(ok) == 1 else f"{_sampled(ok)} sampled reviews stored"))
    return out


# ---------------------------------------------------------------- judge failures


def _runs(db: Path) -> list[str]:
    c = sqlite3.connect(db)
    try:
        return [r[0] for r in c.execute("SELECT name FROM runs ORDER BY name")]
    finally:
        c.close()


def _with_server(work: Path, name: str, base: Path, argv: list[str], **server: object) -> Callable:
    """A call: the CLI against the scripted server on a private copy (the judge cache may keep answers: that is a
    write the refusal allows), then whether a run or a check was stored anyway (silent acceptance)."""
    def call(_w: Path, _db: Path) -> tuple[int, str]:
        from devtools.judge_server import JudgeServer

        own = _own(base, work, name)
        before = _runs(own), _stability(own)
        with JudgeServer(**server) as srv:  # type: ignore[arg-type]
            env = {**os.environ, "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-r2",
                   "REJUDGE_JUDGE_BACKOFF": "0.05"}
            p = subprocess.run([sys.executable, "-m", "audit", argv[0], "--db", str(own), *argv[1:]], cwd=ROOT,
                               capture_output=True, text=True, env=env, timeout=120)
        if p.returncode != 0 and (_runs(own), _stability(own)) != before:
            return 0, p.stderr + " (and something was stored)"
        return p.returncode, p.stderr
    return call


def _stability(db: Path) -> int:
    c = sqlite3.connect(db)
    try:
        return c.execute("SELECT COUNT(*) FROM stability_answers").fetchone()[0]
    finally:
        c.close()


def _judge_cases(work: Path, base: Path) -> list[Case2]:
    inputs = work / "inputs"
    log_lines = LOG.read_text(encoding="utf-8").splitlines()
    sparse = inputs / "judge_sparse.jsonl"
    sparse.write_text("".join(x + "\n" for x in log_lines[: max(1, len(log_lines) // 10)]), encoding="utf-8")
    empty, garbage = inputs / "results_empty.jsonl", inputs / "results_garbage.jsonl"
    empty.write_text("")
    garbage.write_text("{not json\n" + json.dumps({"custom_id": "nope", "response": {}}) + "\n")
    batch = ["--task", "chimera", "--gold", str(GOLD), "--pred", str(PRED), "--judge", "openai:gpt-4o-mini"]
    out_file = inputs / "requests.jsonl"
    no_key = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    score = ["score", "chimera", "--gold", str(GOLD), "--pred", str(PRED), "--judge", "openai:test-model", "--run",
             "dying"]
    return [
        Case2(JUDGE, "score: a replay log answering 10% of the questions", [
            "score", "chimera", "--db", "{db}", "--gold", str(GOLD), "--pred", str(PRED), "--judge",
            f"replay:{sparse}", "--run", "sparse"], watch=[sparse]),
        Case2(JUDGE, "stability --temperature nan", ["stability", "--db", "{db}", "--run", RUN, "--judge", "exact",
                                                     "--temperature", "nan"]),
        Case2(JUDGE, "stability --repeats 0 (nothing would be sent)", ["stability", "--db", "{db}", "--run", RUN,
                                                                       "--judge", "exact", "--repeats", "0"]),
        Case2(JUDGE, "judge-batch import of an empty file", ["judge-batch", "--db", "{db}", "import", str(empty),
                                                              *batch], env={"OPENAI_API_KEY": "sk-r2"}),
        Case2(JUDGE, "judge-batch import of a file that imports nothing", [
            "judge-batch", "--db", "{db}", "import", str(garbage), *batch], env={"OPENAI_API_KEY": "sk-r2"}),
        Case2(JUDGE, "judge-batch import of an empty file, no OPENAI_API_KEY", [
            "judge-batch", "--db", "{db}", "import", str(empty), *batch], env=no_key),
        Case2(JUDGE, "judge-batch export without OPENAI_API_KEY (it sends nothing)", [
            "judge-batch", "--db", "{db}", "export", *batch, "--out", str(out_file)], env=no_key, expect="ok",
            check=lambda *_: None if out_file.is_file() and out_file.read_text().count("\n") > 0 else
            "no request lines written"),
        Case2(JUDGE, "score: the judge server dies after 3 answers", None,
              call=_with_server(work, "dying", base, score, die_after=3)),
        Case2(JUDGE, "score: the judge server answers 500 to everything", None,
              call=_with_server(work, "always-500", base, score, always_status=500)),
        Case2(JUDGE, "stability: every request fails", None,
              call=_with_server(work, "stab-500", base, ["stability", "--run", RUN, "--judge", "openai:test-model",
                                                         "--repeats", "2", "--sample", "5"], always_status=500)),
    ]


# ---------------------------------------------------------------- all


def cases(work: Path, base_db: Path) -> list[Case2]:
    reviews = _review_lines(base_db)
    _write(work / "inputs" / "base.reviews.jsonl", reviews)
    out: list[Case2] = []
    for state, make in damaged_states(base_db).items():
        source = work / "prepared" / "states" / f"{abs(hash(state))}.db"
        source.parent.mkdir(parents=True, exist_ok=True)
        make(source)
        slug = "".join(ch if ch.isalnum() else "-" for ch in state)
        for cmd, argv in _commands(work).items():
            own = _own(lambda p, s=source: shutil.copyfile(s, p), work, f"{slug}-{cmd}")
            out.append(Case2(DAMAGED, f"{state}: {cmd}", _on(own, argv), watch=[own.parent]))
        if state in ("three pages overwritten (header intact)", "effective table gone", "0-byte file",
                     "newer schema stamp (user_version)"):
            own = _own(lambda p, s=source: shutil.copyfile(s, p), work, f"{slug}-dashboard")
            out.append(Case2(DAMAGED, f"{state}: dashboard", None, call=lambda _w, _db, d=own: _dashboard(d),
                             watch=[own.parent]))
    return [*out, *_import_cases(work, base_db), *_sample_cases(work, base_db), *_judge_cases(work, base_db)]
