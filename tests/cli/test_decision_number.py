"""Issue 40.7: one decision numbering. The review card shows `#N` (the decision's number in its run); `review
--decision '#N'` labels that decision, also in a second run whose ids are not its numbers, and says `#N` back."""

from __future__ import annotations

import pytest

from audit.cli import main
from audit.store.database import open_db
from audit.views import load_view
from tests.conftest import GOLD, JUDGE_LOG, PRED_MIXED


def test_review_takes_the_number_the_card_shows(tmp_path, capsys):
    db = tmp_path / "n.db"
    for run in ("r1", "r2"):  # r2's ids start after r1's decisions: its numbers are not its ids
        assert main(["--db", str(db), "score", "chimera", "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                     "--judge", f"replay:{JUDGE_LOG}", "--run", run]) == 0
    capsys.readouterr()
    view = load_view(open_db(db), "r2")
    ids = [d["id"] for d in view.decisions()]
    number = 5
    assert ids[number - 1] != number and view.decision_numbers([ids[number - 1]]) == {ids[number - 1]: number}
    assert main(["review", "--db", str(db), "--run", "r2", "--decision", f"#{number}", "--label", "no-match",
                 "--reviewer", "ana"]) == 0
    assert capsys.readouterr().out.startswith(f"#{number} → no-match")
    stored = open_db(db).execute("SELECT decision_id FROM reviews WHERE reviewer = 'ana'").fetchall()
    assert stored == [(ids[number - 1],)]
    assert main(["review", "--db", str(db), "--run", "r2", "--decision", f"#{len(ids) + 1}", "--label",
                 "no-match", "--reviewer", "ana"]) == 2
    assert f"no decision #{len(ids) + 1}" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["#", "#x", "#0", "1.5"])
def test_a_decision_that_is_no_number_is_refused(tmp_path, capsys, bad):
    with pytest.raises(SystemExit):
        main(["review", "--db", str(tmp_path / "x.db"), "--run", "r", "--decision", bad, "--label", "match",
              "--reviewer", "a"])
    assert "--decision" in capsys.readouterr().err
