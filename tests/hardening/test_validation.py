"""Issue 17 items 7 and 11 (the store's side): review-import field rules, run names, deleting runs, and loaders that
stream their files or refuse them by size before reading a byte.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from audit.cli import main
from audit.errors import AuditError, UnknownRun
from audit.review.reviews import MAX_NAME_CHARS, add_review
from audit.review.reviews_io import export_reviews, import_reviews
from audit.runs import check_run_name, delete_run
from audit.store.database import open_db
from scoring.errors import InputError
from scoring.families.chimera import model
from scoring.families.chimera.load import load_gold, load_predictions
from tests.conftest import GOLD


def decision_key(db, run="mixed", n=0) -> dict:
    doc, kind, typ, left, right = db.execute(
        "SELECT doc_id, kind, type, left, right FROM decisions WHERE run_id = (SELECT id FROM runs WHERE name = ?) "
        "ORDER BY id LIMIT 1 OFFSET ?", [run, n]).fetchone()
    return {"doc": doc, "kind": kind, "type": typ, "left": left, "right": right}


def review(db, n=0, **change) -> dict:
    return {"uid": f"u{n}", **decision_key(db, n=n), "reviewer": "ana", "label": "match", "role": "reviewer",
            "note": None, "blind": False, "created": "2026-01-31T09:30:00+00:00", **change}


def write_reviews(path, rows) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def stored(db) -> list[tuple]:
    return db.execute("SELECT uid, reviewer, label, note, blind, created FROM reviews ORDER BY id").fetchall()


def test_import_fails_on_bytes_that_are_not_utf8_instead_of_storing_replacement_characters(db_with_run, tmp_path):
    f = tmp_path / "r.jsonl"
    good = json.dumps(review(db_with_run), ensure_ascii=False).encode()
    f.write_bytes(good + b"\n" + json.dumps(review(db_with_run, 1, note="caf\u00e9"), ensure_ascii=False)
                  .encode("latin-1") + b"\n")
    with pytest.raises(InputError, match=r"r\.jsonl:2: not valid UTF-8 text"):
        import_reviews(db_with_run, "mixed", f)
    assert stored(db_with_run) == []


@pytest.mark.parametrize(("blind", "ok"), [(True, 1), (False, 0), (1, 1), (0, 0), ("no", None), ("true", None),
                                           (2, None), (None, None), (0.0, None)])
def test_blind_must_be_a_boolean(db_with_run, tmp_path, blind, ok):
    f = write_reviews(tmp_path / "r.jsonl", [review(db_with_run, blind=blind)])
    if ok is None:
        with pytest.raises(InputError, match=r"r\.jsonl:1: field 'blind' must be true or false"):
            import_reviews(db_with_run, "mixed", f)
        assert stored(db_with_run) == []
    else:
        import_reviews(db_with_run, "mixed", f)
        assert stored(db_with_run)[0][4] == ok


@pytest.mark.parametrize(("created", "want"), [
    ("2026-01-31T09:30:00+00:00", "2026-01-31T09:30:00.000000+00:00"),
    ("2026-01-31T10:30:00.5+01:00", "2026-01-31T09:30:00.500000+00:00"),
    ("2026-01-31 09:30:00Z", "2026-01-31T09:30:00.000000+00:00"),
    ("2026-01-31", None), ("2026-01-31T09:30:00", None), ("31/01/2026 09:30 +00:00", None), ("soon", None),
    ("2026-02-30T09:30:00+00:00", None), ("", None),
])
def test_created_must_be_an_iso_timestamp_with_an_offset(db_with_run, tmp_path, created, want):
    f = write_reviews(tmp_path / "r.jsonl", [review(db_with_run, created=created)])
    if want is None:
        with pytest.raises(InputError, match="field 'created' must be an ISO-8601 date and time with a UTC offset"):
            import_reviews(db_with_run, "mixed", f)
    else:
        import_reviews(db_with_run, "mixed", f)
        assert stored(db_with_run)[0][5] == want


@pytest.mark.parametrize(("name", "ok"), [("r" * MAX_NAME_CHARS, True), ("r" * (MAX_NAME_CHARS + 1), False),
                                          ("  ana  ", True), ("   ", False), ("an\u200ba", False), ("a\tb", False)])
def test_reviewer_names_are_limited_the_same_way_when_imported_and_when_added(db_with_run, tmp_path, name, ok):
    f = write_reviews(tmp_path / "r.jsonl", [review(db_with_run, reviewer=name)])
    if ok:
        import_reviews(db_with_run, "mixed", f)
        add_review(db_with_run, "mixed", 1, "match", name)
        assert {r[1] for r in stored(db_with_run)} == {name.strip()}
    else:
        with pytest.raises(InputError, match=r"r\.jsonl:1: (reviewer name|a review needs)"):
            import_reviews(db_with_run, "mixed", f)
        with pytest.raises(AuditError, match="reviewer name|a review needs"):
            add_review(db_with_run, "mixed", 1, "match", name)
        assert stored(db_with_run) == []


def test_a_bad_line_anywhere_means_nothing_of_the_file_is_imported(db_with_run, tmp_path):
    rows = [review(db_with_run, n) for n in range(5)]
    rows[3]["role"] = "boss"
    with pytest.raises(InputError, match=r"r\.jsonl:4: role must be one of"):
        import_reviews(db_with_run, "mixed", write_reviews(tmp_path / "r.jsonl", rows))
    assert stored(db_with_run) == []


def test_export_then_import_round_trips_with_blind_as_a_boolean(db_with_run, tmp_path, db_path):
    add_review(db_with_run, "mixed", 1, "no-match", "ana", blind=True, note="=1+1")
    add_review(db_with_run, "mixed", 2, "match", "bo")
    text = export_reviews(db_with_run, "mixed")
    assert [json.loads(x)["blind"] for x in text.splitlines()] == [True, False]
    other = open_db(tmp_path / "other.db")
    from audit.runs import score_run
    from tests.conftest import JUDGE_LOG, PRED_MIXED

    score_run(other, "chimera", {"gold": str(GOLD), "pred": str(PRED_MIXED)}, f"replay:{JUDGE_LOG}", run="mixed")
    (tmp_path / "r.jsonl").write_text(text, encoding="utf-8")
    assert import_reviews(other, "mixed", tmp_path / "r.jsonl") == {"imported": 2, "skipped_duplicates": 0,
                                                                      "reoriented": 0, "stored_as_local": 0,
                                                                      "not_sample_draws": 0}
    assert stored(other) == stored(db_with_run)


@pytest.mark.parametrize("name", ["", " ", "   ", "\t", "\n", "\u3000", " \u00a0 ", "a ", " a", "a\u200bb",
                                  "../x", "a/b", "a\\b", ".", "..", "x" * 121])
def test_bad_run_names_are_refused(name):
    with pytest.raises(AuditError):
        check_run_name(name)


@pytest.mark.parametrize("name", ["run-1", "GPT 4o, fuzzy 80", "x" * 120, "exp.2026-01-31", "été ✓"])
def test_good_run_names_pass(name):
    assert check_run_name(name) == name


def test_whitespace_only_run_name_from_the_cli(db_path, capsys):
    from tests.conftest import PRED_MIXED

    assert main(["score", "chimera", "--db", str(db_path), "--gold", str(GOLD), "--pred", str(PRED_MIXED),
                 "--judge", "exact", "--run", " \t "]) == 2
    assert capsys.readouterr().err == "error: a run name must not be empty or only spaces\n"
    assert open_db(db_path).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_delete_run_refuses_while_reviews_exist_unless_exported_or_forced(db_with_run, db_path, tmp_path, capsys):
    add_review(db_with_run, "mixed", 1, "no-match", "ana")
    with pytest.raises(AuditError, match="has 1 review"):
        delete_run(db_with_run, "mixed")
    assert main(["delete-run", "--db", str(db_path), "--run", "mixed"]) == 2
    assert "export them first" in capsys.readouterr().err
    out = tmp_path / "kept.jsonl"
    assert main(["delete-run", "--db", str(db_path), "--run", "mixed", "--exported", str(out)]) == 0
    capsys.readouterr()
    assert [json.loads(x)["label"] for x in out.read_text().splitlines()] == ["no-match"]
    db = open_db(db_path)
    for table in ("runs", "documents", "decisions", "reviews", "effective", "audit_state"):
        assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table
    with pytest.raises(UnknownRun):
        delete_run(db, "mixed")


def test_a_review_stored_while_delete_run_exports_refuses_the_delete(db_with_run, db_path, tmp_path, capsys,
                                                                     monkeypatch):
    """The export and the delete were two steps: a review stored between them was in neither the file nor the
    database (128 of 183 acknowledged reviews of a concurrent writer, in the newcomer pass). Now the delete refuses
    what the file misses, nothing is deleted, and the command run again writes it and deletes."""
    from audit.review import reviews_io

    add_review(db_with_run, "mixed", 1, "no-match", "ana")
    write = reviews_io.export_reviews

    def meanwhile(db, run):  # noqa: ANN001, ANN202 (a reviewer saves just after the file was read)
        out = write(db, run)
        add_review(open_db(db_path), "mixed", 2, "match", "ben")
        return out

    monkeypatch.setattr(reviews_io, "export_reviews", meanwhile)
    out = tmp_path / "kept.jsonl"
    assert main(["delete-run", "--db", str(db_path), "--run", "mixed", "--exported", str(out)]) == 2
    assert "1 review was stored while it was being exported" in capsys.readouterr().err
    assert not out.exists()  # the file this command wrote goes with the refusal: running it again works
    db = open_db(db_path)
    assert db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 2
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    monkeypatch.setattr(reviews_io, "export_reviews", write)
    assert main(["delete-run", "--db", str(db_path), "--run", "mixed", "--exported", str(out)]) == 0
    assert sorted(json.loads(x)["reviewer"] for x in out.read_text().splitlines()) == ["ana", "ben"]
    assert db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 0


def test_delete_run_keeps_gold_errata_as_it_keeps_reviews(db_with_run, db_path, tmp_path, capsys):
    """Gold errata are reviewers' work too (append-only, like reviews): a run holding them is not deleted until they
    are written out (`--exported` writes them beside the reviews) or --force is given."""
    from audit.review.errata import add_erratum, current_errata

    doc = db_with_run.execute("SELECT doc_id FROM documents ORDER BY idx LIMIT 1").fetchone()[0]
    add_erratum(db_with_run, "mixed", doc, "gold span 'x'", "wrong item", "ana", correction="y")
    standing = current_errata(db_with_run, "mixed")
    with pytest.raises(AuditError, match="has 1 gold erratum row; export them first"):
        delete_run(db_with_run, "mixed")
    assert main(["delete-run", "--db", str(db_path), "--run", "mixed"]) == 2
    assert "1 gold erratum row" in capsys.readouterr().err
    assert db_with_run.execute("SELECT COUNT(*) FROM errata").fetchone()[0] == 1
    taken = tmp_path / "errata.reviews.errata.json"
    taken.write_text("someone else's file")
    out = tmp_path / "errata.reviews.jsonl"
    assert main(["delete-run", "--db", str(db_path), "--run", "mixed", "--exported", str(out)]) == 2
    assert f"{taken}: --exported (its errata)" in capsys.readouterr().err
    assert not out.exists() and db_with_run.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    taken.unlink()
    assert main(["delete-run", "--db", str(db_path), "--run", "mixed", "--exported", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["errata_deleted"] == 1
    assert out.read_text() == ""  # no reviews: an empty reviews file
    written = json.loads(taken.read_text())["errata"]
    assert [(e["document"], e["gold_item"], e["correction"], e["uid"]) for e in written] == [
        (e["doc_id"], e["item"], e["correction"], e["uid"]) for e in standing]
    assert open_db(db_path).execute("SELECT COUNT(*) FROM errata").fetchone()[0] == 0


def test_inputs_over_the_size_limit_are_refused_before_reading(tmp_path):
    p = tmp_path / "huge.jsonl"
    with p.open("wb") as f:
        f.truncate(model.MAX_INPUT_BYTES + 1)  # sparse: reading it would take 512 MiB
    tracemalloc.start()
    with pytest.raises(InputError, match=r"huge\.jsonl: file is 512 MiB; the limit is 512 MiB"):
        load_predictions(p, ["x"])
    with pytest.raises(InputError, match="the limit is 512 MiB"):
        load_gold(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2**20


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_prediction_loader_streams_its_file(tmp_path):
    """40 MiB of blank padding lines around one prediction: holding the file would take >= 40 MiB."""
    p = tmp_path / "padded.jsonl"
    pad = " " * 2**20 + "\n"
    p.write_text(pad * 20 + '{"paper_id": "a", "relations": {}}\n' + pad * 20, encoding="utf-8")
    assert p.stat().st_size > 40 * 2**20
    peak = _peak(lambda: load_predictions(p, ["a"]))
    assert peak < p.stat().st_size / 5, peak


def test_gold_loader_streams_its_file(tmp_path):
    """20 records each carrying 2 MiB in a column the loader does not keep."""
    p = tmp_path / "gold.csv"
    pad = "x" * 2 * 2**20
    with p.open("w", encoding="utf-8") as f:
        f.write("paper_id,text,readable_relations,padding\n")
        for i in range(20):
            f.write(f"p{i},an abstract,{{}},{pad}\n")
    docs = []
    peak = _peak(lambda: docs.extend(load_gold(p)))
    assert [d.paper_id for d in docs] == [f"p{i}" for i in range(20)]
    assert peak < p.stat().st_size / 2, peak  # a few copies of one record, never the file (the old loader: 3x it)
