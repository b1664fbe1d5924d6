"""Loading gold and predictions: normalisation and clear errors naming file and line."""

import pytest

from scoring.errors import InputError
from scoring.families.chimera import load as chimera_load
from scoring.families.chimera import scorer as chimera
from tests.conftest import GOLD, write_jsonl

GOLD_IDS = ["2105.13065", "2103.0771", "2110.01691"]


def test_gold_ids_stay_text_and_counts_match_the_paper():
    docs = chimera.load_gold(GOLD)
    assert len(docs) == 216
    ids = {d.paper_id for d in docs}
    assert "2103.0771" in ids  # never a float
    assert sum(1 for d in docs if d.gold) == 99
    types = [r.type for d in docs for r in d.gold]
    assert types.count("combination") == 75 and types.count("inspiration") == 24  # analogy renamed
    first = docs[0]
    s = first.gold_spans[0]
    assert first.text[s.start:s.end] == s.value


def test_predictions_normalise_names_and_wrap_single_relation(tmp_path):
    p = write_jsonl(tmp_path / "p.jsonl", [
        {"paper_id": "2105.13065", "relations": {"analogy": [{"analogy-src": ["a"], "analogy-target": ["b"]}]}},
        {"paper_id": "2103.0771", "relations": {"blend": {"comb-element": ["x", "y"]}}},
    ])
    lp = chimera.load_predictions(p, GOLD_IDS)
    assert lp.predictions["2105.13065"].relations[0].type == "inspiration"
    assert lp.predictions["2105.13065"].relations[0].entities == (("inspiration-src", "a"), ("inspiration-target", "b"))
    assert lp.predictions["2103.0771"].relations[0].type == "combination"
    assert lp.missing == ["2110.01691"]
    assert lp.predictions["2110.01691"].relations == () and lp.predictions["2110.01691"].line is None
    assert any("analogy" in n for n in lp.notes)


def test_a_bare_string_entity_value_is_one_span_as_chimera_md_says(tmp_path):
    """chimera.md §2: "coerce a bare string value into a one-item list" (it was refused, and the file with it)."""
    bare = write_jsonl(tmp_path / "bare.jsonl", [
        {"paper_id": "2103.0771", "relations": {"combination": [{"comb-element": "a"}]}},
        {"paper_id": "2105.13065",
         "relations": {"inspiration": [{"inspiration-src": "s", "inspiration-target": ["t"]}]}},
    ])
    listed = write_jsonl(tmp_path / "listed.jsonl", [
        {"paper_id": "2103.0771", "relations": {"combination": [{"comb-element": ["a"]}]}},
        {"paper_id": "2105.13065",
         "relations": {"inspiration": [{"inspiration-src": ["s"], "inspiration-target": ["t"]}]}},
    ])
    got, want = chimera.load_predictions(bare, GOLD_IDS), chimera.load_predictions(listed, GOLD_IDS)
    assert got.predictions == want.predictions
    assert [n.split(": ", 1)[1] for n in got.notes] == [
        "entity list 'comb-element' is a single string; read as a one-item list",
        "entity list 'inspiration-src' is a single string; read as a one-item list"]
    assert got.notes[0].startswith(f"{bare}:1: ")


def test_prediction_csv(tmp_path):
    p = tmp_path / "p.csv"
    p.write_text('paper_id,readable_relations\n2103.0771,"{""combination"": [{""comb-element"": [""a"", ""b""]}]}"\n')
    lp = chimera.load_predictions(p, GOLD_IDS)
    assert lp.predictions["2103.0771"].relations[0].entities == (("comb-element", "a"), ("comb-element", "b"))


