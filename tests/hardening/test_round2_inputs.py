"""Issue 27, input files and folders of every family: each hostile input ends in one `error:` line naming the file
(and the line where there is one), exit 2, nothing stored; the documented exceptions (`--allow-empty`) exit 0.

Families are fed the same hostile values (one numeric rule for every field: NaN, Infinity, 1e309, a 5,000-digit
integer), so a loader that parsed its JSON another way fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from audit.cli import main
from audit.runs import hash_input
from scoring.errors import InputError, is_blank, number_problem, parse_json
from tests.conftest import GOLD, JUDGE_LOG

ROOT = Path(__file__).resolve().parents[2]
LITX_GOLD = ROOT / "data" / "litxbench" / "gold"
HOSTILE_NUMBERS = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity", "1e309": "1e309",
                   "5,000 digits": "9" * 5000, "400 digits": "9" * 400}


def paper(amount: str = "0.5", value: str = "200") -> str:
    """A small litx-json paper with one composition amount and one measurement value written as given."""
    return ('[{"raw_materials": {"el": {"kind": "Ingot"}}, "synthesis_groups": [{"kind": "ArcMelting"}],\n'
            ' "output_materials": [{"measurements": [\n'
            f'  {{"_type": "composition", "composition": {{"Fe": 0.5, "Ni": {amount}}}}},\n'
            f'  {{"kind": "hardness", "value": {value}, "unit": "HV"}}]}}]}}]\n')


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "case.db"


def runs(db: Path) -> list:
    if not db.exists():
        return []
    with sqlite3.connect(db) as c:
        out = c.execute("SELECT name FROM runs").fetchall()
    c.close()
    return out


def refused(capsys, db: Path, argv: list[str]) -> str:
    """Run the CLI; assert exit 2, one `error:` line, no traceback, no run stored; the message."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "internal error" not in err
    assert runs(db) == []
    return lines[0]


def litx_folders(tmp: Path, gold_text: str | None = None, pred_text: str | None = None) -> tuple[Path, Path]:
    gold, pred = tmp / "gold", tmp / "pred"
    gold.mkdir()
    pred.mkdir()
    (gold / "p1.json").write_text(gold_text or paper())
    (pred / "p1.json").write_text(pred_text or paper())
    return gold, pred


def litx(db: Path, gold: Path, pred: Path, *extra: str) -> list[str]:
    return ["score", "litxbench", "--db", str(db), "--gold", str(gold), "--pred", str(pred), "--judge", "official",
            *extra]


# ------------------------------------------------------------------ one numeric rule, duplicate keys, blank text


@pytest.mark.parametrize("literal", HOSTILE_NUMBERS.values(), ids=list(HOSTILE_NUMBERS))
def test_every_json_reader_refuses_non_finite_numbers_at_their_line(literal: str) -> None:
    for text in (f"[{literal}]", f'{{"a": {{"b": [1, {literal}]}}}}'):
        with pytest.raises(InputError, match=r"^f\.jsonl:7: .*(not a finite|too large|out of range|too long)"):
            parse_json(text, "f.jsonl", 7)
    assert parse_json('[1e308, -2.5, 12345678901234567890, "NaN"]', "f", 1) == [
        1e308, -2.5, 12345678901234567890, "NaN"]


def test_the_numeric_rule_is_finiteness_as_a_double() -> None:
    for ok in (0, -1, 2.5, 1e308, 10**300, True):
        assert number_problem(ok) is None
    for bad in (float("nan"), float("inf"), -float("inf"), 10**309, -(10**400)):
        assert number_problem(bad)


def test_duplicate_keys_are_refused_in_every_object() -> None:
    for text in ('{"a": 1, "a": 1}', '[{"x": {"k": 1, "k": 2}}]'):
        with pytest.raises(InputError, match=r"f:3: duplicate key"):
            parse_json(text, "f", 3)
    assert parse_json('{"a": {"a": 1}}', "f", 1) == {"a": {"a": 1}}  # the same key in two objects is fine


