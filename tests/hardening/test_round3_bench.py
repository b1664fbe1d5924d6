"""Issue 34: the hardening bench's round 3 gathers `devtools/hardening_cases/r3_*.py` apart from round 2, and a handful
of the data-loss cases are judged as expected by the runner's own rule (in-process CLI, as the bench forks it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.review.reviews import add_review
from audit.runs import score_run
from audit.store.database import open_db
from devtools.hardening_cases import r3_data_loss
from devtools.hardening_runner import round2_modules, round2_rows, round3_modules, run_case2
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED

WANTED = ("export --format json --out DB --force", "report --out DB-wal --force",
          "export-reviews --out DB through a symlink --force", "report --out DB through a hardlink --force",
          "export --format csv --out DB through a relative path --force",
          "export-reviews --out a copy of the run's gold --force", "score --judge-log = its gold --force",
          "report onto an existing file without --force",
          "delete-run --exported --force onto an existing file (its --force deletes reviews)",
          "export --format csv --force replaces an existing file whole", "score --judge-log /dev/full --force")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("r3b") / "base.db"
    db = open_db(p)
    score_run(db, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="base")
    for i, label in ((1, "no-match"), (2, "match"), (3, "no-match")):
        add_review(db, "base", i, label, "seed")
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return p


def test_round3_modules_are_gathered_apart_from_round2():
    assert "r3_data_loss" in round3_modules()
    assert not [m for m in round2_modules() if m.startswith("r3_")]


def test_a_handful_of_data_loss_cases_are_as_expected(base, tmp_path, monkeypatch):
    import audit.cli  # noqa: F401 - the runner forks after importing the CLI, as the bench does

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    monkeypatch.setattr(r3_data_loss, "_can_mount", lambda work: "left out in the unit test")
    work = tmp_path / "work"
    work.mkdir()
    cases = {c.name: c for c in r3_data_loss.cases(work, base)}
    assert set(WANTED) <= set(cases)
    outcomes = [run_case2(cases[name], "r3_data_loss", work, base, True, n) for n, name in enumerate(WANTED)]
    assert [(o.case.name, o.problem) for o in outcomes if not o.good] == []
    assert round2_rows(outcomes)[-1][1:] == (len(WANTED), len(WANTED), 0, 0, 0, 0)
