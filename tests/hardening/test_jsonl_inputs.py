"""One JSON-lines reader (scoring/jsonl.py) with one policy for every input and log: strict UTF-8 (a BOM allowed),
lines split at `\\n` only, `FILE:LINE: reason` errors, a size limit. Each loader is fed the same hard cases, so a
loader that read its lines another way (`str.splitlines` cuts at U+2028, `errors="replace"` hides a Latin-1
byte, a text-mode read raises a bare UnicodeDecodeError) fails here."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scoring.errors import InputError
from scoring.jsonl import read_lines, read_records

LS = "\u2028"  # LINE SEPARATOR: JSON allows it raw inside a string; str.splitlines breaks there
ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, records: list[dict], *, bom: bool = False, latin1_line: int | None = None) -> Path:
    lines = [json.dumps(r, ensure_ascii=False).encode() for r in records]
    if latin1_line is not None:
        lines[latin1_line - 1] = lines[latin1_line - 1].replace(b"}", b', "x": "caf\xe9"}')  # é in Latin-1
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines) + b"\n")
    return path


def test_a_line_separator_inside_a_string_stays_in_its_record(tmp_path: Path) -> None:
    p = write(tmp_path / "a.jsonl", [{"a": f"x{LS}y\u2029z\x85w\x0cv"}, {"b": 1}])
    assert [(n, r) for n, r in read_records(p)] == [(1, {"a": f"x{LS}y\u2029z\x85w\x0cv"}), (2, {"b": 1})]


def test_a_latin1_byte_is_an_error_at_its_line(tmp_path: Path) -> None:
    p = write(tmp_path / "bad.jsonl", [{"a": 1}, {"b": 2}, {"c": 3}], latin1_line=2)
    with pytest.raises(InputError, match=r"bad\.jsonl:2: not valid UTF-8") as e:
        list(read_records(p))
    assert e.value.line == 2


def test_a_bom_is_accepted_and_crlf_line_ends_are_whitespace(tmp_path: Path) -> None:
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"b": 2}\r\n')
    assert list(read_records(p)) == [(1, {"a": 1}), (3, {"b": 2})]
    q = tmp_path / "late-bom.jsonl"
    q.write_bytes(b'{"a": 1}\n\xef\xbb\xbf{"b": 2}\n')  # a BOM is a start-of-file mark only
    with pytest.raises(InputError, match=r"late-bom\.jsonl:2: invalid JSON"):
        list(read_records(q))


def test_size_limit_and_missing_files(tmp_path: Path) -> None:
    p = write(tmp_path / "big.jsonl", [{"a": "x" * 100}])
    assert list(read_records(p, limit=200))
    with pytest.raises(InputError, match=r"big\.jsonl: judge log is 1\d\d bytes; the limit is 50 bytes"):
        list(read_records(p, limit=50, what="judge log"))
    with pytest.raises(InputError, match="rankings file not found"):
        list(read_records(tmp_path / "none.jsonl", what="rankings file"))
    with pytest.raises(InputError, match="is a folder"):
        list(read_lines(tmp_path))


def test_records_must_be_objects_and_json(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.jsonl:2: expected a JSON object, got a list"):
        list(read_records(p))
    p.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.jsonl:2: invalid JSON"):
        list(read_records(p))


def test_lines_are_streamed_one_at_a_time(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"a": 1}\n' + b"\xff\n")
    lines = read_lines(p)
    assert next(lines) == (1, '{"a": 1}')  # the bad second line is not read yet
    with pytest.raises(InputError, match=":2: not valid UTF-8"):
        next(lines)


# ---------------------------------------------------------------- every loader, the same cases


def _chimera_predictions(path: Path) -> object:
    from scoring.families.chimera.load import load_predictions

    return load_predictions(path, ["p1"]).predictions["p1"].relations[0].entities[0][1]


def _chimera_replay(path: Path) -> object:
    from scoring.families.chimera.questions import read_log_line
    from scoring.judges.replay import ReplayJudge

    return next(iter(ReplayJudge(path, read_log_line).answers))[2]


def _ideation_ideas(path: Path) -> object:
    from scoring.families.ideation.load import load_ideas

    return load_ideas(path)[0].question


def _ideation_log(path: Path) -> object:
    from scoring.families.ideation.load import load_judge_log

    ratings, _ = load_judge_log(path, {"q1": ["s1"]})
    return ratings[0].rationale


def _retrieval_rankings(path: Path) -> object:
    from scoring.families.retrieval.load import load_rankings

    return load_rankings(path).queries[0].context


def _retrieval_replay(path: Path) -> object:
    from scoring.families.retrieval.judge import CandidateReplayJudge

    return next(iter(CandidateReplayJudge(str(path)).answers))[1]


def _ranking_record() -> dict:
    line = (ROOT / "data/retrieval/demo_rankings.jsonl").read_text(encoding="utf-8").split("\n")[0]
    rec = json.loads(line)
    return rec | {"context": f"first{LS}second"}


LOADERS: dict[str, tuple[Callable[[Path], object], Callable[[], dict]]] = {
    "chimera predictions": (_chimera_predictions, lambda: {
        "paper_id": "p1", "relations": {"combination": [{"comb-element": [f"first{LS}second", "other"]}]}}),
    "chimera judge log": (_chimera_replay, lambda: {
        "paper_id": "d", "entity_type": "comb-element", "span1": f"first{LS}second", "span2": "b", "answer": "yes"}),
    "ideation ideas": (_ideation_ideas, lambda: {
        "question_id": "q1", "question": f"first{LS}second", "system": "s1", "idea": "an idea"}),
    "ideation judge log": (_ideation_log, lambda: {
        "question_id": "q1", "system": "s1", "criterion": "novelty", "score": 3, "rationale": f"first{LS}second"}),
    "retrieval rankings": (_retrieval_rankings, _ranking_record),
    "retrieval judge log": (_retrieval_replay, lambda: {
        "query_id": "q", "candidate_id": f"first{LS}second", "answer": "acceptable"}),
}


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_every_loader_reads_lines_the_one_way(name: str, tmp_path: Path) -> None:
    load, record = LOADERS[name]
    assert load(write(tmp_path / "in.jsonl", [record()], bom=True)) == f"first{LS}second"
    bad = write(tmp_path / "bad.jsonl", [record(), record()], latin1_line=2)
    with pytest.raises(InputError, match=r"bad\.jsonl:2: not valid UTF-8") as e:
        load(bad)
    assert e.value.line == 2


def test_review_import_reads_lines_the_one_way(tmp_path: Path) -> None:
    from audit.review.reviews import add_review
    from audit.review.reviews_io import export_reviews, import_reviews
    from audit.runs import score_run
    from audit.store.database import open_db
    from audit.views import decisions

    inputs = {"gold": str(ROOT / "data/chimera/eval.csv"), "pred": str(ROOT / "data/chimera/pred_mixed.jsonl")}
    src, dst = open_db(tmp_path / "a.db"), open_db(tmp_path / "b.db")
    for db in (src, dst):
        score_run(db, "chimera", inputs, "exact", run="r")
    first = next(iter(decisions(src, "r")))
    add_review(src, "r", first["id"], "match", "ana", note=f"first{LS}second")
    p = tmp_path / "reviews.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + export_reviews(src, "r").encode())
    assert import_reviews(dst, "r", p)["imported"] == 1
    assert [r["note"] for r in dst.query("SELECT note FROM reviews")] == [f"first{LS}second"]
    lines = p.read_bytes().split(b"\n")
    p.write_bytes(b"\n".join([lines[0], lines[0].replace(b"ana", b"an\xe9")] + lines[1:]))
    with pytest.raises(InputError, match=r"reviews\.jsonl:2: not valid UTF-8"):
        import_reviews(dst, "r", p)