@pytest.mark.parametrize(("line", "message"), [
    ('{"paper_id": "2105.13065", "relations": {}', "invalid JSON"),
    ('["2105.13065"]', "expected a JSON object, got a list"),
    ('{"paper_id": 2105.13065, "relations": {}}', "paper_id must be a string"),
    ('{"paper_id": "9999.0000", "relations": {}}', "unknown paper id '9999.0000'"),
    ('{"paper_id": "2105.13065", "relations": {"fusion": [{"comb-element": ["a"]}]}}',
     "unknown relation type 'fusion'"),
    ('{"paper_id": "2105.13065", "relations": {"combination": [{"element": ["a"]}]}}',
     "unknown entity type 'element'"),
    ('{"paper_id": "2105.13065", "relations": {"combination": [{"comb-element": {"a": 1}}]}}',
     "entity list 'comb-element' must be a list of strings, got an object"),
    ('{"paper_id": "2105.13065", "relations": "combination"}', "relations must be a JSON object, got a string"),
    ('{"paper_id": "2105.13065", "relations": {"combination": [{"comb-element": [3]}]}}',
     "must be a string, got a num"),
    ('{"paper_id": "2105.13065", "relations": {"combination": [{"inspiration-src": ["a"]}]}}', "does not belong"),
    ('{"paper_id": "2105.13065"}', "missing field 'relations'"),
])
def test_bad_prediction_lines_name_file_and_line(tmp_path, line, message):
    p = write_jsonl(tmp_path / "bad.jsonl", ['{"paper_id": "2103.0771", "relations": {}}', line])
    with pytest.raises(InputError) as e:
        chimera.load_predictions(p, GOLD_IDS)
    assert str(e.value).startswith(f"{p}:2: ")
    assert message in str(e.value)


def test_duplicate_prediction(tmp_path):
    row = {"paper_id": "2103.0771", "relations": {}}
    p = write_jsonl(tmp_path / "dup.jsonl", [row, "", row])
    with pytest.raises(InputError, match=r"dup.jsonl:3: duplicate prediction for paper id '2103.0771' \(first on line"):
        chimera.load_predictions(p, GOLD_IDS)


def test_hostile_and_binary_input(tmp_path):
    p = tmp_path / "bin.jsonl"
    p.write_bytes(b'{"paper_id": "2103.0771", "relations": {}}\n\xff\xfe\x00junk\n')
    with pytest.raises(InputError, match="bin.jsonl:2: not valid UTF-8"):
        chimera.load_predictions(p, GOLD_IDS)
    with pytest.raises(InputError, match="file not found"):
        chimera.load_predictions(tmp_path / "nope.jsonl", GOLD_IDS)


def test_huge_file_is_refused_before_reading(tmp_path, monkeypatch):
    p = write_jsonl(tmp_path / "big.jsonl", [{"paper_id": "2103.0771", "relations": {}}])
    monkeypatch.setattr(chimera_load, "MAX_INPUT_BYTES", 10)
    with pytest.raises(InputError, match="the limit is"):
        chimera.load_predictions(p, GOLD_IDS)


def test_bad_gold(tmp_path):
    g = tmp_path / "g.csv"
    g.write_text("paper_id,text\n1,abc\n")
    with pytest.raises(InputError, match=r"g.csv:1: missing column readable_relations"):
        chimera.load_gold(g)
    g.write_text('paper_id,text,readable_relations\n1,abc,{}\n2,"multi\nline",{oops}\n')
    with pytest.raises(InputError, match="g.csv:3: readable_relations is not valid JSON"):
        chimera.load_gold(g)
    g.write_text("paper_id,text,readable_relations\n1,abc,{}\n1,abc,{}\n")
    with pytest.raises(InputError, match="g.csv:3: duplicate paper_id '1'"):
        chimera.load_gold(g)


def test_empty_prediction_file(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text("\n\n")
    with pytest.raises(InputError, match="no predictions"):
        chimera.load_predictions(p, GOLD_IDS)


def test_every_bad_line_is_reported_at_once_up_to_20(tmp_path):
    lines = [{"paper_id": "2103.0771", "relations": {}}, "{broken", {"paper_id": "nope", "relations": {}},
             {"paper_id": 5, "relations": {}}]
    p = write_jsonl(tmp_path / "bad.jsonl", lines)
    with pytest.raises(InputError) as e:
        chimera.load_predictions(p, GOLD_IDS)
    assert e.value.line == 2 and [x.line for x in e.value.errors] == [2, 3, 4]
    assert "and 2 more errors: line 3: unknown paper id 'nope'" in str(e.value)
    assert "line 4: paper_id must" in str(e.value)
    many = write_jsonl(tmp_path / "many.jsonl", [{"paper_id": f"x{i}", "relations": {}} for i in range(30)])
    with pytest.raises(InputError, match=r"and 19 more errors \(stopped after 20\)") as e:
        chimera.load_predictions(many, GOLD_IDS)
    assert len(e.value.errors) == 20
