"""Many sessions of one server open the same WAL database at once while others write (the dashboard's case)."""

from __future__ import annotations

import threading

from audit.review.reviews import add_review
from audit.store.database import open_db
from audit.views import decisions


def test_concurrent_opens_and_writes_do_not_fail(db_with_run, db_path):
    ids = [d["id"] for d in decisions(db_with_run, "mixed")][:40]
    errors: list[BaseException] = []

    def session(k: int) -> None:
        try:
            for i in range(15):
                db = open_db(db_path)
                list(db.query("SELECT COUNT(*) FROM reviews"))
                add_review(db, "mixed", ids[(k * 15 + i) % len(ids)], "match" if i % 2 else "no-match", f"r{k}")
                db.conn.close()
        except BaseException as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=session, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert db_with_run.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 60
