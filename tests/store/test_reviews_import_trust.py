"""Issue 27: a review import refuses times in the future (they would outrank the reviewer's later labels for ever)
and a uid stored with other content (a tampered file), and reads a comparison written with its sides the other way
round than the stored decision through the label scheme (a <-> b), saying so."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from audit.review.reviews import add_review
from audit.review.reviews_io import MAX_CLOCK_SKEW, export_reviews, import_reviews
from audit.runs import score_run
from audit.store.database import open_db
from audit.views import decisions
from scoring.errors import InputError
from tests.conftest import copy_of


@pytest.fixture
def chimera(tmp_path, exact_template):
    return open_db(copy_of(exact_template, tmp_path / "c.db"))


def stored(db) -> list[tuple]:
    return db.execute("SELECT uid, decision_id, reviewer, label, created FROM reviews ORDER BY id").fetchall()


def line(db, run: str, decision_id: int, **change) -> dict:
    d = next(x for x in decisions(db, run) if x["id"] == decision_id)
    return {"uid": "u-1", "doc": d["doc"], "kind": d["kind"], "type": d["type"], "left": d["left"],
            "right": d["right"], "reviewer": "ana", "label": "match", "role": "reviewer", "note": None,
            "blind": False, "created": "2026-01-31T09:30:00+00:00"} | change


def write(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("ahead", [MAX_CLOCK_SKEW + timedelta(seconds=5), timedelta(days=365 * 973)])
def test_a_review_dated_in_the_future_is_refused(chimera, tmp_path, ahead):
    now = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)
    f = write(tmp_path / "r.jsonl", line(chimera, "mixed", 1, uid="ok", created="2026-12-01T00:00:00+00:00"),
              line(chimera, "mixed", 2, uid="late", created=(now + ahead).isoformat()))
    with pytest.raises(InputError, match=r"r\.jsonl:2: field 'created' .* is in the future"):
        import_reviews(chimera, "mixed", f, now=now)
    assert stored(chimera) == []


def test_a_review_within_the_clock_skew_is_imported(chimera, tmp_path):
    now = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)
    f = write(tmp_path / "r.jsonl", line(chimera, "mixed", 1, created=(now + MAX_CLOCK_SKEW / 2).isoformat()))
    assert import_reviews(chimera, "mixed", f, now=now)["imported"] == 1


def test_the_real_clock_refuses_the_year_2999(chimera, tmp_path):
    f = write(tmp_path / "r.jsonl", line(chimera, "mixed", 1, created="2999-01-01T00:00:00+00:00"))
    with pytest.raises(InputError, match="in the future"):
        import_reviews(chimera, "mixed", f)


@pytest.mark.parametrize("change", [{"label": "no-match"}, {"reviewer": "bo"}, {"note": "edited"},
                                    {"created": "2026-02-01T00:00:00+00:00"}], ids=lambda c: next(iter(c)))
def test_a_stored_uid_with_other_content_is_reported_and_nothing_imported(chimera, tmp_path, change):
    add_review(chimera, "mixed", 1, "match", "ana")
    exported = [json.loads(x) for x in export_reviews(chimera, "mixed").splitlines()]
    before = stored(chimera)
    fresh = line(chimera, "mixed", 2, uid="new-one")
    f = write(tmp_path / "r.jsonl", fresh, exported[0] | change)
    field = {"created": "created", "note": "note", "reviewer": "reviewer", "label": "label"}[next(iter(change))]
    with pytest.raises(InputError, match=rf"r\.jsonl:2: review uid .* is already stored .* with other content "
                                         rf"\({field}: "):
        import_reviews(chimera, "mixed", f)
    assert stored(chimera) == before
    write(tmp_path / "same.jsonl", *exported)  # the untouched export is still a duplicate, skipped
    assert import_reviews(chimera, "mixed", tmp_path / "same.jsonl")["skipped_duplicates"] == 1


def test_a_uid_repeated_in_the_file_with_another_label_is_refused(chimera, tmp_path):
    f = write(tmp_path / "r.jsonl", line(chimera, "mixed", 1), line(chimera, "mixed", 1, label="no-match"))
    with pytest.raises(InputError, match=r"r\.jsonl:2: review uid 'u-1' .* other content \(label: "):
        import_reviews(chimera, "mixed", f)
    assert stored(chimera) == []


@pytest.fixture
def ideation(tmp_path):
    from audit.demo import DATA
    from scoring.families import TASKS

    db = open_db(tmp_path / "i.db")
    demo = TASKS["ideation"].demo_runs(DATA)[0]
    score_run(db, "ideation", demo.inputs, demo.judge, run="idea")
    return db


def test_a_comparison_written_the_other_way_round_is_reoriented_and_counted(ideation, tmp_path):
    d = next(x for x in decisions(ideation, "idea") if x["kind"] == "comparison")
    swapped = line(ideation, "idea", d["id"], left=d["right"], right=d["left"], label="a", uid="s-1")
    same = line(ideation, "idea", d["id"], label="a", uid="s-2", reviewer="bo")
    res = import_reviews(ideation, "idea", write(tmp_path / "r.jsonl", swapped, same))
    assert res == {"imported": 2, "skipped_duplicates": 0, "reoriented": 1,
                   "stored_as_local": 0, "not_sample_draws": 0}
    labels = dict(ideation.execute("SELECT reviewer, label FROM reviews WHERE decision_id = ?", [d["id"]]).fetchall())
    assert labels == {"ana": "b", "bo": "a"}  # ana preferred the stored decision's right side


def test_a_stored_comparison_resent_with_sides_swapped_but_the_label_kept_is_refused(ideation, tmp_path):
    d = next(x for x in decisions(ideation, "idea") if x["kind"] == "comparison")
    add_review(ideation, "idea", d["id"], "a", "ana")
    exported = [json.loads(x) for x in export_reviews(ideation, "idea").splitlines()]
    mine = next(r for r in exported if r["reviewer"] == "ana" and r["left"] == d["left"] and r["right"] == d["right"])
    tampered = mine | {"left": mine["right"], "right": mine["left"]}  # same uid and label, sides swapped
    with pytest.raises(InputError, match=r"already stored .* other content \(label: 'a' stored, 'b' in the file\)"):
        import_reviews(ideation, "idea", write(tmp_path / "r.jsonl", tampered))
    resent = mine | {"left": mine["right"], "right": mine["left"], "label": "b"}  # the same verdict, re-oriented
    assert import_reviews(ideation, "idea", write(tmp_path / "ok.jsonl", resent))["skipped_duplicates"] == 1
