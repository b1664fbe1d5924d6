"""Loading CHIMERA inputs: the gold CSV and predictions (JSON lines or CSV), validated with FILE:LINE errors."""

from __future__ import annotations

import csv
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from scoring.errors import InputError, is_blank, parse_json, quoted, text_problem
from scoring.families.chimera.model import (
    CLASSES,
    ENTITIES_OF,
    ENTITY_TYPES,
    GOLD_COLUMNS,
    MAX_INPUT_BYTES,
    RELATION_TYPES,
    ChimeraDoc,
    ChimeraPrediction,
    GoldSpan,
    LoadedPredictions,
    Relation,
    normalise_name,
)
from scoring.jsonl import json_type, read_lines
from scoring.limits import MAX_ID_CHARS, MAX_SPAN_CHARS
from scoring.nouns import Noun


def _csv_records(path: Path, required: Sequence[str], hint: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(first line, row) of each record of a CSV file, parsed strictly.

    Every record must have as many fields as the header: a file cut inside its last record, or a stray quote that
    swallowed the following lines, is an error naming the line rather than a silently shorter record.

    Raises:
        InputError: missing `required` column (`hint` says what the file needs), malformed or short record.
    """
    csv.field_size_limit(MAX_INPUT_BYTES)
    reader = csv.reader((text for _, text in read_lines(path, limit=MAX_INPUT_BYTES, keep_ends=True)), strict=True)
    start = 1
    try:
        header = next(reader, [])
        repeated = sorted({c for c in header if header.count(c) > 1})
        if repeated:  # a dict of the row would keep the last column of a name and drop the others unseen
            names = ", ".join(map(repr, repeated))
            said = f"column names {names} appear" if len(repeated) > 1 else f"column name {names} appears"
            raise InputError(str(path), 1, f"{said} more than once in the header; which column is meant? Rename or "
                                           "remove the copies")
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(str(path), 1, f"missing {'columns' if len(missing) > 1 else 'column'} "
                                           f"{', '.join(missing)}; {hint}")
        start = reader.line_num + 1
        for fields in reader:
            if fields:  # a blank line
                if len(fields) != len(header):
                    has = Noun("field").count(len(fields))
                    raise InputError(str(path), start, f"record has {has} but the header has {len(header)}: the "
                                                       "file may be cut short, or a quote is unbalanced")
                yield start, dict(zip(header, fields, strict=True))
            start = reader.line_num + 1
    except csv.Error as e:
        if "unexpected end of data" in str(e):
            raise InputError(str(path), start, "unterminated quote: the record starting on this line runs to the "
                                               "end of the file (the file may be cut short)") from None
        raise InputError(str(path), reader.line_num, f"malformed CSV: {e}") from None


def span_problem(s: str) -> str | None:
    """Why `s` cannot be a span (a lone surrogate, a NUL, over `MAX_SPAN_CHARS`), or None when it can."""
    if "\x00" in s:
        return f"contains a NUL character (at character {s.index(chr(0)) + 1})"
    if len(s) > MAX_SPAN_CHARS:
        return f"is {len(s):,} characters long; the limit is {MAX_SPAN_CHARS:,} (scoring.limits.MAX_SPAN_CHARS)"
    return text_problem(s)


def parse_relations(value: object, path: str, line: int, notes: list[str] | None = None, *,
                    gold: bool = False) -> tuple[Relation, ...]:
    """Validate and normalise a `{relation_type: [{entity_type: [span, ...]}, ...]}` mapping.

    In predictions a single relation given as a mapping instead of a one-item list is accepted (the LLM output
    shape); gold (`gold=True`) must give the list.
    """
    if not isinstance(value, dict):
        raise InputError(path, line, f"relations must be a JSON object, got {json_type(value)}")
    out: list[Relation] = []
    for raw_type, rels in value.items():
        rtype = normalise_name(raw_type)
        if rtype not in RELATION_TYPES:
            raise InputError(path, line, f"unknown relation type {raw_type!r}; expected one of "
                                         f"{', '.join(RELATION_TYPES)} (or analogy, blend)")
        if rtype != raw_type and notes is not None:
            notes.append(f"{path}:{line}: relation type {raw_type!r} read as {rtype!r}")
        if isinstance(rels, dict) and gold:
            raise InputError(path, line, f"relation {raw_type!r} is an object; gold relations are a list of "
                                         "relations (write [{...}])")
        if isinstance(rels, dict):
            rels = [rels]
        if not isinstance(rels, list):
            raise InputError(path, line, f"relation {raw_type!r} must be a list of relations, got {json_type(rels)}")
        if not rels:
            raise InputError(path, line, f"relation {raw_type!r} has an empty list; use {{}} for no recombination")
        for rel in rels:
            if not isinstance(rel, dict):
                raise InputError(path, line, f"a {raw_type!r} relation must be an object of entity lists, "
                                             f"got {json_type(rel)}")
            entities: list[tuple[str, str]] = []
            for raw_etype, spans in rel.items():
                etype = normalise_name(raw_etype)
                if etype not in ENTITY_TYPES:
                    raise InputError(path, line, f"unknown entity type {raw_etype!r}; expected one of "
                                                 f"{', '.join(ENTITY_TYPES)} (or analogy-src, analogy-target)")
                if etype not in ENTITIES_OF[rtype]:
                    raise InputError(path, line, f"entity type {raw_etype!r} does not belong to relation "
                                                 f"{rtype!r} (expected {', '.join(ENTITIES_OF[rtype])})")
                if isinstance(spans, str):  # chimera.md §2: a bare string is one span (not its characters)
                    spans = [spans]
                    if notes is not None:
                        notes.append(f"{path}:{line}: entity list {raw_etype!r} is a single string; read as a "
                                     "one-item list")
                if not isinstance(spans, list):
                    raise InputError(path, line, f"entity list {raw_etype!r} must be a list of strings, "
                                                 f"got {json_type(spans)}")
                for s in spans:
                    if not isinstance(s, str):
                        raise InputError(path, line, f"span in {raw_etype!r} must be a string, got {json_type(s)}")
                    if is_blank(s):
                        raise InputError(path, line, f"empty span in {raw_etype!r}" + (
                            "" if not s.strip() else " (only invisible characters such as zero-width spaces)"))
                    problem = span_problem(s)
                    if problem:
                        raise InputError(path, line, f"span in {raw_etype!r} {problem}")
                    entities.append((etype, s))
            if not entities:
                raise InputError(path, line, f"a {raw_type!r} relation has no entities")
            out.append(Relation(rtype, tuple(entities)))
    return tuple(out)


def load_gold(path: str | Path) -> list[ChimeraDoc]:
    """Read a CHIMERA gold CSV (paper_id, text, readable_relations, optionally entities, document_class).

    Raises:
        InputError: naming file and line, for a missing column, bad JSON, unknown type or duplicate id.
    """
    p = Path(path)
    docs: list[ChimeraDoc] = []
    seen: set[str] = set()
    for line, row in _csv_records(p, GOLD_COLUMNS, f"a CHIMERA gold CSV needs {', '.join(GOLD_COLUMNS)}"):
        pid = row.get("paper_id") or ""
        if not pid.strip():
            raise InputError(str(p), line, "empty paper_id")
        if pid != pid.strip():
            raise InputError(str(p), line, f"paper_id {pid!r} has spaces around it; predictions and judge logs name "
                                           "it exactly, so remove them")
        if len(pid) > MAX_ID_CHARS:
            raise InputError(str(p), line, f"paper_id is {len(pid):,} characters long; the limit is {MAX_ID_CHARS:,}")
        if any(unicodedata.category(c)[0] == "C" for c in pid):
            raise InputError(str(p), line, f"paper_id {pid!r} contains control or invisible characters")
        if pid in seen:
            raise InputError(str(p), line, f"duplicate paper_id {pid!r}")
        seen.add(pid)
        text = row.get("text") or ""
        rr = parse_json(row.get("readable_relations") or "{}", str(p), line, "readable_relations")
        gold = parse_relations(rr, str(p), line, gold=True)
        spans: list[GoldSpan] = []
        if row.get("entities"):
            ents = parse_json(row["entities"], str(p), line, "entities")
            if ents == {}:
                ents = []  # the upstream file writes {} for abstracts without annotation
            if not isinstance(ents, list):
                raise InputError(str(p), line, "entities must be a JSON list")
            for e in ents:
                try:
                    start, end = int(e["start"]), int(e["end"])
                    spans.append(GoldSpan(normalise_name(str(e["tag"])), str(e["value"]), start, end))
                except (KeyError, TypeError, ValueError):
                    raise InputError(str(p), line, "each entity needs start, end, tag and value") from None
                problem = span_problem(spans[-1].value)
                if problem:
                    raise InputError(str(p), line, f"entity value {problem}")
                if not 0 <= start <= end <= len(text):
                    raise InputError(str(p), line, f"entity {spans[-1].value[:40]!r} at {start}..{end} lies outside "
                                                   f"the text ({len(text):,} characters)")
        doc_class = (row.get("document_class") or "").strip()
        if doc_class and doc_class not in CLASSES:
            raise InputError(str(p), line, f"unknown document_class {doc_class[:40]!r}; expected one of "
                                           f"{', '.join(CLASSES)} (or leave it empty)")
        docs.append(ChimeraDoc(pid, text, doc_class, gold, tuple(spans), line))
    if not docs:
        raise InputError(str(p), None, "no abstracts in the gold file")
    return docs


MAX_REPORTED = 20
"""Bad records reported at once (the first stops nothing: the user fixes them all in one go)."""


def collected(path: str, errors: list[InputError]) -> InputError:
    """One error for several bad records: the first as `FILE:LINE: reason`, the others listed after it."""
    first = errors[0]
    if len(errors) == 1:
        return first
    more = "; ".join(f"line {e.line}: {e.reason}" for e in errors[1:])
    cap = " (stopped after 20)" if len(errors) >= MAX_REPORTED else ""
    others = Noun("more error", "more errors").count(len(errors) - 1)
    err = InputError(path, first.line, f"{first.reason} — and {others}{cap}: {more}")
    err.errors = errors  # type: ignore[attr-defined]
    return err


def load_predictions(path: str | Path, gold_ids: Sequence[str]) -> LoadedPredictions:
    """Read predictions as JSON lines (`paper_id`, `relations`) or CSV (`paper_id`, `readable_relations`).

    Gold papers without a prediction are listed in `missing` and scored as "no recombination".

    Raises:
        InputError: naming file and line, for malformed JSON, unknown paper id, duplicate id, wrong types.
    """
    p = Path(path)
    known = set(gold_ids)
    preds: dict[str, ChimeraPrediction] = {}
    notes: list[str] = []

    def add(pid: object, rels: object, line: int) -> None:
        if not isinstance(pid, str):
            raise InputError(str(p), line, f"paper_id must be a string, got {json_type(pid)} "
                                           f"({quoted(pid)}); quote it so ids like 2103.0771 keep their digits")
        if pid not in known:
            raise InputError(str(p), line, f"unknown paper id {quoted(pid)}: not in the gold file")
        if pid in preds:
            raise InputError(str(p), line, f"duplicate prediction for paper id {quoted(pid)} "
                                           f"(first on line {preds[pid].line})")
        preds[pid] = ChimeraPrediction(pid, parse_relations(rels, str(p), line, notes), line)

    errors: list[InputError] = []

    def record(fn: Callable[[], None]) -> None:
        """Check one record; a bad one is collected (up to MAX_REPORTED) so the user sees every error at once."""
        try:
            fn()
        except InputError as e:
            errors.append(e)
            if len(errors) >= MAX_REPORTED:
                raise collected(str(p), errors) from None

    if p.suffix.lower() == ".csv":
        for line, row in _csv_records(p, ("paper_id", "readable_relations"),
                                      "a prediction CSV needs columns paper_id and readable_relations"):
            def csv_row(line: int = line, row: dict = row) -> None:
                rels = parse_json(row.get("readable_relations") or "{}", str(p), line, "readable_relations")
                add((row.get("paper_id") or "").strip(), rels, line)
            record(csv_row)
    else:
        for line, text in read_lines(p, limit=MAX_INPUT_BYTES):
            if not text.strip():
                continue

            def json_line(line: int = line, text: str = text) -> None:
                rec = parse_json(text, str(p), line)
                if not isinstance(rec, dict):
                    raise InputError(str(p), line, f"expected a JSON object, got {json_type(rec)}")
                if "paper_id" not in rec:
                    raise InputError(str(p), line, "missing field 'paper_id'")
                if "relations" not in rec:
                    raise InputError(str(p), line, "missing field 'relations' (use {} for no recombination)")
                add(rec["paper_id"], rec["relations"], line)
            record(json_line)
    if errors:
        raise collected(str(p), errors)
    if not preds:
        raise InputError(str(p), None, "no predictions in the file")
    missing = [pid for pid in gold_ids if pid not in preds]
    for pid in missing:
        preds[pid] = ChimeraPrediction(pid, (), None)
    return LoadedPredictions(preds, missing, notes)

