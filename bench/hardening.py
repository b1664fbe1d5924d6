"""Hostile and careless input against the CLI: does every failure end in one clear error, with nothing half written?

Four sections, each printed as a table (goal in brackets):

1. **Bad inputs** (>= 150 cases, all clear, 0 tracebacks, 0 partial writes): broken gold and prediction files
   (truncated, unterminated quotes, invalid UTF-8, JSON nested 100,000 deep, lone surrogates, wrong types, huge
   files), hostile run names, review arguments, review imports with wrong field types, bad `--db` / `--out` /
   `--judge-log` paths. Each case runs on a fresh copy of a scored database; a *clear error* is exit status 2
   (bad input) with an `error:` line, no traceback and no "internal error"; a *partial write* is any change to
   the runs, documents, decisions or reviews after a command that failed.
2. **kill -9 during scoring** (0 half-written runs): `score` subprocesses killed at spread-out moments; afterwards
   every run in the database must be complete (documents, decisions and audited state all there) and
   `PRAGMA integrity_check` must pass.
3. **Concurrent reviews** (0 lost): two processes writing reviews (one by one, then by import) into one run.
4. **Damaged and foreign databases** (all refused clearly, 0 files modified): empty, garbage, truncated, corrupt,
   another application's SQLite files, newer schemas, folders; read-only databases must still list and export.
5. **Round 2** (issue 27; goal 0 tracebacks, 0 silent acceptances, 0 partial writes, 0 files modified on refusal):
   every module of `devtools/hardening_cases/` (one per surface), each case judged by the rule in its `__init__.py`
   (`judge_case2`) on a fresh database copy in a folder of its own.
6. **Round 3** (issue 34; same goal, counted apart): every `devtools/hardening_cases/r3_*.py` module, run and judged as
   round 2's. The kill section also kills `report`, `assign`, `plan`, `import-reviews` and `judge-batch import` at
   random points (`--command-kills` each): nothing half-written.

Cases of section 1 and 4 run in processes forked from this one after `audit.cli` is imported (the CLI's imports
take ~2 s, which would make 200 cases take minutes); `--exec` runs each as `python -m audit` instead. Sections 2
and 3 always use fresh interpreters.

    python bench/hardening.py [--exec] [--only inputs,kill,concurrent,damaged,round2,round3] [--kills 17]
        [--command-kills 6] [--reviews 1500]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import copy_db, print_table, verdict  # noqa: E402
from devtools.hardening_runner import (  # noqa: E402
    round2_rows,
    round3_modules,
    round3_notes,
    run_cli,
    section_round2,
    snapshot,
)

DATA = ROOT / "data" / "chimera"
GOLD, PRED, LOG = DATA / "eval.csv", DATA / "pred_mixed.jsonl", DATA / "judge_mixed.jsonl"
BASE_RUN = "base"
DEEP = 100_000


@dataclass
class Case:
    """One bad-input command. `argv` may contain `{db}` (the case's database copy) and bytes (raw argv)."""

    group: str
    name: str
    argv: list[str | bytes]
    env: dict[str, str] = field(default_factory=dict)
    db: str = "copy"
    """`copy`: a fresh copy of the scored base database; `none`: the argv names its own `--db`."""


@dataclass
class Result:
    case: Case
    status: int
    stderr: str
    seconds: float

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr

    @property
    def clear(self) -> bool:
        lines = [x for x in self.stderr.strip().splitlines() if x.strip()]
        return (self.status == 2 and not self.traceback and bool(lines) and "internal error" not in self.stderr
                and any(x.startswith("error:") or ": error:" in x for x in lines))


# ---------------------------------------------------------------- running commands


# ---------------------------------------------------------------- inputs


def _records() -> tuple[list[str], list[list[str]]]:
    with GOLD.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def _csv_text(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return out.getvalue()


def _nested(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


def build_inputs(d: Path) -> dict[str, Path]:
    """Write every broken input file into `d`; returns them by name."""
    d.mkdir(parents=True, exist_ok=True)
    header, rows = _records()
    rel_col = header.index("readable_relations")
    with_rel = [r for r in rows if r[rel_col] not in ("", "{}")]
    first = [r for r in rows[:9] if r not in with_rel[-1:]]
    small = [*first, with_rel[-1]]  # the last record has a relation: cutting it must not go unnoticed
    small_ids = [r[0] for r in small]
    good_gold = _csv_text(header, small)
    preds = {json.loads(x)["paper_id"]: x for x in PRED.read_text(encoding="utf-8").splitlines()}
    good_pred = "".join(preds[i] + "\n" for i in small_ids if i in preds)
    first_pred = json.loads(good_pred.splitlines()[0])
    pid = first_pred["paper_id"]
    files: dict[str, bytes | str] = {"gold_ok.csv": good_gold, "pred_ok.jsonl": good_pred}

    last_start = good_gold.rstrip("\n").rfind("\n" + small[-1][0] + ",") + 1
    last = good_gold[last_start:]
    text_end = last.index('",', len(small[-1][0]) + 3) + 2
    rel_pos = last.index(small[-1][rel_col].replace('"', '""')[:5]) if '"' in last else 0
    for name, cut in (("inside_text", last_start + 40), ("after_text", last_start + text_end),
                      ("inside_relations", last_start + rel_pos + 12), ("after_id", last_start + len(small[-1][0]) + 1),
                      ("before_last_field", len(good_gold.rstrip("\n")) - 3)):
        files[f"gold_cut_{name}.csv"] = good_gold[:cut]
    cls = small[-1][header.index("document_class")]
    files["gold_unterminated_quote_last.csv"] = good_gold[:last_start] + last.replace(f",{cls},", f',"{cls},', 1)
    text4 = small[3][1].replace('"', '""')
    files["gold_unterminated_quote_mid.csv"] = good_gold.replace(text4 + '",', text4 + ",", 1)
    files["gold_stray_quote_mid.csv"] = good_gold.replace(f"\n{small[5][0]},", f'\n"{small[5][0]},', 1)
    files["gold_missing_columns.csv"] = "paper_id,text\n1,abc\n"
    files["gold_header_only.csv"] = ",".join(header) + "\n"
    files["gold_empty.csv"] = ""
    files["gold_bom_only.csv"] = "\ufeff"
    files["gold_garbage.csv"] = random.Random(1).randbytes(5000)
    files["gold_bad_utf8.csv"] = good_gold.encode()[:2000] + b"\xff\xfe" + good_gold.encode()[2000:]
    files["gold_nul_in_id.csv"] = good_gold.replace(f"\n{small[2][0]},", f"\n{small[2][0]}\x00,", 1)
    files["gold_duplicate_id.csv"] = _csv_text(header, [*small, small[0]])
    files["gold_empty_id.csv"] = _csv_text(header, [*small, ["", *small[0][1:]]])
    files["gold_extra_field.csv"] = _csv_text(header, [*small[:-1], [*small[-1], "extra"]])
    files["gold_short_record_mid.csv"] = _csv_text(header, [*small[:4], small[4][:5], *small[5:]])

    def gold_with(col: str, value: str) -> str:
        r = list(small[2])
        r[header.index(col)] = value
        return _csv_text(header, [*small[:2], r, *small[3:]])

    files["gold_relations_not_json.csv"] = gold_with("readable_relations", "{combination: [")
    files["gold_relations_list.csv"] = gold_with("readable_relations", "[1, 2]")
    files["gold_relations_deep_list.csv"] = gold_with("readable_relations", _nested(DEEP))
    files["gold_relations_deep_1000.csv"] = gold_with("readable_relations", _nested(1000))
    files["gold_relations_deep_object.csv"] = gold_with("readable_relations", '{"a":' * 5000 + "1" + "}" * 5000)
    files["gold_relations_huge_int.csv"] = gold_with("readable_relations", '{"combination": ' + "9" * 5000 + "}")
    files["gold_relations_surrogate.csv"] = gold_with("readable_relations",
                                                      '{"combination": [{"comb-element": ["a\\ud800", "b"]}]}')
    files["gold_relations_unknown_type.csv"] = gold_with("readable_relations", '{"fusion": [{"x": ["a"]}]}')
    files["gold_entities_deep.csv"] = gold_with("entities", _nested(DEEP))
    files["gold_entities_wrong.csv"] = gold_with("entities", '[{"start": "x"}]')
    files["gold_entities_surrogate.csv"] = gold_with(
        "entities", '[{"start": 0, "end": 1, "tag": "comb-element", "value": "\\udfff"}]')

    lines = good_pred.splitlines()
    def pred(*replace: tuple[int, str]) -> str:
        ls = list(lines)
        for i, text in replace:
            ls[i] = text
        return "".join(x + "\n" for x in ls)

    def rec(relations: object, paper: object = pid) -> str:
        return json.dumps({"paper_id": paper, "relations": relations}, ensure_ascii=False)

    files["pred_truncated_last.jsonl"] = good_pred[:-25]
    files["pred_invalid_json.jsonl"] = pred((1, "{broken"))
    files["pred_deep_list.jsonl"] = pred((0, f'{{"paper_id": "{pid}", "relations": {_nested(DEEP)}}}'))
    files["pred_deep_line.jsonl"] = pred((0, _nested(DEEP)))
    files["pred_deep_object.jsonl"] = pred((0, '{"a":' * DEEP + "1" + "}" * DEEP))
    files["pred_deep_1000.jsonl"] = pred((0, _nested(1000)))
    files["pred_surrogate_span.jsonl"] = pred((0, rec({"combination": [{"comb-element": ["x\ud800y", "b"]}]})))
    files["pred_surrogate_id.jsonl"] = pred((0, rec({}, "\udc80")))
    files["pred_bad_utf8.jsonl"] = good_pred.encode()[:100] + b"\xc3\x28" + good_pred.encode()[100:]
    files["pred_latin1.jsonl"] = rec({"combination": [{"comb-element": ["caf\u00e9", "b"]}]}).encode("latin-1") + b"\n"
    files["pred_nul.jsonl"] = pred((0, rec({}) + "\x00"))
    files["pred_id_number.jsonl"] = pred((0, rec({}, 2105.13065)))
    files["pred_id_null.jsonl"] = pred((0, rec({}, None)))
    files["pred_unknown_id.jsonl"] = pred((0, rec({}, "9999.99999")))
    files["pred_duplicate.jsonl"] = good_pred + lines[0] + "\n"
    files["pred_relations_string.jsonl"] = pred((0, rec("combination")))
    files["pred_relations_missing.jsonl"] = pred((0, json.dumps({"paper_id": pid})))
    files["pred_relations_empty_list.jsonl"] = pred((0, rec({"combination": []})))
    files["pred_span_number.jsonl"] = pred((0, rec({"combination": [{"comb-element": [1, 2]}]})))
    files["pred_span_empty.jsonl"] = pred((0, rec({"combination": [{"comb-element": ["  ", "b"]}]})))
    files["pred_span_object.jsonl"] = pred((0, rec({"combination": [{"comb-element": [{"a": 1}]}]})))
    files["pred_wrong_entity.jsonl"] = pred((0, rec({"combination": [{"inspiration-src": ["a"]}]})))
    files["pred_huge_int.jsonl"] = pred((0, '{"paper_id": "x", "relations": ' + "1" * 10000 + "}"))
    files["pred_array.jsonl"] = pred((0, "[1, 2, 3]"))
    files["pred_string.jsonl"] = pred((0, '"just a string"'))
    files["pred_empty.jsonl"] = ""
    files["pred_blank_lines.jsonl"] = "\n\n  \n"
    files["pred_garbage.jsonl"] = random.Random(2).randbytes(3000)
    files["pred_nan.jsonl"] = pred((0, '{"paper_id": NaN, "relations": {}}'))
    pred_header = "paper_id,readable_relations\n"
    pred_rows = _csv_text(["paper_id", "readable_relations"], [
        [json.loads(x)["paper_id"], json.dumps(json.loads(x)["relations"])] for x in lines]).split("\n", 1)[1]
    files["pred_ok.csv"] = pred_header + pred_rows
    files["pred_csv_truncated.csv"] = (pred_header + pred_rows)[:-30]
    files["pred_csv_unterminated.csv"] = pred_header + pred_rows.replace(',"', ',"""', 1)
    files["pred_csv_missing_column.csv"] = "paper_id,relations\n" + pred_rows
    files["pred_csv_deep.csv"] = pred_header + f'{pid},"{_nested(DEEP)}"\n'
    files["pred_csv_extra_field.csv"] = pred_header + pred_rows.replace("\n", ",extra\n", 1)
    pred_bytes = (pred_header + pred_rows).encode()
    files["pred_csv_bad_utf8.csv"] = pred_bytes[:60] + b"\x80" + pred_bytes[60:]

    log_lines = LOG.read_text(encoding="utf-8").splitlines()
    files["log_empty.jsonl"] = ""
    files["log_deep.jsonl"] = _nested(DEEP) + "\n"
    files["log_bad_utf8.jsonl"] = log_lines[0].encode()[:-5] + b"\xff\xff" + b'"}\n'
    files["log_invalid_json.jsonl"] = log_lines[0] + "\n{oops\n"
    files["log_huge_int.jsonl"] = log_lines[0][:-1] + ', "x": ' + "9" * 5000 + "}\n"
    files["log_wrong_answer.jsonl"] = json.dumps({**json.loads(log_lines[0]), "answer": ["yes"]}) + "\n"

    out: dict[str, Path] = {}
    for name, content in files.items():
        p = d / name
        if isinstance(content, str):
            p.write_text(content, encoding="utf-8", errors="surrogatepass")
        else:
            p.write_bytes(content)
        out[name] = p
    for name, size in (("gold_huge.csv", 600 * 2**20), ("pred_huge.jsonl", 600 * 2**20)):
        p = d / name
        with p.open("wb") as f:
            f.truncate(size)  # sparse: the size limit must refuse it before reading a byte
        out[name] = p
    (d / "a_folder").mkdir(exist_ok=True)
    out["a_folder"] = d / "a_folder"
    return out


def review_lines(base_db: Path) -> tuple[dict, list[dict]]:
    """A valid review line of the base run, and the decision rows it can point at."""
    with sqlite3.connect(base_db) as c:
        decs = c.execute("SELECT d.id, d.doc_id, d.kind, d.type, d.left, d.right FROM decisions d JOIN runs r "
                         "ON r.id = d.run_id WHERE r.name = ? ORDER BY d.id LIMIT 50", [BASE_RUN]).fetchall()
    c.close()
    _, doc, kind, typ, left, right = decs[0]
    good = {"uid": "u-" + "0" * 30, "doc": doc, "kind": kind, "type": typ, "left": left, "right": right,
            "reviewer": "ana", "label": "no-match", "role": "reviewer", "note": None, "blind": False,
            "created": "2026-01-31T09:30:00+00:00"}
    return good, [dict(zip(("id", "doc", "kind", "type", "left", "right"), d, strict=True)) for d in decs]


def build_review_files(d: Path, good: dict) -> dict[str, Path]:
    variants: dict[str, object] = {
        "doc_list": {"doc": [good["doc"]]}, "doc_object": {"doc": {"id": 1}}, "doc_number": {"doc": 2105.13065},
        "kind_null": {"kind": None}, "left_number": {"left": 3}, "right_list": {"right": []},
        "created_null": {"created": None}, "created_number": {"created": 20260131},
        "created_words": {"created": "yesterday"}, "created_date_only": {"created": "2026-01-31"},
        "created_no_zone": {"created": "2026-01-31T09:30:00"}, "created_bad_month": {"created": "2026-13-01T00:00Z"},
        "uid_null": {"uid": None}, "uid_number": {"uid": 7}, "uid_empty": {"uid": ""},
        "uid_huge": {"uid": "u" * 10_000},
        "uid_newline": {"uid": "a\nb"},
        "note_object": {"note": {"text": "x"}}, "note_list": {"note": ["x"]}, "note_huge": {"note": "n" * 6000},
        "note_surrogate": {"note": "bad \ud800 text"}, "reviewer_null": {"reviewer": None},
        "reviewer_empty": {"reviewer": "   "}, "reviewer_long": {"reviewer": "r" * 101},
        "reviewer_control": {"reviewer": "ana\u202eevil"}, "reviewer_surrogate": {"reviewer": "\udc00"},
        "reviewer_number": {"reviewer": 12},
        "blind_no": {"blind": "no"}, "blind_two": {"blind": 2}, "blind_null": {"blind": None},
        "label_number": {"label": 1}, "label_unknown": {"label": "maybe"}, "role_bogus": {"role": "boss"},
        "role_list": {"role": ["reviewer"]}, "unknown_decision": {"left": "no such span"},
        "wrong_kind": {"kind": "relation"},
    }
    out = {}
    d.mkdir(parents=True, exist_ok=True)
    for name, change in variants.items():
        p = d / f"rev_{name}.jsonl"
        p.write_text(json.dumps(good) + "\n" + json.dumps({**good, "uid": "u-second", **change}) + "\n",
                     encoding="utf-8", errors="surrogatepass")
        out[name] = p
    missing = dict(good)
    del missing["created"]
    raw: dict[str, bytes | str] = {
        "missing_field": json.dumps(missing) + "\n", "not_object": "[1, 2]\n", "string_line": '"review"\n',
        "invalid_json": json.dumps(good) + "\n{nope\n", "truncated": json.dumps(good)[:-10],
        "deep": _nested(DEEP) + "\n", "deep_object": '{"a":' * 5000 + "1" + "}" * 5000 + "\n",
        "bad_utf8": json.dumps({**good, "note": "caf\u00e9"}, ensure_ascii=False).encode("latin-1") + b"\n",
        "garbage": random.Random(3).randbytes(2000), "empty": "", "blank": "\n\n",
        "huge_int": json.dumps(good)[:-1] + ', "x": ' + "7" * 6000 + "}\n",
    }
    for name, content in raw.items():
        p = d / f"rev_{name}.jsonl"
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
        out[name] = p
    return out


def other_run_reviews(base_db: Path, d: Path) -> Path:
    """An export of the base run's reviews, to be imported into the second run of the same database."""
    from audit.review.reviews_io import export_reviews
    from audit.store.database import open_db

    db = open_db(base_db)
    p = d / "rev_uid_of_other_run.jsonl"
    text = export_reviews(db, BASE_RUN)
    db.conn.close()
    p.write_text(text, encoding="utf-8")
    return p


# ---------------------------------------------------------------- section 1: bad inputs


def build_cases(work: Path, base_db: Path) -> list[Case]:
    files = build_inputs(work / "inputs")
    good, decs = review_lines(base_db)
    revs = build_review_files(work / "reviews", good)
    revs["uid_of_other_run"] = other_run_reviews(base_db, work / "reviews")
    f = {k: str(v) for k, v in files.items()}
    gold, pred = f["gold_ok.csv"], f["pred_ok.jsonl"]
    cases: list[Case] = []

    def score(name: str, *extra: str | bytes, g: str = gold, p: str = pred, judge: str = "exact",
              group: str = "score inputs", env: dict | None = None) -> None:
        argv: list[str | bytes] = ["score", "chimera", "--db", "{db}", "--gold", g, "--pred", p, "--judge", judge,
                                   *extra]
        cases.append(Case(group, name, argv, env or {}))

    for k in files:
        if k.startswith("gold_") and k != "gold_ok.csv":
            score(k, g=f[k])
        elif k.startswith("pred_") and k not in ("pred_ok.jsonl", "pred_ok.csv"):
            score(k, p=f[k])
        elif k.startswith("log_"):
            score(k, judge=f"replay:{f[k]}", group="judge")
    score("gold is a folder", g=f["a_folder"])
    score("pred is a folder", p=f["a_folder"])
    score("gold missing", g=str(work / "nope.csv"))
    score("gold is /dev/null", g="/dev/null")
    score("replay log missing", judge=f"replay:{work / 'nope.jsonl'}", group="judge")
    score("replay log is a folder", judge=f"replay:{f['a_folder']}", group="judge")
    score("judge spec unknown", judge="gpt-5-turbo", group="judge")
    score("judge spec empty", judge="", group="judge")
    score("judge spec fuzzy:abc", judge="fuzzy:abc", group="judge")
    score("judge spec fuzzy:1000", judge="fuzzy:1000", group="judge")
    score("judge spec surrogate", judge="replay:\udcff", group="judge")
    score("openai connection refused", judge="openai:test-model", group="judge",
          env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-test", "REJUDGE_JUDGE_TIMEOUT": "5"})
    score("unknown task option", "--bogus", "1", group="arguments")

    for name, run in (("10,000-character run name", "r" * 10_000), ("121-character run name", "r" * 121),
                      ("run ../pwned", "../pwned"), ("run /tmp/abs", "/tmp/abs"), ("run a/b", "a/b"),
                      ("run ..", ".."), ("run .", "."), ("run empty", ""), ("run spaces", "   "),
                      ("run tab", "\t"), ("run newline", "a\nb"), ("run RTL override", "safe\u202etxt.exe"),
                      ("run zero-width", "a\u200bb"), ("run leading space", " a"), ("run trailing space", "a "),
                      ("run backslash", "a\\b"), ("run existing", BASE_RUN), ("run lone surrogate", "a\udcffb")):
        score(name, "--run", run, group="run names")
    score("run invalid UTF-8 bytes", "--run", b"run\xff\xfe", group="run names")
    score("judge-log is a folder", "--judge-log", f["a_folder"], group="paths")
    score("judge-log in a missing folder", "--judge-log", str(work / "missing" / "log.jsonl"), group="paths")

    dec = str(decs[0]["id"])
    def review(name: str, *changes: str | bytes, group: str = "review") -> None:
        base = {"--run": BASE_RUN, "--decision": dec, "--label": "no-match", "--reviewer": "ana"}
        argv: list[str | bytes] = ["review", "--db", "{db}"]
        extra = list(changes)
        for i in range(0, len(extra), 2):
            base[extra[i]] = extra[i + 1]  # type: ignore[index]
        for k, v in base.items():
            if v is not None:
                argv += [k, v]
        cases.append(Case(group, name, argv))

    for name, value in (("2**70", str(2**70)), ("-1", "-1"), ("0", "0"), ("abc", "abc"), ("1e3", "1e3"),
                        ("unknown id", "987654321"), ("2**63", str(2**63)), ("empty", ""), ("1.5", "1.5")):
        review(f"--decision {name}", "--decision", value)
    for name, value in (("bogus", "maybe"), ("empty", ""), ("wrong kind's label", "yes"), ("surrogate", "\udcff")):
        review(f"--label {name}", "--label", value)
    for name, value in (("empty", ""), ("spaces", "   "), ("101 chars", "r" * 101), ("10,000 chars", "r" * 10_000),
                        ("newline", "ana\nbo"), ("RTL override", "ana\u202e"), ("NUL-like control", "ana\x07"),
                        ("surrogate", "\udcff")):
        review(f"--reviewer {name}", "--reviewer", value)
    review("--reviewer invalid UTF-8 bytes", "--reviewer", b"an\xffa")
    review("--note invalid UTF-8 bytes", "--note", b"caf\xe9")
    review("--note lone surrogate", "--note", "x\udc80")
    review("--note 5,001 chars", "--note", "n" * 5001)
    review("--role boss", "--role", "boss")
    review("--run unknown", "--run", "nope")
    review("--run 10,000 chars", "--run", "r" * 10_000)
    review("--run invalid UTF-8 bytes", "--run", b"\xff")

    for name, p in revs.items():
        cases.append(Case("import-reviews", name,
                          ["import-reviews", "--db", "{db}", "--run", "other" if name == "uid_of_other_run"
                           else BASE_RUN, str(p)]))
    for name, p in (("missing file", str(work / "nope.jsonl")), ("folder", f["a_folder"]),
                    ("huge sparse file", f["pred_huge.jsonl"])):
        cases.append(Case("import-reviews", name, ["import-reviews", "--db", "{db}", "--run", BASE_RUN, p]))
    cases.append(Case("import-reviews", "unknown run", ["import-reviews", "--db", "{db}", "--run", "nope",
                                                        str(revs["doc_list"])]))

    missing = str(work / "missing-folder" / "out.json")
    for fmt in ("json", "csv", "latex", "judgelog"):
        cases.append(Case("paths", f"export {fmt} --out into a missing folder",
                          ["export", "--db", "{db}", "--run", BASE_RUN, "--format", fmt, "--out", missing]))
    cases.append(Case("paths", "export --out a folder", ["export", "--db", "{db}", "--run", BASE_RUN, "--out",
                                                         f["a_folder"]]))
    cases.append(Case("paths", "export --format bogus", ["export", "--db", "{db}", "--run", BASE_RUN, "--format",
                                                         "docx"]))
    cases.append(Case("paths", "export-reviews --out into a missing folder",
                      ["export-reviews", "--db", "{db}", "--run", BASE_RUN, "--out", missing]))
    cases.append(Case("paths", "delete-run --exported into a missing folder",
                      ["delete-run", "--db", "{db}", "--run", BASE_RUN, "--exported", missing]))
    cases.append(Case("paths", "delete-run with reviews, no --force", ["delete-run", "--db", "{db}", "--run",
                                                                       BASE_RUN]))
    cases.append(Case("paths", "delete-run unknown run", ["delete-run", "--db", "{db}", "--run", "nope"]))
    for cmd in ("decisions", "agreement", "export", "export-reviews"):
        cases.append(Case("lookups", f"{cmd} unknown run", [cmd, "--db", "{db}", "--run", "nope"]))
        cases.append(Case("lookups", f"{cmd} 10,000-char run", [cmd, "--db", "{db}", "--run", "x" * 10_000]))
    cases.append(Case("lookups", "decisions --doc invalid UTF-8", ["decisions", "--db", "{db}", "--run", BASE_RUN,
                                                                  "--doc", b"\xff\xfe"]))
    cases.append(Case("lookups", "compare unknown other", ["compare", "--db", "{db}", "--run", BASE_RUN, "--other",
                                                           "nope"]))
    cases.append(Case("lookups", "no subcommand", ["--db", "{db}"]))
    cases.append(Case("lookups", "unknown subcommand", ["frobnicate", "--db", "{db}"]))

    from scoring.families import TASKS

    deep = work / "inputs" / "deep.jsonl"
    deep.write_text("[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    bad_bytes = work / "inputs" / "bad_bytes.jsonl"
    bad_bytes.write_bytes(b'{"id": "caf\xe9"}\n')
    for task in TASKS.values():  # the other families' loaders (owned elsewhere), reported in their own group
        if task.name == "chimera":
            continue
        for label, bad in (("JSON nested 100,000 deep", deep), ("invalid UTF-8", bad_bytes)):
            for spec in (s for s in task.inputs if not s.folder):
                argv: list[str | bytes] = ["score", task.name, "--db", "{db}", "--judge", task.judge_specs[0]]
                for other in task.inputs:
                    if other.required or other is spec:
                        argv += [f"--{other.name}", str(bad if other is spec else
                                                        (work / "inputs" / "a_folder" if other.folder else bad))]
                cases.append(Case(f"other families: {task.name}", f"--{spec.name} {label}", argv))

    for name, setup in DB_ARGS.items():
        cases.append(Case("--db", name, ["runs", "--db", setup(work)], db="none"))
        cases.append(Case("--db", f"{name} (score)", ["score", "chimera", "--db", setup(work), "--gold", gold,
                                                      "--pred", pred, "--judge", "exact"], db="none"))
    return cases


def _db_file(name: str, content: bytes) -> Callable[[Path], str]:
    def make(work: Path) -> str:
        p = work / "dbs" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)
        return str(p)
    return make


DB_ARGS: dict[str, Callable[[Path], str]] = {
    "--db is a folder": lambda work: str(work / "inputs" / "a_folder"),
    "--db is a text file": _db_file("text.db", b"hello, this is not a database\n" * 10),
    "--db is a CSV": lambda work: str(work / "inputs" / "gold_ok.csv"),
    "--db is 0 bytes": _db_file("empty.db", b""),
    "--db is garbage": _db_file("garbage.db", random.Random(4).randbytes(8192)),
    "--db is /dev/null": lambda _work: "/dev/null",
    "--db under a file": lambda work: str(work / "inputs" / "gold_ok.csv" / "x.db"),
}


def section_inputs(work: Path, base_db: Path, fork: bool) -> tuple[list[Result], dict]:
    cases = build_cases(work, base_db)
    results: list[Result] = []
    partial: list[str] = []
    case_db = work / "case.db"
    for c in cases:
        argv = list(c.argv)
        if c.db == "copy":
            copy_db(base_db, case_db)
            argv = [str(case_db) if a == "{db}" else a for a in argv]
            before = snapshot(case_db)
        t0 = time.perf_counter()
        status, err = run_cli(argv, c.env, fork)
        r = Result(c, status, err, time.perf_counter() - t0)
        results.append(r)
        if c.db == "copy" and status != 0 and snapshot(case_db) != before:
            partial.append(f"{c.group}/{c.name}")
    return results, {"partial": partial}


# ---------------------------------------------------------------- section 2: kill -9


def section_kill(work: Path, base_db: Path, points: int, seed: int) -> dict:
    """Kill `score` subprocesses at spread-out moments; the database must hold complete runs only."""
    from bench.common import data_paths

    paths = data_paths(1000, seed=0)
    db = work / "kill.db"
    copy_db(base_db, db)
    argv = [sys.executable, "-m", "audit", "score", "chimera", "--db", str(db), "--gold", str(paths["gold"]),
            "--pred", str(paths["pred"]), "--judge", f"replay:{paths['log']}"]
    t0 = time.perf_counter()
    subprocess.run([*argv, "--run", "timing"], cwd=ROOT, capture_output=True, check=True)
    full = time.perf_counter() - t0
    rng = random.Random(seed)
    stored = absent = half = finished = 0
    problems: list[str] = []
    wal = Path(f"{db}-wal")
    timed = points - points // 2
    for k in range(points):
        proc = subprocess.Popen([*argv, "--run", f"k{k}"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        if k < timed:  # at a moment spread over the whole command (the imports take about the first third)
            time.sleep(full * (0.3 + 0.8 * (k + rng.random()) / timed))
        else:  # while the run's transaction is being written: the WAL passes a threshold (16 KiB .. 4 MiB)
            threshold = 16 * 2**10 * 256 ** ((k - timed) / max(1, points - timed - 1))
            start = wal.stat().st_size if wal.exists() else 0
            deadline = time.monotonic() + 3 * full
            while proc.poll() is None and time.monotonic() < deadline:
                if wal.exists() and wal.stat().st_size - start > threshold:
                    break
                time.sleep(0.0005)
        finished += proc.poll() is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with sqlite3.connect(db) as c:
            ok = c.execute("PRAGMA integrity_check").fetchone()[0]
            bad = c.execute(
                "SELECT r.name FROM runs r WHERE r.n_decisions != (SELECT COUNT(*) FROM decisions d WHERE "
                "d.run_id = r.id) OR r.n_docs != (SELECT COUNT(*) FROM documents d WHERE d.run_id = r.id) OR NOT "
                "EXISTS (SELECT 1 FROM audit_state a WHERE a.run_id = r.id)").fetchall()
            orphans = c.execute("SELECT COUNT(*) FROM decisions WHERE run_id NOT IN (SELECT id FROM runs)"
                                ).fetchone()[0]
            here = c.execute("SELECT COUNT(*) FROM runs WHERE name = ?", [f"k{k}"]).fetchone()[0]
        c.close()
        if ok != "ok" or bad or orphans:
            half += 1
            problems.append(f"k{k}: integrity {ok}, incomplete {bad}, orphan decisions {orphans}")
        stored += here
        absent += not here
    p = subprocess.run([sys.executable, "-m", "audit", "runs", "--db", str(db)], cwd=ROOT, capture_output=True,
                       text=True)
    return {"points": points, "stored": stored, "absent": absent, "half": half, "problems": problems,
            "finished": finished,
            "full_s": full, "reopen_ok": p.returncode == 0}


def _table_counts(db: Path) -> dict[str, int]:
    """Rows of every table (what a killed command may have changed: all of it or none)."""
    with sqlite3.connect(db) as c:
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                          "'sqlite_%'")]
        counts = {t: c.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    c.close()
    return counts


def kill_commands(work: Path, base_db: Path) -> dict[str, tuple[list[str], Path | None]]:
    """The commands issue 34 kills at random points (argv after `--db DB`; the file each writes, if any)."""
    good, _ = review_lines(base_db)
    with sqlite3.connect(base_db) as c:
        decs = c.execute("SELECT d.doc_id, d.kind, d.type, d.left, d.right FROM decisions d JOIN runs r ON "
                         "r.id = d.run_id WHERE r.name = ? ORDER BY d.id", [BASE_RUN]).fetchall()
    c.close()
    reviews = work / "kill-reviews.jsonl"
    reviews.write_text("".join(json.dumps({**good, "uid": f"kill-{i}", "doc": d[0], "kind": d[1], "type": d[2],
                                           "left": d[3], "right": d[4], "reviewer": f"r{i % 7}"}) + "\n"
                               for i, d in enumerate(decs)), encoding="utf-8")
    batch = ["--task", "chimera", "--gold", str(GOLD), "--pred", str(PRED), "--judge", "openai:gpt-4o-mini"]
    requests, results = work / "kill-requests.jsonl", work / "kill-results.jsonl"
    scratch = work / "kill-export.db"
    copy_db(base_db, scratch)
    subprocess.run([sys.executable, "-m", "audit", "--db", str(scratch), "judge-batch", "export", *batch, "--out",
                    str(requests)], cwd=ROOT, check=True, capture_output=True, env={**os.environ,
                                                                                   "OPENAI_API_KEY": "sk-bench"})
    lines = []
    for i, line in enumerate(requests.read_text(encoding="utf-8").splitlines()):
        r = json.loads(line)
        body = {"model": r["body"]["model"], "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "yes" if i % 2 else "no"}}], "usage": {"prompt_tokens": 9,
                                                                                  "completion_tokens": 1}}
        lines.append(json.dumps({"id": f"b{i}", "custom_id": r["custom_id"], "error": None,
                                 "response": {"status_code": 200, "body": body}}))
    results.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    report = work / "kill-report.html"
    return {
        "report": (["report", "--run", BASE_RUN, "--out", str(report), "--force"], report),
        "assign": (["assign", "--run", BASE_RUN, "--reviewers", "ana,bo,cy", "--double-code", "0.3"], None),
        "plan": (["plan", "--run", BASE_RUN, "--seed", "3"], None),
        "import-reviews": (["import-reviews", "--run", BASE_RUN, str(reviews)], None),
        "judge-batch import": (["judge-batch", "import", str(results), *batch], None),
    }


def section_kill_commands(work: Path, base_db: Path, points: int, seed: int) -> list[dict]:
    """kill -9 at random points during `report`, `assign`, `plan`, `import-reviews` and `judge-batch import`
    (issue 34): afterwards the database passes `PRAGMA integrity_check` and every table holds either the rows it
    held before or those an uninterrupted command leaves (nothing half-written); the output file is absent or
    complete (a kill while it is written leaves a hidden temporary file beside it, counted apart: the target is
    never half there). Half the kills at moments spread over the command's duration, half once it starts writing
    (its WAL grows, or its output's temporary file appears)."""
    rng = random.Random(seed)
    out = []
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    for name, (argv, target) in kill_commands(work, base_db).items():
        folder = work / "kill-cmd" / name.replace(" ", "-")
        folder.mkdir(parents=True)
        full_db = folder / "full.db"
        copy_db(base_db, full_db)
        before = _table_counts(full_db)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "audit", "--db", str(full_db), *argv], cwd=ROOT, check=True,
                       capture_output=True, env=env)
        full_s = time.perf_counter() - t0
        after = _table_counts(full_db)
        complete = target.read_text(encoding="utf-8") if target else None
        if target:
            target.unlink()
        row = {"command": name, "points": points, "finished": 0, "stored": 0, "absent": 0, "half": 0,
               "file_complete": 0, "file_absent": 0, "temp_left": 0, "full_s": full_s, "problems": []}
        for k in range(points):
            db = folder / f"k{k}.db"
            copy_db(base_db, db)
            proc = subprocess.Popen([sys.executable, "-m", "audit", "--db", str(db), *argv], cwd=ROOT, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if k % 2 == 0:
                time.sleep(full_s * (0.3 + 0.8 * rng.random()))
            else:  # once the command starts writing: its WAL grows, or its output's temporary file appears
                wal, deadline = Path(f"{db}-wal"), time.monotonic() + 3 * full_s
                while proc.poll() is None and time.monotonic() < deadline:
                    if target and (target.exists() or any(target.parent.glob(f".{target.name}.*.tmp"))):
                        break
                    if not target and wal.exists() and wal.stat().st_size > 0:
                        time.sleep(rng.random() * 0.05)
                        break
                    time.sleep(0.0005)
            row["finished"] += proc.poll() is not None
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            with sqlite3.connect(db) as c:
                ok = c.execute("PRAGMA integrity_check").fetchone()[0]
            c.close()
            now_counts = _table_counts(db)
            if ok != "ok" or now_counts not in (before, after):
                row["half"] += 1
                changed = {t: (before.get(t), n, after.get(t)) for t, n in now_counts.items()
                           if n not in (before.get(t), after.get(t))}
                row["problems"].append(f"{name} k{k}: integrity {ok}; tables neither before nor after: {changed}")
            elif now_counts == after and after != before:
                row["stored"] += 1
            else:
                row["absent"] += 1
            if target:
                temps = [p for p in target.parent.glob(f".{target.name}.*.tmp")]
                row["temp_left"] += len(temps)
                for p in temps:
                    p.unlink()
                if target.exists():
                    text = target.read_text(encoding="utf-8", errors="replace")
                    if text.endswith("</html>\n") and abs(len(text) - len(complete or "")) < 200:
                        row["file_complete"] += 1
                    else:
                        row["half"] += 1
                        row["problems"].append(f"{name} k{k}: {target.name} half-written ({len(text)} bytes)")
                    target.unlink()
                else:
                    row["file_absent"] += 1
        out.append(row)
    return out


# ---------------------------------------------------------------- section 3: concurrent reviews

WRITER = textwrap.dedent("""
    import json, sys, uuid
    sys.path.insert(0, {root!r})
    from audit.store.database import open_db, now
    from audit.review.reviews import add_review
    from audit.review.reviews_io import import_reviews
    db_path, who, n, ids_file, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    decs = json.load(open(ids_file))
    db = open_db(db_path)
    errors = 0
    for i in range(n):
        try:
            add_review(db, {run!r}, decs[i % len(decs)]["id"], "match" if i % 2 else "no-match", who,
                       note=f"{{who}}:{{i}}")
        except Exception as e:
            errors += 1
    with open(out, "w") as f:
        for i in range(n, 3 * n):
            d = decs[i % len(decs)]
            f.write(json.dumps({{"uid": uuid.uuid4().hex, "doc": d["doc"], "kind": d["kind"], "type": d["type"],
                                "left": d["left"], "right": d["right"], "reviewer": who, "label": "match",
                                "role": "reviewer", "note": f"{{who}}:{{i}}", "blind": False,
                                "created": now()}}) + "\\n")
    try:
        import_reviews(db, {run!r}, out)
    except Exception:
        errors += 2 * n
    print(errors)
""")


def section_concurrent(work: Path, base_db: Path, per: int) -> dict:
    db = work / "concurrent.db"
    copy_db(base_db, db)
    _, decs = review_lines(base_db)
    ids = work / "decisions.json"
    ids.write_text(json.dumps(decs))
    script = work / "writer.py"
    script.write_text(WRITER.format(root=str(ROOT), run=BASE_RUN))
    with sqlite3.connect(db) as c:
        before = c.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    c.close()
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, str(script), str(db), who, str(per), str(ids),
                               str(work / f"{who}.jsonl")], stdout=subprocess.PIPE, text=True) for who in ("ana", "bo")]
    errors = sum(int((p.communicate()[0] or "0").strip() or 0) for p in procs)
    elapsed = time.perf_counter() - t0
    with sqlite3.connect(db) as c:
        notes = {r[0] for r in c.execute("SELECT note FROM reviews WHERE reviewer IN ('ana', 'bo') AND note LIKE "
                                         "'%:%'")}
        total = c.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] - before
    c.close()
    expected = {f"{who}:{i}" for who in ("ana", "bo") for i in range(3 * per)}
    return {"written": 2 * 3 * per, "stored": total, "lost": len(expected - notes), "errors": errors,
            "seconds": elapsed}


