"""Scoring keeps one counts object per distinct counts JSON (`audit.runs._shared`, #38: 100,000 CHIMERA abstracts
have 114 distinct counts, and a dict each held 590 MB more at the peak of `score`).

Invariant, for the first demo run of every family: the stored run (run row, documents, decisions, counts index, audit
state) is the same, column for column, as the run scored with every document's counts its own object; and documents
whose counts spell the same JSON share one object."""

from __future__ import annotations

from pathlib import Path

import pytest

import audit.runs as runs
from audit.demo import demo_runs
from audit.runs import score_run
from audit.store.database import dumps, open_db

FIRST_PER_FAMILY = {task: d for task, d in reversed(demo_runs())}
VOLATILE = {"id", "run_id", "created"}


def _stored(path: Path, run: str) -> dict[str, list[tuple]]:
    db = open_db(path)
    try:
        run_id = db.execute("SELECT id FROM runs WHERE name = ?", [run]).fetchone()[0]
        out = {}
        for table, key in (("runs", "id"), ("documents", "run_id"), ("decisions", "run_id"),
                           ("document_counts", "run_id"), ("audit_state", "run_id")):
            cur = db.execute(f"SELECT * FROM {table} WHERE {key} = ? ORDER BY rowid", [run_id])
            keep = [i for i, d in enumerate(cur.description) if d[0] not in VOLATILE]
            out[table] = [tuple(row[i] for i in keep) for row in cur.fetchall()]
        return out
    finally:
        db.conn.close()


@pytest.mark.parametrize("task", sorted(FIRST_PER_FAMILY))
def test_shared_counts_store_the_same_run_as_counts_of_their_own(task, tmp_path, monkeypatch):
    demo = FIRST_PER_FAMILY[task]
    seen: dict[str, set[int]] = {}
    real = runs._shared

    def recording(shared, counts):
        text, kept = real(shared, counts)
        seen.setdefault(text, set()).add(id(kept))
        return text, kept

    monkeypatch.setattr(runs, "_shared", recording)
    score_run(open_db(tmp_path / "shared.db"), task, demo.inputs, demo.judge, run=demo.name)
    assert seen and all(len(ids) == 1 for ids in seen.values())  # one object per distinct JSON

    monkeypatch.setattr(runs, "_shared", lambda shared, counts: (dumps(counts), counts))
    score_run(open_db(tmp_path / "own.db"), task, demo.inputs, demo.judge, run=demo.name)

    shared, own = _stored(tmp_path / "shared.db", demo.name), _stored(tmp_path / "own.db", demo.name)
    assert all(own[table] for table in ("runs", "documents", "document_counts", "audit_state"))
    assert shared == own