def test_blank_means_nothing_visible() -> None:
    assert is_blank("\u200b\u200c\u200d\u2060\ufeff \t") and is_blank("")
    assert not is_blank("a\u200b") and not is_blank("é")


@pytest.mark.parametrize("where", ["gold composition", "pred composition", "pred value", "pred string value"])
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "1e309", "9" * 5000], ids=["NaN", "Inf", "1e309", "5000d"])
def test_litxbench_refuses_non_finite_amounts_and_values_at_their_line(tmp_path, db, capsys, where, literal):
    value = f'"{literal}"' if where == "pred string value" else literal
    bad = paper(amount=literal) if "composition" in where else paper(value=value)
    gold, pred = litx_folders(tmp_path, gold_text=bad if where.startswith("gold") else None,
                              pred_text=None if where.startswith("gold") else bad)
    bad_file = (gold if where.startswith("gold") else pred) / "p1.json"
    line = 3 if "composition" in where else 4
    msg = refused(capsys, db, litx(db, gold, pred))
    where_ = f"{bad_file}:{line}: " if where != "pred string value" else f"{bad_file}: "
    assert msg.startswith(f"error: {where_}"), msg
    assert "finite" in msg or "too large" in msg or "out of range" in msg


def test_litxbench_refuses_a_formula_amount_too_large_to_be_finite(tmp_path, db, capsys) -> None:
    formula = '"Fe' + "9" * 400 + 'Ni"'
    gold, pred = litx_folders(tmp_path, pred_text=paper().replace('{"Fe": 0.5, "Ni": 0.5}', formula))
    msg = refused(capsys, db, litx(db, gold, pred))
    assert msg.startswith(f"error: {pred / 'p1.json'}: ") and "amount of Fe" in msg and "finite" in msg, msg


def test_litxbench_refuses_duplicate_keys(tmp_path, db, capsys) -> None:
    gold, pred = litx_folders(tmp_path, pred_text=paper().replace('"Fe": 0.5,', '"Fe": 0.5, "Fe": 0.9,'))
    msg = refused(capsys, db, litx(db, gold, pred))
    assert msg.startswith(f"error: {pred / 'p1.json'}:3: ") and "duplicate key 'Fe'" in msg