# ---------------------------------------------------------------- section 4: damaged and foreign databases


def _foreign(path: Path, wal: bool = False, sqlite_utils_app: bool = False, user_version: int = 7,
             tables: bool = True) -> None:
    c = sqlite3.connect(path)
    if wal:
        c.execute("PRAGMA journal_mode = WAL")
    if tables:
        c.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        c.executemany("INSERT INTO notes (body) VALUES (?)", [(f"note {i}",) for i in range(200)])
    if sqlite_utils_app:
        c.execute("CREATE TABLE _sqlite_migrations (migration_set TEXT, name TEXT, applied_at TEXT)")
        c.execute("INSERT INTO _sqlite_migrations VALUES ('otherapp', 'm001', '2026-01-01')")
    c.execute(f"PRAGMA user_version = {user_version}")
    c.commit()
    c.close()


def _rejudge_variant(base_db: Path, path: Path, sql: list[str]) -> None:
    copy_db(base_db, path)
    c = sqlite3.connect(path)
    for s in sql:
        c.execute(s)
    c.commit()
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()


def damaged_states(base_db: Path) -> dict[str, Callable[[Path], None]]:
    """name -> a function writing that database state at the given path."""
    from audit.store.migrations import SCHEMA_VERSION

    size = base_db.stat().st_size
    raw = base_db.read_bytes()

    def write(content: bytes) -> Callable[[Path], None]:
        return lambda p: p.write_bytes(content)

    def corrupt(p: Path) -> None:
        data = bytearray(raw)
        rng = random.Random(5)
        page = 4096
        for start in range(page * 2, len(data), page * 3):
            data[start + 200:start + 1200] = rng.randbytes(1000)
        p.write_bytes(bytes(data))

    return {
        "0-byte file": write(b""),
        "garbage": write(random.Random(6).randbytes(16384)),
        "text file": write(b"rejudge\n" * 100),
        "truncated to half": write(raw[:size // 2]),
        "truncated to the header": write(raw[:100]),
        "truncated mid-page": write(raw[:4096 * 3 + 77]),
        "pages overwritten (header intact)": corrupt,
        "another app's SQLite (rollback journal)": lambda p: _foreign(p),
        "another app's SQLite (WAL)": lambda p: _foreign(p, wal=True),
        "another sqlite-utils app": lambda p: _foreign(p, sqlite_utils_app=True, user_version=0),
        "SQLite without tables, user_version 3": lambda p: _foreign(p, tables=False, user_version=3),
        "newer schema (user_version)": lambda p: _rejudge_variant(base_db, p, [f"PRAGMA user_version = "
                                                                              f"{SCHEMA_VERSION + 1}"]),
        "newer schema (unknown migration)": lambda p: _rejudge_variant(base_db, p, [
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES "
            "('rejudge', 'm099_future', '2030-01-01')"]),
        "read-only file": lambda p: (copy_db(base_db, p), p.chmod(0o444)),
        "read-only folder": lambda p: (copy_db(base_db, p), p.parent.chmod(0o555)),
    }


READ_ONLY_STATES = ("read-only file", "read-only folder")


def section_damaged(work: Path, base_db: Path, fork: bool) -> dict:
    """Each state x each command: refused clearly (reads of a read-only database must work) and file unchanged."""
    gold, pred = str(work / "inputs" / "gold_ok.csv"), str(work / "inputs" / "pred_ok.jsonl")
    rows = []
    commands = {
        "runs": ["runs"], "decisions": ["decisions", "--run", BASE_RUN],
        "export": ["export", "--run", BASE_RUN, "--format", "csv"],
        "review": ["review", "--run", BASE_RUN, "--decision", "1", "--label", "match", "--reviewer", "x"],
        "score": ["score", "chimera", "--gold", gold, "--pred", pred, "--judge", "exact", "--run", "new"],
    }
    totals = {"states": 0, "refused": 0, "files_modified": 0, "tracebacks": 0, "reads_ok": 0, "reads": 0}
    for name, make in damaged_states(base_db).items():
        folder = work / "damaged" / name.replace(" ", "_").replace("'", "").replace("(", "").replace(")", "")
        if folder.exists():
            folder.chmod(0o755)
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        db = folder / "x.db"
        make(db)
        before = _fingerprint(folder)
        outcome = {}
        for cmd, argv in commands.items():
            status, err = run_cli([argv[0], "--db", str(db), *argv[1:]], {}, fork)
            read = name in READ_ONLY_STATES and cmd in ("runs", "decisions", "export")
            good = status == 0 if read else (status != 0 and "Traceback" not in err and err.startswith("error:")
                                             and len(err.strip().splitlines()) == 1)
            totals["tracebacks"] += "Traceback" in err
            if read:
                totals["reads"] += 1
                totals["reads_ok"] += good
            outcome[cmd] = ("ok" if good else "BAD") + (f" ({status})" if not good else "")
            if not good or cmd == "runs":
                outcome[cmd + ".message"] = err.strip().splitlines()[-1][:150] if err.strip() else ""
        modified = _fingerprint(folder) != before
        folder.chmod(0o755)
        db.chmod(0o644) if db.exists() and not db.is_dir() else None
        totals["states"] += 1
        totals["refused"] += all(v.startswith("ok") for k, v in outcome.items() if "." not in k)
        totals["files_modified"] += modified
        rows.append((name, *(outcome[c] for c in commands), "yes" if modified else "no",
                     outcome.get("runs.message", "")[:110]))
    return {"rows": rows, "commands": list(commands), **totals}


def _fingerprint(folder: Path) -> dict[str, str]:
    """sha256 of every file in the folder (sidecar files appearing or vanishing count as modified)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


# ---------------------------------------------------------------- section 5: round 2 (devtools/hardening_cases/)


# ---------------------------------------------------------------- main


def make_base(work: Path) -> Path:
    """A database with run `base` (216 abstracts, replay judge) holding 3 reviews, and run `other`."""
    base = work / "base.db"
    for argv in (["score", "chimera", "--gold", str(GOLD), "--pred", str(PRED), "--judge", f"replay:{LOG}",
                  "--run", BASE_RUN],
                 ["score", "chimera", "--gold", str(GOLD), "--pred", str(PRED), "--judge", "exact", "--run", "other"]):
        subprocess.run([sys.executable, "-m", "audit", *argv, "--db", str(base)], cwd=ROOT, check=True,
                       capture_output=True)
    for i, label in ((1, "no-match"), (2, "match"), (3, "no-match")):
        subprocess.run([sys.executable, "-m", "audit", "review", "--db", str(base), "--run", BASE_RUN, "--decision",
                        str(i), "--label", label, "--reviewer", "seed"], cwd=ROOT, check=True, capture_output=True)
    with sqlite3.connect(base) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    return base



def _case_round(name: str, title: str, outcomes: list, verbose: bool, notes: list[str] = ()) -> tuple[str, str, str]:
    """Print one round of `Case2` outcomes (table, the cases not as expected, notes) and its summary row."""
    rows = round2_rows(outcomes)
    print_table(title, ["group", "cases", "clear errors / documented-ok", "tracebacks", "silent acceptances",
                        "partial writes", "files modified on refusal"], rows)
    for o in outcomes:
        if not o.good:
            print(f"- NOT AS EXPECTED [{o.case.group}] {o.case.name}: {o.problem}")
        elif verbose:
            last = o.stderr.strip().splitlines()[-1] if o.stderr.strip() else ""
            print(f"  [{o.case.group}] {o.case.name}: {o.status} {last[:160]}")
    for note in notes:
        print(f"- {note}")
    total = rows[-1]
    return (f"{name}: cases / as expected / tracebacks / silent / partial writes / files modified "
            "(goal n / n / 0 / 0 / 0 / 0)", " / ".join(str(x) for x in total[1:]),
            verdict(total[1] == total[2] and not any(total[3:])))

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exec", action="store_true", help="run every case as a fresh `python -m audit` (slow)")
    ap.add_argument("--only", default="inputs,kill,concurrent,damaged,round2,round3")
    ap.add_argument("--kills", type=int, default=17)
    ap.add_argument("--command-kills", type=int, default=6, help="kill -9 points per command of issue 34's list "
                    "(report, assign, plan, import-reviews, judge-batch import)")
    ap.add_argument("--reviews", type=int, default=1500, help="reviews each process adds one by one (then 2x that "
                                                              "by import)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verbose", action="store_true", help="print every case's error line")
    args = ap.parse_args()
    only = set(args.only.split(","))
    fork = not args.exec
    if fork:
        import audit.cli  # noqa: F401 - imported once here, shared by every forked case
    work = Path(tempfile.mkdtemp(prefix="rejudge-hardening-"))
    t_all = time.perf_counter()
    try:
        base = make_base(work)
        summary = []
        if "inputs" in only or "damaged" in only:
            t0 = time.perf_counter()
            results, extra = section_inputs(work, base, fork)
            groups: dict[str, list[Result]] = {}
            for r in results:
                groups.setdefault(r.case.group, []).append(r)
            rows = [(g, len(rs), sum(r.clear for r in rs), sum(r.traceback for r in rs),
                     sum(1 for p in extra["partial"] if p.startswith(g + "/"))) for g, rs in groups.items()]
            tried, clear = len(results), sum(r.clear for r in results)
            tb, partial = sum(r.traceback for r in results), len(extra["partial"])
            rows.append(("**all**", tried, clear, tb, partial))
            print_table(f"Bad inputs ({'python -m audit' if not fork else 'forked CLI'}, "
                        f"{time.perf_counter() - t0:.0f} s)", ["group", "cases", "clear errors", "tracebacks",
                                                                "partial writes"], rows)
            bad = [r for r in results if not r.clear]
            for r in bad:
                last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "(no output)"
                print(f"- NOT CLEAR [{r.case.group}] {r.case.name}: exit {r.status}: {last[:200]}")
            for p in extra["partial"]:
                print(f"- PARTIAL WRITE {p}")
            if args.verbose:
                for r in results:
                    last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
                    print(f"  [{r.case.group}] {r.case.name}: {r.status} {last[:160]}")
            summary.append(("bad-input cases tried / clear errors / tracebacks / partial writes",
                            f"{tried} / {clear} / {tb} / {partial}",
                            verdict(tried >= 150 and clear == tried and tb == 0 and partial == 0)))
            own = [r for r in results if not r.case.group.startswith("other families")]
            own_partial = sum(1 for p in extra["partial"] if not p.startswith("other families"))
            summary.append(("... of them CHIMERA and the shell (without the other families' loaders)",
                            f"{len(own)} / {sum(r.clear for r in own)} / {sum(r.traceback for r in own)} / "
                            f"{own_partial}",
                            verdict(len(own) >= 150 and all(r.clear for r in own) and own_partial == 0)))
        if "kill" in only:
            k = section_kill(work, base, args.kills, args.seed)
            print_table("kill -9 during `score` (1,000 generated abstracts, replay judge)",
                        ["kill points", "finished before the kill", "run stored", "run absent", "half-written",
                         "reopen ok", "uninterrupted score (s)"],
                        [(k["points"], k["finished"], k["stored"], k["absent"], k["half"], k["reopen_ok"],
                          k["full_s"])])
            for p in k["problems"]:
                print(f"- HALF-WRITTEN {p}")
            summary.append(("kill -9 points / half-written runs", f"{k['points']} / {k['half']}",
                            verdict(k["half"] == 0 and k["reopen_ok"])))
            kc = section_kill_commands(work, base, args.command_kills, args.seed)
            print_table("kill -9 during other commands (issue 34; fresh database copy per kill)",
                        ["command", "kill points", "finished before the kill", "changes stored whole",
                         "nothing stored", "half-written", "output complete / absent", "temp files left",
                         "uninterrupted (s)"],
                        [(r["command"], r["points"], r["finished"], r["stored"], r["absent"], r["half"],
                          f"{r['file_complete']} / {r['file_absent']}" if r["command"] == "report" else "-",
                          r["temp_left"], f"{r['full_s']:.1f}") for r in kc])
            for r in kc:
                for p in r["problems"]:
                    print(f"- HALF-WRITTEN {p}")
            summary.append(("round 3: kill -9 points in report/assign/plan/import-reviews/judge-batch import / "
                            "half-written", f"{sum(r['points'] for r in kc)} / {sum(r['half'] for r in kc)}",
                            verdict(not any(r["half"] for r in kc))))
        if "concurrent" in only:
            c = section_concurrent(work, base, args.reviews)
            print_table("Two processes reviewing one run at once (add_review one by one, then import_reviews)",
                        ["reviews written", "stored", "lost", "errors", "seconds"],
                        [(c["written"], c["stored"], c["lost"], c["errors"], c["seconds"])])
            summary.append(("concurrent reviews / lost", f"{c['written']} / {c['lost']}",
                            verdict(c["lost"] == 0 and c["errors"] == 0 and c["stored"] == c["written"])))
        if "damaged" in only:
            d = section_damaged(work, base, fork)
            print_table("Damaged and foreign databases (ok = clear one-line refusal; reads of read-only work)",
                        ["state", *d["commands"], "file modified", "message (runs)"], d["rows"])
            summary.append(("damaged-database states / clear refusals / files modified",
                            f"{d['states']} / {d['refused']} / {d['files_modified']}",
                            verdict(d["refused"] == d["states"] and d["files_modified"] == 0
                                    and d["tracebacks"] == 0)))
            summary.append(("read-only databases: reads that work", f"{d['reads_ok']} / {d['reads']}",
                            verdict(d["reads_ok"] == d["reads"])))
        if "round2" in only:
            t0 = time.perf_counter()
            outcomes = section_round2(work, base, fork)
            summary.append(_case_round("round 2", f"Round 2 (issue 27): devtools/hardening_cases/ "
                                       f"({time.perf_counter() - t0:.0f} s)", outcomes, args.verbose))
        if "round3" in only:
            t0 = time.perf_counter()
            outcomes = section_round2(work, base, fork, round3_modules(), label="round3")
            title = (f"Round 3 (issue 34): devtools/hardening_cases/r3_*.py ({', '.join(round3_modules())}; "
                     f"{time.perf_counter() - t0:.0f} s)")
            summary.append(_case_round("round 3", title, outcomes, args.verbose, notes=round3_notes()))
        print_table(f"Hardening summary ({time.perf_counter() - t_all:.0f} s)", ["figure", "value", "goal"], summary)
        return 0 if all(s[2] == "met" for s in summary) else 1
    finally:
        for p in work.rglob("*"):
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
