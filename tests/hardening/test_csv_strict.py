"""Issue 17 item 2: gold and prediction CSVs are parsed strictly; a cut or unbalanced file is an error at FILE:LINE.

The property test cuts a small real gold file at every kind of position inside its last record: the loader must
either refuse it (naming the last record's line) or return exactly the relations of the whole file, never a
silently shorter record.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.errors import InputError
from scoring.families.chimera.load import load_gold, load_predictions
from tests.conftest import GOLD


def _rows() -> tuple[list[str], list[list[str]]]:
    with GOLD.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


HEADER, ROWS = _rows()
REL = HEADER.index("readable_relations")
WITH_RELATION = next(r for r in reversed(ROWS) if r[REL] not in ("", "{}"))
SMALL = [*[r for r in ROWS[:4] if r[0] != WITH_RELATION[0]][:3], WITH_RELATION]  # the last record has a relation


def _csv(rows: list[list[str]], header: list[str] = HEADER) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    return out.getvalue()


GOOD = _csv(SMALL)
LAST_LINE = GOOD.count("\n", 0, GOOD.rstrip("\n").rfind("\n" + SMALL[-1][0] + ",")) + 2  # where the record starts
LAST_START = GOOD.rstrip("\n").rfind("\n" + SMALL[-1][0] + ",") + 1


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _cut_at(marker: str, offset: int = 0) -> int:
    """Position in GOOD of `marker` inside the last record (plus offset)."""
    return GOOD.index(marker, LAST_START) + offset


GOLD_CASES = {
    "cut inside the text": (GOOD[:LAST_START + 40], LAST_LINE, "unterminated quote"),
    "cut right after the id": (GOOD[:LAST_START + len(SMALL[-1][0]) + 1], LAST_LINE, "record has 2 fields"),
    "cut after the text": (GOOD[:_cut_at('",', 0) + 2], LAST_LINE, "record has 3 fields but the header has 7"),
    "cut inside readable_relations": (GOOD[:_cut_at('"{""', 0) + 14], LAST_LINE, "unterminated quote"),
    "cut after a quoted word of readable_relations": (GOOD[:_cut_at('"{""', 0) + 12], LAST_LINE,
                                                      "record has 6 fields"),
    "one field short, newline kept": (_csv([*SMALL[:-1], SMALL[-1][:-1]]), LAST_LINE, "record has 6 fields"),
    "an extra field": (_csv([*SMALL[:-1], [*SMALL[-1], "x"]]), LAST_LINE, "record has 8 fields"),
    "short record in the middle": (_csv([SMALL[0], SMALL[1][:3], *SMALL[2:]]), 3, "record has 3 fields"),
    "quote never closed": (GOOD + 'x1,"an abstract that never ends\n', GOOD.count("\n") + 1, "unterminated quote"),
    "text after a closing quote": (GOOD.replace(f"\n{SMALL[1][0]},", f'\n"{SMALL[1][0]}"x,', 1), 3,
                                   "malformed CSV: ',' expected after '\"'"),
}


@pytest.mark.parametrize("case", GOLD_CASES, ids=list(GOLD_CASES))
def test_broken_gold_csv_is_refused_at_its_line(tmp_path, case):
    text, line, reason = GOLD_CASES[case]
    p = _write(tmp_path, "gold.csv", text)
    with pytest.raises(InputError, match=re.escape(reason)) as e:
        load_gold(p)
    assert (e.value.path, e.value.line) == (str(p), line)
    assert str(e.value).startswith(f"{p}:{line}: ")


def test_the_intact_file_and_the_real_gold_load():
    p_docs = load_gold(GOLD)
    assert len(p_docs) == len(ROWS) == 216
    assert [d.line for d in p_docs[:2]] == [2, 2 + ROWS[0][1].count("\n") + 1]  # lines of records, not rows


def test_gold_with_crlf_line_ends_and_a_bom_loads(tmp_path):
    p = tmp_path / "gold.csv"
    p.write_bytes(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode())
    assert [d.paper_id for d in load_gold(p)] == [r[0] for r in SMALL]


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(min_value=LAST_START + 1, max_value=len(GOOD) - 1))
def test_a_gold_file_cut_anywhere_in_its_last_record_never_loses_a_relation_silently(tmp_path_factory, cut):
    whole = {d.paper_id: d.gold for d in load_gold(_write(tmp_path_factory.mktemp("g"), "whole.csv", GOOD))}
    p = _write(tmp_path_factory.mktemp("g"), "cut.csv", GOOD[:cut])
    try:
        docs = load_gold(p)
    except InputError as e:
        assert e.line == LAST_LINE
        return
    assert {d.paper_id: d.gold for d in docs} == whole  # only a cut inside the unused last column can load


PRED_ROWS = [[r[0], r[REL]] for r in SMALL]
PRED_GOOD = _csv(PRED_ROWS, ["paper_id", "readable_relations"])
PRED_CASES = {
    "cut inside the relations": (PRED_GOOD[:-20], 5, "unterminated quote"),
    "quote never closed": (PRED_GOOD + f'{SMALL[0][0]},"{{\n', 6, "unterminated quote"),
    "one field short": (_csv([*PRED_ROWS[:-1], PRED_ROWS[-1][:1]], ["paper_id", "readable_relations"]), 5,
                        "record has 1 field but the header has 2"),
    "an extra field": (_csv([PRED_ROWS[0], [*PRED_ROWS[1], "x"]], ["paper_id", "readable_relations"]), 3,
                       "record has 3 fields but the header has 2"),
    "missing column": (PRED_GOOD.replace("readable_relations", "relations", 1), 1, "missing column"),
    "relations nested 5000 deep": (_csv([[SMALL[0][0], "[" * 5000 + "]" * 5000]], ["paper_id", "readable_relations"]),
                                   2, "nested too deeply"),
}


@pytest.mark.parametrize("case", PRED_CASES, ids=list(PRED_CASES))
def test_broken_prediction_csv_is_refused_at_its_line(tmp_path, case):
    text, line, reason = PRED_CASES[case]
    p = _write(tmp_path, "pred.csv", text)
    with pytest.raises(InputError, match=re.escape(reason)) as e:
        load_predictions(p, [r[0] for r in SMALL])
    assert (e.value.path, e.value.line) == (str(p), line)


def test_intact_prediction_csv_matches_the_gold_relations(tmp_path):
    p = _write(tmp_path, "pred.csv", PRED_GOOD)
    lp = load_predictions(p, [r[0] for r in SMALL])
    gold = {d.paper_id: d.gold for d in load_gold(_write(tmp_path, "g.csv", GOOD))}
    assert {k: v.relations for k, v in lp.predictions.items()} == gold
    assert json.loads(PRED_ROWS[-1][1])  # the last prediction really carries a relation
