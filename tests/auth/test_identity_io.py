"""Who reviewed survives a merge: export-reviews carries the signed-in identity (subject, e-mail, oidc/local) and
import-reviews stores it; a line without it (an older export) is from local mode; a changed identity is refused."""

from __future__ import annotations

import json

import pytest

from audit.review.reviews import add_review
from audit.review.reviews_io import IDENTITY, export_reviews, import_reviews
from scoring.errors import InputError
from tests.store.test_reviews_io import scored

COLUMNS = "uid, reviewer, label, auth_subject, auth_email, auth_mode"


def _rows(db) -> list[tuple]:
    return sorted(db.execute(f"SELECT {COLUMNS} FROM reviews").fetchall())


def test_identity_round_trips_through_export_and_import(tmp_path):
    a, b = scored(tmp_path / "a.db"), scored(tmp_path / "b.db")
    add_review(a, "mixed", 1, "no-match", "rita@lab.org", auth_subject="sub-rita", auth_email="rita@lab.org")
    add_review(a, "mixed", 2, "match", "ana")  # local mode: an unverified name
    add_review(a, "mixed", 3, "match", "adam@lab.org", role="adjudicator", auth_subject="sub-adam",
               auth_email="adam@lab.org")
    exported = export_reviews(a, "mixed")
    assert all(set(IDENTITY) <= set(json.loads(line)) for line in exported.splitlines())
    (tmp_path / "a.jsonl").write_text(exported)
    assert import_reviews(b, "mixed", tmp_path / "a.jsonl")["imported"] == 3
    assert _rows(b) == _rows(a)
    assert {r[5] for r in _rows(b)} == {"oidc", "local"}
    (tmp_path / "b.jsonl").write_text(export_reviews(b, "mixed"))
    assert (tmp_path / "b.jsonl").read_text() == exported  # export ∘ import is the identity on the file too
    assert import_reviews(a, "mixed", tmp_path / "b.jsonl")["skipped_duplicates"] == 3


def test_an_older_export_without_identity_imports_as_local_mode(tmp_path):
    a, b = scored(tmp_path / "a.db"), scored(tmp_path / "b.db")
    add_review(a, "mixed", 1, "match", "rita@lab.org", auth_subject="sub-rita", auth_email="rita@lab.org")
    exported = export_reviews(a, "mixed").splitlines()
    lines = [{k: v for k, v in json.loads(x).items() if k not in IDENTITY} for x in exported]
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_reviews(b, "mixed", tmp_path / "old.jsonl")
    assert b.execute("SELECT auth_subject, auth_email, auth_mode FROM reviews").fetchall() == [(None, None, "local")]
    assert import_reviews(a, "mixed", tmp_path / "old.jsonl")["skipped_duplicates"] == 1  # silent on identity: same


@pytest.mark.parametrize("change, message", [
    ({"auth_email": "olga@lab.org"}, "by another identity"),
    ({"auth_mode": "local", "auth_subject": None, "auth_email": None}, "by another identity"),
])
def test_a_changed_identity_on_a_stored_uid_is_refused(tmp_path, change, message):
    a = scored(tmp_path / "a.db")
    add_review(a, "mixed", 1, "match", "rita@lab.org", auth_subject="sub-rita", auth_email="rita@lab.org")
    line = json.loads(export_reviews(a, "mixed")) | change
    (tmp_path / "t.jsonl").write_text(json.dumps(line) + "\n")
    before = _rows(a)
    with pytest.raises(InputError, match=message):
        import_reviews(a, "mixed", tmp_path / "t.jsonl")
    assert _rows(a) == before


@pytest.mark.parametrize("change, message", [
    ({"auth_mode": "admin"}, "auth_mode"),
    ({"auth_mode": "oidc", "auth_subject": None}, "needs the provider's auth_subject"),
    ({"auth_email": 7}, "auth_email"),
    ({"auth_subject": "s" * 400}, "longer than"),
])
def test_malformed_identity_fields_are_refused(tmp_path, change, message):
    a, b = scored(tmp_path / "a.db"), scored(tmp_path / "b.db")
    add_review(a, "mixed", 1, "match", "rita@lab.org", auth_subject="sub-rita", auth_email="rita@lab.org")
    line = json.loads(export_reviews(a, "mixed")) | change
    (tmp_path / "t.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match=message):
        import_reviews(b, "mixed", tmp_path / "t.jsonl")
    assert _rows(b) == []
