"""Issue 27: a handful of the store's round-2 cases (devtools/hardening_cases/store.py) through the runner's own
judging code (`devtools.hardening_runner.run_case2`, in-process CLI), plus the rule itself: a refusal that leaves a
file changed, a refusal case that exits 0 and an `ok` case whose check fails are each counted where the bench counts
them."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import open_db
from devtools.hardening_cases import Case2
from devtools.hardening_cases import store as store_cases
from devtools.hardening_runner import judge_case2, round2_modules, round2_rows, run_case2
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED

WANTED = ("three pages overwritten (header intact): score", "effective table gone: score",
          "half-migrated, rollback journal: runs", "newer schema stamp (user_version): review",
          "a review dated 2999", "a stored uid with another label (tampered export)", "queue --half-width nan",
          "queue --half-width 1e308", "plan --seed 2**70", "review --sampled without a plan",
          "judge-batch export without OPENAI_API_KEY (it sends nothing)", "stability --temperature nan")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """As bench/hardening.py's make_base: run `base` (replay judge) with 3 reviews, and run `other`."""
    p = tmp_path_factory.mktemp("r2") / "base.db"
    db = open_db(p)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="base")
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, "exact", run="other")
    for i, label in ((1, "no-match"), (2, "match"), (3, "no-match")):
        add_review(db, "base", i, label, "seed")
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return p


def test_the_store_module_is_gathered():
    assert "store" in round2_modules()


def test_a_handful_of_store_cases_are_as_expected(base, tmp_path, monkeypatch):
    import audit.cli  # noqa: F401 - the runner forks after importing the CLI, as the bench does

    monkeypatch.setattr(store_cases, "IDEATION", False)  # the ideation cases score a demo run first: the bench's
    work = tmp_path / "work"
    work.mkdir()
    cases = {c.name: c for c in store_cases.cases(work, base)}
    assert set(WANTED) <= set(cases)
    outcomes = [run_case2(cases[name], "store", work, base, True, n) for n, name in enumerate(WANTED)]
    bad = [(o.case.name, o.problem) for o in outcomes if not o.good]
    assert bad == []
    assert round2_rows(outcomes)[-1][1:] == (len(WANTED), len(WANTED), 0, 0, 0, 0)


def _case(**kw) -> Case2:
    return Case2("g", "n", ["runs"], **kw)


def test_the_rule_counts_a_refusal_that_changed_a_file_a_silent_acceptance_and_a_failed_check(tmp_path):
    db = tmp_path / "x.db"
    modified = judge_case2(_case(), "m", 2, "error: no", {"f": "a"}, {"f": "b"}, False, tmp_path, db)
    assert not modified.good and modified.modified == ["f"]
    partial = judge_case2(_case(), "m", 2, "error: no", {}, {}, True, tmp_path, db)
    assert not partial.good and partial.partial
    silent = judge_case2(_case(), "m", 0, "", {}, {}, False, tmp_path, db)
    assert not silent.good and silent.silent
    internal = judge_case2(_case(), "m", 1, "error: internal error (KeyError: 'x'); please report it", {}, {}, False,
                           tmp_path, db)
    assert not internal.good and internal.traceback
    failed = judge_case2(_case(expect="ok", check=lambda *_: "secret found"), "m", 0, "", {}, {}, False, tmp_path, db)
    assert not failed.good and failed.silent and failed.problem == "secret found"
    fine = judge_case2(_case(expect="ok", check=lambda *_: None), "m", 0, "", {"f": "a"}, {"f": "b"}, False,
                       tmp_path, db)
    assert fine.good  # an ok case may write (a new review): only refusals must leave files alone


def test_a_damaged_copy_is_refused_and_left_byte_identical(base, tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    p = folder / "x.db"
    p.write_bytes(store_cases.overwrite_pages(base.read_bytes()))
    c = sqlite3.connect(f"file:{p}?mode=ro&immutable=1", uri=True)
    try:  # the damage is real: SQLite finds it
        with pytest.raises(sqlite3.DatabaseError, match="malformed"):
            c.execute("PRAGMA quick_check").fetchall()
    finally:
        c.close()
    case = Case2("g", "damaged: review", ["review", "--db", str(p), "--run", "base", "--decision", "1", "--label",
                                           "match", "--reviewer", "x"], watch=[folder])
    outcome = run_case2(case, "store", tmp_path, base, True, 1)
    assert outcome.good, outcome.problem
    shutil.rmtree(folder)
