"""Many reviews (issue #38, CHIMERA with a million imported): reading the audited state after a review does not read
every review again, and an import holds a batch of lines at a time, not the file, while a bad line anywhere
still stores nothing."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest

from audit.rescoring import audit_run
from audit.review import reviews_io
from audit.review.reviews import add_review
from audit.review.reviews_io import import_reviews
from audit.views import load_view
from devtools.sqlite_files import vm_steps
from scoring.errors import InputError

LABELS = ("match", "no-match")


def _lines(db, n: int, seed: int = 0, *, start: int = 0) -> list[dict]:
    """`n` review lines (the export format) over the run's decisions, reviewer k labelling every decision in its
    k-th pass."""
    decs = db.execute("SELECT doc_id, kind, type, left, right FROM decisions WHERE run_id = 1 ORDER BY id").fetchall()
    rng = random.Random(seed)
    out = []
    for i in range(start, start + n):
        doc, kind, typ, left, right = decs[i % len(decs)]
        out.append({"uid": f"u-{i}", "doc": doc, "kind": kind, "type": typ, "left": left, "right": right,
                    "reviewer": f"reviewer{i // len(decs)}", "label": rng.choice(LABELS), "role": "reviewer",
                    "note": None, "blind": False, "created": f"2026-01-01T00:{i // 3600 % 60:02d}:{i % 60:02d}+00:00"})
    return out


def _write(path: Path, lines: list) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def _review_then_read(db) -> int:
    d = db.execute("SELECT id FROM decisions WHERE run_id = 1 ORDER BY id LIMIT 1").fetchone()[0]
    add_review(db, "mixed", d, "match", "after")
    return vm_steps(db, lambda: load_view(db, "mixed").audit.metrics)


def test_audited_metrics_after_a_review_do_not_read_every_review(db_with_run, tmp_path):
    """The read of the audited state after one review costs the same with 10x the reviews stored (it read every
    review the run sees, through `run_reviews`, to count them: 8.9 s at a million)."""
    db = db_with_run
    import_reviews(db, "mixed", _write(tmp_path / "few.jsonl", _lines(db, 300)))
    few = _review_then_read(db)
    import_reviews(db, "mixed", _write(tmp_path / "many.jsonl", _lines(db, 3000, start=300)))
    many = _review_then_read(db)
    assert many < 1.5 * few + 50, (few, many)
    stored, recount = audit_run(db, "mixed"), audit_run(db, "mixed", rebuild=True)
    assert stored.review_counts == recount.review_counts and stored.metrics == recount.metrics
    assert stored.review_counts["reviews"] == 3302


def _import_peak(db, path: Path) -> int:
    tracemalloc.start()
    try:
        import_reviews(db, "mixed", path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_an_import_holds_a_batch_of_lines_not_the_file(db_path, mixed_template, tmp_path, monkeypatch):
    """Peak memory of an import grows far slower than its file (it kept every line's row and every review until
    the end: 1.8 GB for a million lines)."""
    from audit.store.database import open_db
    from tests.conftest import copy_of

    monkeypatch.setattr(reviews_io, "IMPORT_BATCH", 200)
    monkeypatch.setattr("audit.rescoring._APPLY_CHUNK", 20)
    peaks = []
    for n in (2_000, 8_000):
        db = open_db(copy_of(mixed_template, tmp_path / f"{n}.db"))
        peaks.append(_import_peak(db, _write(tmp_path / f"{n}.jsonl", _lines(db, n))))
        assert db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == n
        assert audit_run(db, "mixed").review_counts == audit_run(db, "mixed", rebuild=True).review_counts
        db.conn.close()
    assert peaks[1] < 2 * peaks[0], peaks


@pytest.mark.parametrize("bad", ["not json", {"uid": "u-5"}, "wrong label", "changed uid"])
def test_a_bad_line_in_a_later_batch_stores_nothing(db_with_run, tmp_path, monkeypatch, bad):
    db = db_with_run
    monkeypatch.setattr(reviews_io, "IMPORT_BATCH", 4)
    add_review(db, "mixed", 1, "match", "ana")
    before = (db.execute("SELECT * FROM reviews ORDER BY id").fetchall(),
              db.execute("SELECT * FROM audit_state ORDER BY run_id").fetchall(),
              db.execute("SELECT * FROM effective ORDER BY decision_id").fetchall())
    lines: list = _lines(db, 20)
    if bad == "wrong label":
        lines[13] = lines[13] | {"label": "maybe"}
    elif bad == "changed uid":  # the uid of line 2 again, other content: a changed file
        lines[13] = lines[1] | {"label": "no-match" if lines[1]["label"] == "match" else "match"}
    else:
        lines[13] = bad if isinstance(bad, str) else bad
    with pytest.raises(InputError, match=r"bad\.jsonl:14:"):
        import_reviews(db, "mixed", _write(tmp_path / "bad.jsonl", lines))
    assert (db.execute("SELECT * FROM reviews ORDER BY id").fetchall(),
            db.execute("SELECT * FROM audit_state ORDER BY run_id").fetchall(),
            db.execute("SELECT * FROM effective ORDER BY decision_id").fetchall()) == before


def test_a_line_repeated_in_a_later_batch_is_skipped(db_with_run, tmp_path, monkeypatch):
    db = db_with_run
    monkeypatch.setattr(reviews_io, "IMPORT_BATCH", 3)
    lines = _lines(db, 8)
    signed = lines[0] | {"auth_mode": "oidc", "auth_subject": "sub-1", "auth_email": "a@example.org"}
    got = import_reviews(db, "mixed", _write(tmp_path / "rep.jsonl", [signed, *lines[1:], signed, lines[2]]))
    assert got == {"imported": 8, "skipped_duplicates": 2, "reoriented": 0, "stored_as_local": 1,
                   "not_sample_draws": 0}
    assert db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 8
