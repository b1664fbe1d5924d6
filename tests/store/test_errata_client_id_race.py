"""A flag's client id (the browser card's re-send) is stored once even when another session stores it between
add_erratum's look-up and its write: the second writer waits for the first instead of both passing the look-up
(the uid column is UNIQUE, so the loser used to fail with a bare sqlite3.IntegrityError, not an answer)."""

from __future__ import annotations

import sqlite3

import audit.review.errata as errata
from audit.review.errata import add_erratum
from audit.views import decisions


def test_a_flag_stored_by_another_session_meanwhile_is_not_an_integrity_error(db_with_run, db_path, monkeypatch):
    db = db_with_run
    doc = list(decisions(db, "mixed"))[0]["doc"]
    other = sqlite3.connect(db_path, timeout=0.2, isolation_level=None)
    real_now = errata.now
    outcome: list[str] = []

    def racing_now() -> str:  # add_erratum's timestamp is taken after its look-up, before its write
        if not outcome:
            try:
                other.execute("INSERT INTO errata (uid, run_id, doc_id, item, problem, reviewer, created) SELECT "
                              "'cid-1', id, ?, 'x', 'wrong item', 'ana', ? FROM runs WHERE name = 'mixed'",
                              [doc, real_now()])
                outcome.append("other session stored it")
            except sqlite3.OperationalError:  # locked: the look-up and the write are one transaction
                outcome.append("other session waited")
        return real_now()

    monkeypatch.setattr(errata, "now", racing_now)
    row = add_erratum(db, "mixed", doc, "x", "wrong item", "ana", client_id="cid-1")
    other.close()
    assert outcome == ["other session waited"]
    assert row["uid"] == "cid-1" and not row.get("duplicate")
    assert db.execute("SELECT COUNT(*) FROM errata WHERE uid = 'cid-1'").fetchone()[0] == 1
    again = add_erratum(db, "mixed", doc, "x", "wrong item", "ana", client_id="cid-1")
    assert again["duplicate"] and again["id"] == row["id"]
