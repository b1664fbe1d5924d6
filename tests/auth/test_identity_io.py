"""Who reviewed in a merge: export-reviews carries the signed-in identity (subject, e-mail, oidc/local); an import
keeps the reviewer names but stores a file's signed-in claims as local names (it cannot verify them); a line
without identity (an older export) is from local mode; a changed signed-in identity on a stored uid is refused."""

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


def test_an_import_keeps_names_but_stores_a_file_s_signed_in_identities_as_local(tmp_path):
    a, b = scored(tmp_path / "a.db"), scored(tmp_path / "b.db")
    add_review(a, "mixed", 1, "no-match", "rita@lab.org", auth_subject="sub-rita", auth_email="rita@lab.org")
    add_review(a, "mixed", 2, "match", "ana")  # local mode: an unverified name
    add_review(a, "mixed", 3, "match", "adam@lab.org", role="adjudicator", auth_subject="sub-adam",
               auth_email="adam@lab.org")
    exported = export_reviews(a, "mixed")
    assert all(set(IDENTITY) <= set(json.loads(line)) for line in exported.splitlines())
    (tmp_path / "a.jsonl").write_text(exported)
    res = import_reviews(b, "mixed", tmp_path / "a.jsonl")
    assert res["imported"] == 3 and res["stored_as_local"] == 2
    # another database cannot verify the file's signed-in identities: the names stay, as unverified local names
    assert [r[:3] for r in _rows(b)] == [r[:3] for r in _rows(a)]
    assert {r[3:] for r in _rows(b)} == {(None, None, "local")}
    (tmp_path / "b.jsonl").write_text(export_reviews(b, "mixed"))
    assert import_reviews(a, "mixed", tmp_path / "b.jsonl")["skipped_duplicates"] == 3  # merged back: the same
    assert {r[5] for r in _rows(a)} == {"oidc", "local"}  # a's own signed-in rows keep their identity


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
    ({"auth_mode": "oidc", "auth_subject": "sub-olga"}, "by another identity"),
])
def test_a_changed_signed_in_identity_on_a_stored_uid_is_refused(tmp_path, change, message):
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


def test_a_forged_signed_in_line_is_stored_as_a_local_name_and_sampled_only_where_a_plan_draws(tmp_path):
    """A hand-written file claims `auth_mode: oidc` for the owner and `sampled: true`: a local import cannot verify
    the one, and the other is true only where this run's sample queue would serve the document (issue 34)."""
    from audit.review.sampling import create_plan, next_sample

    a, b, c = scored(tmp_path / "a.db"), scored(tmp_path / "b.db"), scored(tmp_path / "c.db")
    create_plan(c, "mixed", seed=1)
    first = next_sample(c, "mixed")["decisions"][0]  # the ids are the same in the three databases
    add_review(a, "mixed", first, "match", "x")
    line = json.loads(export_reviews(a, "mixed")) | {"reviewer": "olga@lab.org", "auth_mode": "oidc",
                                                     "auth_subject": "sub-olga", "auth_email": "olga@lab.org",
                                                     "sampled": True}
    (tmp_path / "forged.jsonl").write_text(json.dumps(line) + "\n")
    res = import_reviews(b, "mixed", tmp_path / "forged.jsonl")  # b has no plan
    assert (res["imported"], res["stored_as_local"], res["not_sample_draws"]) == (1, 1, 1)
    assert b.execute("SELECT reviewer, auth_subject, auth_email, auth_mode, sampled FROM reviews").fetchall() == [
        ("olga@lab.org", None, None, "local", 0)]
    res = import_reviews(c, "mixed", tmp_path / "forged.jsonl")  # c's queue serves that document first
    assert res["not_sample_draws"] == 0
    assert c.execute("SELECT sampled FROM reviews").fetchone()[0] == 1