def chimera_pred(tmp: Path, record: str) -> Path:
    pid = next(line.split(",")[0] for line in GOLD.read_text().splitlines()[1:] if line)
    p = tmp / "pred.jsonl"
    p.write_text(record.replace("PID", pid) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("record, reason", ids=["duplicate key", "zero-width span"], argvalues=[
    ('{"paper_id": "PID", "relations": {}, "relations": {"combination": []}}', "duplicate key 'relations'"),
    ('{"paper_id": "PID", "relations": {"combination": [{"comb-element": ["\u200b\u200d", "x"]}]}}',
     "empty span in 'comb-element' (only invisible characters"),
])
def test_chimera_refuses_duplicate_keys_and_invisible_spans(tmp_path, db, capsys, record, reason) -> None:
    pred = chimera_pred(tmp_path, record)
    msg = refused(capsys, db, ["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(pred),
                               "--judge", "exact"])
    assert msg.startswith(f"error: {pred}:1: ") and reason in msg, msg


IDEAS = [{"question_id": "q1", "question": "Q?", "system": "a", "idea": "A"},
         {"question_id": "q1", "question": "Q?", "system": "b", "idea": "B"}]


def jsonl(path: Path, rows: list[dict] | list[str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("literal", ["NaN", "1e309", "9" * 5000], ids=["NaN", "1e309", "5000d"])
def test_ideation_and_retrieval_refuse_non_finite_numbers(tmp_path, db, capsys, literal) -> None:
    ideas = jsonl(tmp_path / "ideas.jsonl", IDEAS)
    absolute = jsonl(tmp_path / "abs.jsonl", [
        '{"question_id": "q1", "system": "a", "criterion": "novelty", "score": 3}',
        f'{{"question_id": "q1", "system": "b", "criterion": "novelty", "score": {literal}}}'])
    msg = refused(capsys, db, ["score", "ideation", "--db", str(db), "--ideas", str(ideas), "--absolute",
                               str(absolute)])
    assert msg.startswith(f"error: {absolute}:2: "), msg
    rankings = ROOT / "data" / "retrieval" / "demo_rankings.jsonl"
    first = json.loads(rankings.read_text(encoding="utf-8").splitlines()[0])
    key = next(k for k, v in first.items() if isinstance(v, list) and v and isinstance(v[0], int | float))
    text = json.dumps(first).replace(f'"{key}": [', f'"{key}": [{literal}, ', 1)
    pred = jsonl(tmp_path / "rank.jsonl", [text])
    msg = refused(capsys, db, ["score", "retrieval", "--db", str(db), "--pred", str(pred)])
    assert msg.startswith(f"error: {pred}:1: "), msg


def test_ideation_refuses_invisible_fields_and_empty_rating_files(tmp_path, db, capsys) -> None:
    bad = jsonl(tmp_path / "ideas.jsonl", [IDEAS[0], {**IDEAS[1], "system": "\u200b\u2060"}])
    msg = refused(capsys, db, ["score", "ideation", "--db", str(db), "--ideas", str(bad)])
    assert msg.startswith(f"error: {bad}:2: field 'system' is empty"), msg
    ideas = jsonl(tmp_path / "ok.jsonl", IDEAS)
    for flag in ("--absolute", "--pairwise"):
        empty = tmp_path / f"empty{flag}.jsonl"
        empty.write_text("\n")
        msg = refused(capsys, db, ["score", "ideation", "--db", str(db), "--ideas", str(ideas), flag, str(empty)])
        assert msg.startswith(f"error: {empty}: no ") and flag in msg, msg


# ------------------------------------------------------------------ LitXBench folders: links, ids, sizes


def test_a_prediction_link_to_a_file_outside_the_folder_is_refused(tmp_path, db, capsys) -> None:
    gold, pred = litx_folders(tmp_path)
    outside = tmp_path / "elsewhere.json"
    outside.write_text(paper())
    (pred / "p1.json").unlink()
    os.symlink(outside, pred / "p1.json")
    msg = refused(capsys, db, litx(db, gold, pred))
    assert msg.startswith(f"error: {pred / 'p1.json'}: is a link that leads outside"), msg
    # a link that stays inside the folder is an ordinary file
    (pred / "p1.json").unlink()
    (pred / "real").mkdir()
    (pred / "real" / "copy.json").write_text(paper())
    os.symlink(pred / "real" / "copy.json", pred / "p1.json")
    assert main(litx(db, gold, pred)) == 0


def test_a_paper_text_link_to_a_system_file_is_refused(tmp_path, db, capsys) -> None:
    gold, pred = litx_folders(tmp_path)
    texts = tmp_path / "texts"
    texts.mkdir()
    os.symlink("/etc/hostname" if Path("/etc/hostname").exists() else "/etc/passwd", texts / "p1.md")
    msg = refused(capsys, db, litx(db, gold, pred, "--text", str(texts)))
    assert msg.startswith(f"error: {texts / 'p1.md'}: is a link that leads outside"), msg


def test_a_sub_folder_linked_to_the_root_is_refused_and_never_walked(tmp_path, db, capsys) -> None:
    gold, pred = litx_folders(tmp_path)
    os.symlink("/", pred / "root")
    msg = refused(capsys, db, litx(db, gold, pred))
    assert msg.startswith(f"error: {pred / 'root'}: is a link that leads outside"), msg
    with pytest.raises(InputError, match="leads outside"):
        hash_input(str(pred))


def test_the_input_hash_follows_links_inside_the_folder_by_content(tmp_path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for f in (a, b):
        (f / "sub").mkdir(parents=True)
    (a / "sub" / "x.json").write_text("1")
    (a / "x.json").write_text("1")
    (b / "sub" / "x.json").write_text("1")
    os.symlink(b / "sub" / "x.json", b / "x.json")
    os.symlink(b / "sub", b / "again")  # a linked sub-folder inside: hashed where it is, not twice
    assert hash_input(str(a)) == hash_input(str(b))


@pytest.mark.parametrize("pid", ["..\\..\\x", "..x", "a\\b", "tab\there"])
def test_paper_ids_that_look_like_paths_are_refused(tmp_path, db, capsys, pid) -> None:
    gold, pred = litx_folders(tmp_path)
    for folder in (gold, pred):
        shutil.copy(folder / "p1.json", folder / f"{pid}.json")
    msg = refused(capsys, db, litx(db, gold, pred))
    assert "looks like a path" in msg and repr(pid) in msg, msg


def test_a_paper_text_over_the_input_limit_is_refused_unread(tmp_path, db, capsys) -> None:
    gold, pred = litx_folders(tmp_path)
    texts = tmp_path / "texts"
    texts.mkdir()
    with (texts / "p1.md").open("wb") as f:  # sparse: 600 MiB on paper, nothing on disk
        f.truncate(600 * 2**20)
    msg = refused(capsys, db, litx(db, gold, pred, "--text", str(texts)))
    assert msg == f"error: {texts / 'p1.md'}: paper text is 600 MiB; the limit is 64 MiB", msg


# ------------------------------------------------------------------ nothing matches any gold item


def test_prediction_folders_that_match_no_gold_paper_are_refused(tmp_path, db, capsys) -> None:
    gold, pred = litx_folders(tmp_path)
    (pred / "p1.json").unlink()
    msg = refused(capsys, db, litx(db, gold, pred))
    assert "no prediction matches any of the 1 gold item; it holds no prediction" in msg, msg
    (pred / "P1.json").write_text(paper())
    msg = refused(capsys, db, litx(db, gold, pred))
    assert "only in upper/lower case" in msg, msg
    (pred / "P1.json").rename(pred / "other-run-paper.json")
    msg = refused(capsys, db, litx(db, gold, pred))
    assert "name other documents" in msg and "--allow-empty" in msg, msg
    assert main(litx(db, gold, pred, "--allow-empty")) == 0  # the rare intended case
    assert len(runs(db)) == 1


def test_a_judge_log_of_another_prediction_file_is_refused(tmp_path, db, capsys) -> None:
    gold_ids = [line.split(",")[0] for line in GOLD.read_text().splitlines()[1:3]]
    pred = jsonl(tmp_path / "pred.jsonl", [
        {"paper_id": pid, "relations": {"combination": [{"comb-element": [f"alpha {i}", f"beta {i}"]}]}}
        for i, pid in enumerate(gold_ids)])
    log = JUDGE_LOG  # the demo's log, written for another prediction file
    msg = refused(capsys, db, ["score", "chimera", "--db", str(db), "--gold", str(GOLD), "--pred", str(pred),
                               "--judge", f"replay:{log}"])
    assert "judge answers" in msg or "judge log" in msg, msg


# ------------------------------------------------------------------ ideation: a judge log read the other way round

DEMO = ROOT / "data" / "ideation"


def swapped_log(tmp: Path, *, swap: bool) -> Path:
    """The demo's pairwise verdicts as a judge log, first and second exchanged on every line when `swap`."""
    rows = [json.loads(line) for line in (DEMO / "demo_pairwise.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    if swap:
        rows = [{**r, "first": r["second"], "second": r["first"]} for r in rows]
    return jsonl(tmp / ("swapped.jsonl" if swap else "same.jsonl"), rows)


def test_an_ideation_judge_log_with_first_and_second_swapped_is_refused(tmp_path, db, capsys) -> None:
    argv = ["score", "ideation", "--db", str(db), "--ideas", str(DEMO / "demo_ideas.jsonl"), "--pairwise",
            str(DEMO / "demo_pairwise.jsonl"), "--judge"]
    log = swapped_log(tmp_path, swap=True)
    msg = refused(capsys, db, [*argv, f"replay:{log}"])
    assert msg.startswith(f"error: {log}:") and "first/second look swapped" in msg, msg
    assert main([*argv, f"replay:{swapped_log(tmp_path, swap=False)}", "--run", "same"]) == 0  # as written: fine
