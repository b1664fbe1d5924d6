"""A run's counts index (`document_counts`, m024): every run's original counts once per distinct value.

Invariants: for every run of every family, the index gives each document's counts equal to its `documents.counts`, in
input order; documents with equal counts share one decoded object; a database stored before m024 gets the index on
opening, equal to what scoring writes now; deleting a run deletes its index. And the order the sampled estimators sum
documents in (document ids sorted by Python) is the order the store lists a run's documents by its primary key, for
any text."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import AuditError
from audit.runs import delete_run
from audit.store.counts_index import read_counts_index
from audit.store.database import open_db
from audit.store.migrations import SCHEMA_VERSION
from tests.conftest import copy_of

M024 = "m024_document_counts"


def _documents(db, run_id: int) -> list[tuple[str, dict]]:
    return [(d, json.loads(c)) for d, c in db.execute(
        "SELECT doc_id, counts FROM documents WHERE run_id = ? ORDER BY idx", [run_id])]


def test_every_demo_run_reads_its_documents_counts(tmp_path, demo_template):
    db = open_db(copy_of(demo_template, tmp_path / "demo.db"))
    runs = db.execute("SELECT id, task FROM runs ORDER BY id").fetchall()
    assert {task for _, task in runs} >= {"chimera", "retrieval", "litxbench", "ideation"}
    for run_id, _ in runs:
        read = read_counts_index(db, run_id)
        assert read == _documents(db, run_id)
        by_text: dict[str, int] = {}
        for (_, counts), (text,) in zip(read, db.execute(
                "SELECT counts FROM documents WHERE run_id = ? ORDER BY idx", [run_id]), strict=True):
            assert by_text.setdefault(text, id(counts)) == id(counts)  # equal counts: one object
        assert len(by_text) == len({id(c) for _, c in read})  # and unequal ones never share


def test_a_database_stored_before_gets_the_same_index(tmp_path, demo_template):
    path = copy_of(demo_template, tmp_path / "demo.db")
    db = open_db(path)
    written = db.execute("SELECT run_id, doc_ids, counts, doc_counts FROM document_counts ORDER BY run_id").fetchall()
    db.execute("DROP TABLE document_counts")
    db.execute(f"DELETE FROM _sqlite_migrations WHERE name = '{M024}'")
    db.execute("PRAGMA user_version = 23")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    db = open_db(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT run_id, doc_ids, counts, doc_counts FROM document_counts "
                      "ORDER BY run_id").fetchall() == written


def test_deleting_a_run_deletes_its_index_and_a_missing_one_is_named(tmp_path, mixed_template):
    db = open_db(copy_of(mixed_template, tmp_path / "m.db"))
    run_id, = db.execute("SELECT id FROM runs WHERE name = 'mixed'").fetchone()
    delete_run(db, "mixed")
    assert db.execute("SELECT COUNT(*) FROM document_counts").fetchone()[0] == 0
    with pytest.raises(AuditError, match=f"run id {run_id}: its counts index"):
        read_counts_index(db, run_id)


def test_an_index_that_does_not_match_its_documents_is_named(tmp_path, mixed_template):
    db = open_db(copy_of(mixed_template, tmp_path / "m.db"))
    run_id, = db.execute("SELECT id FROM runs WHERE name = 'mixed'").fetchone()
    db.execute("UPDATE document_counts SET doc_counts = substr(doc_counts, 1, 8) WHERE run_id = ?", [run_id])
    with pytest.raises(AuditError, match="does not match its documents"):
        read_counts_index(db, run_id)


_ids = st.lists(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=6), min_size=1,
                max_size=40, unique=True)


@settings(max_examples=60, deadline=None)
@given(_ids)
def test_python_sorts_document_ids_as_the_store_lists_them(ids):
    """`_original_doc_counts` sorts document ids in Python where it listed them by the primary key before."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE documents (run_id INTEGER NOT NULL, doc_id TEXT NOT NULL, idx INTEGER NOT NULL, "
                 "PRIMARY KEY (run_id, doc_id))")
    conn.executemany("INSERT INTO documents VALUES (1, ?, ?)", [(d, i) for i, d in enumerate(ids)])
    listed = [d for d, in conn.execute("SELECT doc_id FROM documents WHERE run_id = ?", [1])]
    assert listed == sorted(ids)


def test_the_sampled_state_sums_in_document_id_order(tmp_path, mixed_template):
    from audit.review.sampling import _original_doc_counts
    from audit.views import load_view

    db = open_db(copy_of(mixed_template, tmp_path / "m.db"))
    view = load_view(db, "mixed")
    listed = [d for d, in db.execute("SELECT doc_id FROM documents WHERE run_id = ?", [view.id])]
    assert list(_original_doc_counts(view)) == listed
    assert dict(_original_doc_counts(view)) == dict(_documents(db, view.id))

