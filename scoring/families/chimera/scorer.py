"""CHIMERA recombination extraction: load, decide (judge calls) and aggregate (metrics).

Semantics follow the paper's scorer (CHIMERA-KB `src/eval.py`); see docs/chimera-scoring.md.
`decide` is the only step that asks a judge; `aggregate` is a pure function of documents, predictions and
a match label per (doc, entity type, predicted span, gold span).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from scoring.decisions import INVALID_LABEL, MATCH, NO_MATCH, Decision
from scoring.errors import InputError
from scoring.judges.base import (
    INVALID,
    MISSING,
    NO,
    YES,
    AnswerCache,
    Judge,
    JudgeStats,
    Progress,
    SpanQuery,
    ask_with_cache,
)
from scoring.stats.prf import Counts, add_counts, criteria, zero_counts

RELATION_TYPES = ("combination", "inspiration")
ENTITY_TYPES = ("comb-element", "inspiration-src", "inspiration-target")
CLASSES = ("relevant", "irrelevant")
ENTITIES_OF = {"combination": ("comb-element",), "inspiration": ("inspiration-src", "inspiration-target")}
ALIASES = {"analogy": "inspiration", "blend": "combination", "analogy-src": "inspiration-src",
           "analogy-target": "inspiration-target", "blend-element": "comb-element"}
KIND = "entity_pair"
OUTCOMES = ("perfect", "partial", "missed recombination", "false alarm", "type mismatch", "true negative")
MAX_INPUT_BYTES = 512 * 1024 * 1024
GOLD_COLUMNS = ("paper_id", "text", "readable_relations")


def normalise_name(name: str) -> str:
    """Map old spellings (analogy, blend, analogy-src, ...) to the names the scorer uses."""
    return ALIASES.get(name, name)


@dataclass(frozen=True)
class Relation:
    """One recombination: its type and its entities as (entity type, span) in order."""

    type: str
    entities: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class GoldSpan:
    """A gold entity's location in the text (for highlighting)."""

    type: str
    value: str
    start: int
    end: int


@dataclass(frozen=True)
class ChimeraDoc:
    """One abstract with its gold annotation."""

    paper_id: str
    text: str
    document_class: str
    gold: tuple[Relation, ...]
    gold_spans: tuple[GoldSpan, ...]
    line: int


@dataclass(frozen=True)
class ChimeraPrediction:
    """The relations a system predicted for one abstract."""

    paper_id: str
    relations: tuple[Relation, ...]
    line: int | None
    """Line in the prediction file, or None when the prediction is missing (counted as no recombination)."""


@dataclass(frozen=True)
class LoadedPredictions:
    predictions: dict[str, ChimeraPrediction]
    missing: list[str]
    """Gold paper ids with no prediction line (scored as 'no recombination')."""
    notes: list[str]
    """Normalisations applied (e.g. `analogy` renamed), one line each."""


# ---------------------------------------------------------------- loading


def _check_size(path: Path) -> bytes:
    if not path.is_file():
        raise InputError(str(path), None, "file not found")
    size = path.stat().st_size
    if size > MAX_INPUT_BYTES:
        raise InputError(str(path), None, f"file is {size / 2**20:.0f} MiB; the limit is "
                                          f"{MAX_INPUT_BYTES // 2**20} MiB")
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(str(path), line, "not valid UTF-8 text") from None
    return data


def _csv_records(path: Path, data: bytes) -> Iterable[tuple[int, dict[str, str]]]:
    csv.field_size_limit(64 * 1024 * 1024)
    reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline=""))
    start = reader.line_num + 1
    try:
        for row in reader:
            yield start, row
            start = reader.line_num + 1
    except csv.Error as e:
        raise InputError(str(path), reader.line_num, f"malformed CSV: {e}") from None


def parse_relations(value: object, path: str, line: int, notes: list[str] | None = None) -> tuple[Relation, ...]:
    """Validate and normalise a `{relation_type: [{entity_type: [span, ...]}, ...]}` mapping.

    A single relation given as a mapping instead of a one-item list is accepted (the LLM output shape).
    """
    if not isinstance(value, dict):
        raise InputError(path, line, f"relations must be a JSON object, got {_json_type(value)}")
    out: list[Relation] = []
    for raw_type, rels in value.items():
        rtype = normalise_name(raw_type)
        if rtype not in RELATION_TYPES:
            raise InputError(path, line, f"unknown relation type {raw_type!r}; expected one of "
                                         f"{', '.join(RELATION_TYPES)} (or analogy, blend)")
        if rtype != raw_type and notes is not None:
            notes.append(f"{path}:{line}: relation type {raw_type!r} read as {rtype!r}")
        if isinstance(rels, dict):
            rels = [rels]
        if not isinstance(rels, list):
            raise InputError(path, line, f"relation {raw_type!r} must be a list of relations, got {_json_type(rels)}")
        if not rels:
            raise InputError(path, line, f"relation {raw_type!r} has an empty list; use {{}} for no recombination")
        for rel in rels:
            if not isinstance(rel, dict):
                raise InputError(path, line, f"a {raw_type!r} relation must be an object of entity lists, "
                                             f"got {_json_type(rel)}")
            entities: list[tuple[str, str]] = []
            for raw_etype, spans in rel.items():
                etype = normalise_name(raw_etype)
                if etype not in ENTITY_TYPES:
                    raise InputError(path, line, f"unknown entity type {raw_etype!r}; expected one of "
                                                 f"{', '.join(ENTITY_TYPES)} (or analogy-src, analogy-target)")
                if etype not in ENTITIES_OF[rtype]:
                    raise InputError(path, line, f"entity type {raw_etype!r} does not belong to relation "
                                                 f"{rtype!r} (expected {', '.join(ENTITIES_OF[rtype])})")
                if not isinstance(spans, list):
                    raise InputError(path, line, f"entity list {raw_etype!r} must be a list of strings, "
                                                 f"got {_json_type(spans)}")
                for s in spans:
                    if not isinstance(s, str):
                        raise InputError(path, line, f"span in {raw_etype!r} must be a string, got {_json_type(s)}")
                    if not s.strip():
                        raise InputError(path, line, f"empty span in {raw_etype!r}")
                    entities.append((etype, s))
            if not entities:
                raise InputError(path, line, f"a {raw_type!r} relation has no entities")
            out.append(Relation(rtype, tuple(entities)))
    return tuple(out)


def _json_type(v: object) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list",
            dict: "an object", type(None): "null"}.get(type(v), type(v).__name__)


def load_gold(path: str | Path) -> list[ChimeraDoc]:
    """Read a CHIMERA gold CSV (paper_id, text, readable_relations, optionally entities, document_class).

    Raises:
        InputError: naming file and line, for a missing column, bad JSON, unknown type or duplicate id.
    """
    p = Path(path)
    data = _check_size(p)
    first = data.decode("utf-8-sig").split("\n", 1)[0]
    header = next(csv.reader([first]), [])
    missing = [c for c in GOLD_COLUMNS if c not in header]
    if missing:
        raise InputError(str(p), 1, f"missing column(s) {', '.join(missing)}; a CHIMERA gold CSV needs "
                                    f"{', '.join(GOLD_COLUMNS)}")
    docs: list[ChimeraDoc] = []
    seen: set[str] = set()
    for line, row in _csv_records(p, data):
        pid = (row.get("paper_id") or "").strip()
        if not pid:
            raise InputError(str(p), line, "empty paper_id")
        if pid in seen:
            raise InputError(str(p), line, f"duplicate paper_id {pid!r}")
        seen.add(pid)
        text = row.get("text") or ""
        try:
            rr = json.loads(row.get("readable_relations") or "{}")
        except json.JSONDecodeError as e:
            raise InputError(str(p), line, f"readable_relations is not valid JSON: {e.msg}") from None
        gold = parse_relations(rr, str(p), line)
        spans: list[GoldSpan] = []
        if row.get("entities"):
            try:
                ents = json.loads(row["entities"])
            except json.JSONDecodeError as e:
                raise InputError(str(p), line, f"entities is not valid JSON: {e.msg}") from None
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
        docs.append(ChimeraDoc(pid, text, (row.get("document_class") or "").strip(), gold, tuple(spans), line))
    if not docs:
        raise InputError(str(p), None, "no abstracts in the gold file")
    return docs


def load_predictions(path: str | Path, gold_ids: Sequence[str]) -> LoadedPredictions:
    """Read predictions as JSON lines (`paper_id`, `relations`) or CSV (`paper_id`, `readable_relations`).

    Gold papers without a prediction are listed in `missing` and scored as "no recombination".

    Raises:
        InputError: naming file and line, for malformed JSON, unknown paper id, duplicate id, wrong types.
    """
    p = Path(path)
    data = _check_size(p)
    known = set(gold_ids)
    preds: dict[str, ChimeraPrediction] = {}
    notes: list[str] = []

    def add(pid: object, rels: object, line: int) -> None:
        if not isinstance(pid, str):
            raise InputError(str(p), line, f"paper_id must be a string, got {_json_type(pid)} "
                                           f"({pid!r}); quote it so ids like 2103.0771 keep their digits")
        if pid not in known:
            raise InputError(str(p), line, f"unknown paper id {pid!r}: not in the gold file")
        if pid in preds:
            raise InputError(str(p), line, f"duplicate prediction for paper id {pid!r} "
                                           f"(first on line {preds[pid].line})")
        preds[pid] = ChimeraPrediction(pid, parse_relations(rels, str(p), line, notes), line)

    if p.suffix.lower() == ".csv":
        header = next(csv.reader([data.decode("utf-8-sig").split("\n", 1)[0]]), [])
        if "paper_id" not in header or "readable_relations" not in header:
            raise InputError(str(p), 1, "a prediction CSV needs columns paper_id and readable_relations")
        for line, row in _csv_records(p, data):
            try:
                rels = json.loads(row.get("readable_relations") or "{}")
            except json.JSONDecodeError as e:
                raise InputError(str(p), line, f"readable_relations is not valid JSON: {e.msg}") from None
            add((row.get("paper_id") or "").strip(), rels, line)
    else:
        for line, text in enumerate(data.decode("utf-8-sig").splitlines(), 1):
            if not text.strip():
                continue
            try:
                rec = json.loads(text)
            except json.JSONDecodeError as e:
                raise InputError(str(p), line, f"invalid JSON: {e.msg} (column {e.colno})") from None
            if not isinstance(rec, dict):
                raise InputError(str(p), line, f"expected a JSON object, got {_json_type(rec)}")
            if "paper_id" not in rec:
                raise InputError(str(p), line, "missing field 'paper_id'")
            if "relations" not in rec:
                raise InputError(str(p), line, "missing field 'relations' (use {} for no recombination)")
            add(rec["paper_id"], rec["relations"], line)
    if not preds:
        raise InputError(str(p), None, "no predictions in the file")
    missing = [pid for pid in gold_ids if pid not in preds]
    for pid in missing:
        preds[pid] = ChimeraPrediction(pid, (), None)
    return LoadedPredictions(preds, missing, notes)


# ---------------------------------------------------------------- decide


def flat_entities(relations: Sequence[Relation]) -> list[tuple[str, str]]:
    return [e for r in relations for e in r.entities]


def _distinct(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def candidate_pairs(doc: ChimeraDoc, pred: ChimeraPrediction) -> list[tuple[str, str, str]]:
    """Every same-type (entity type, predicted span, gold span) pair the scorer may ask about."""
    pred_ents, gold_ents = flat_entities(pred.relations), flat_entities(doc.gold)
    pairs = []
    for t in ENTITY_TYPES:
        ps = _distinct(v for et, v in pred_ents if et == t)
        gs = _distinct(v for et, v in gold_ents if et == t)
        pairs.extend((t, pv, gv) for pv in ps for gv in gs)
    return pairs


def paper_call_count(doc: ChimeraDoc, pred: ChimeraPrediction) -> int:
    """Judge calls the paper's scorer makes for this document (no cache; chimera.md §3.4)."""
    def same_type_pairs(a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]]) -> int:
        return sum(1 for ta, _ in a for tb, _ in b if ta == tb)

    calls = 4 * same_type_pairs(flat_entities(pred.relations), flat_entities(doc.gold))
    for pr in pred.relations:
        for gr in doc.gold:
            if pr.type == gr.type:
                calls += 4 * same_type_pairs(pr.entities, gr.entities)
    return calls


def label_from_answers(forward: str, backward: str) -> str:
    """`match` iff both orders said yes; `no-match` if either said no; else `invalid` (unreadable/missing)."""
    if forward == YES and backward == YES:
        return MATCH
    if "no" in (forward, backward):
        return NO_MATCH
    return INVALID_LABEL


def decide(docs: Sequence[ChimeraDoc], preds: Mapping[str, ChimeraPrediction], judge: Judge,
           cache: AnswerCache | None = None, progress: Progress | None = None,
           stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
    """Ask the judge about every same-type (predicted, gold) span pair, both orders, each distinct request once.

    `stats` (optional) is updated live, so a progress display can show cached / failed counts while asking.
    """
    stats = stats if stats is not None else JudgeStats()
    pairs_by_doc: list[tuple[ChimeraDoc, list[tuple[str, str, str]]]] = []
    query_index: dict[tuple[str, str, str, str], int] = {}
    queries: list[SpanQuery] = []
    for doc in docs:
        pred = preds[doc.paper_id]
        stats.paper_calls += paper_call_count(doc, pred)
        pairs = candidate_pairs(doc, pred)
        pairs_by_doc.append((doc, pairs))
        for t, pv, gv in pairs:
            for s1, s2 in ((pv, gv), (gv, pv)):
                k = (doc.paper_id, t, s1, s2)
                if k not in query_index:
                    query_index[k] = len(queries)
                    queries.append(SpanQuery(doc.paper_id, doc.text, t, s1, s2))
    stats.distinct_queries = len(queries)
    answers = ask_with_cache(judge, queries, cache, stats, progress)
    decisions: list[Decision] = []
    for doc, pairs in pairs_by_doc:
        for t, pv, gv in pairs:
            fwd = answers[query_index[(doc.paper_id, t, pv, gv)]]
            bwd = answers[query_index[(doc.paper_id, t, gv, pv)]]
            orders = [(fwd, pv, gv)] + ([(bwd, gv, pv)] if pv != gv else [])
            for a, s1, s2 in orders:
                if a.value == INVALID:
                    stats.invalid += 1
                elif a.value == MISSING:
                    stats.missing += 1
                    if len(stats.missing_examples) < 10:
                        stats.missing_examples.append({"paper_id": doc.paper_id, "entity_type": t, "span1": s1,
                                                       "span2": s2, "why": a.rationale})
            detail = {"pred_gold": _answer_dict(fwd), "gold_pred": _answer_dict(bwd)}
            decisions.append(Decision(doc.paper_id, KIND, t, pv, gv, label_from_answers(fwd.value, bwd.value), detail))
    return decisions, stats


def _answer_dict(a: object) -> dict:
    d = asdict(a)  # type: ignore[call-overload]
    return {k: v for k, v in d.items() if v not in (None, 0, False) or k == "value"}


# ---------------------------------------------------------------- aggregate

MatchFn = Callable[[str, str, str], bool]
"""(entity type, predicted span, gold span) -> counted as a match?"""


def _first_match_index(etype: str, value: str, candidates: Sequence[tuple[str, str]], match: MatchFn,
                       pred_side: bool) -> int | None:
    for i, (ct, cv) in enumerate(candidates):
        if ct == etype and (match(etype, value, cv) if pred_side else match(etype, cv, value)):
            return i
    return None


def _flat_entity_counts(pred_ents: list[tuple[str, str]], gold_ents: list[tuple[str, str]], match: MatchFn) -> Counts:
    counts = zero_counts(ENTITY_TYPES)
    for ents, others, pred_side in ((pred_ents, gold_ents, True), (gold_ents, pred_ents, False)):
        other_types = {t for t, _ in others}
        for t in ENTITY_TYPES:
            mine = [(et, v) for et, v in ents if et == t]
            if not mine:
                continue
            hits = []
            if t in other_types:
                for et, v in mine:
                    idx = _first_match_index(et, v, others, match, pred_side)
                    if idx is not None:
                        hits.append(idx)
            c = counts[t]
            if pred_side:
                c["tp"] += len(set(hits))
                c["fp"] += len(mine) - len(hits)
                c["pred_om"] += len(hits) - len(set(hits))
                c["total_pred_ent"] += len(mine)
            else:
                c["fn"] += len(mine) - len(hits)
                c["gold_om"] += len(hits) - len(set(hits))
                c["total_gold_ent"] += len(mine)
    return counts


def _relation_matches(rel: Relation, partners: Sequence[Relation], match: MatchFn,
                      pred_side: bool) -> dict[tuple[str, str], str]:
    """Per-entity matches (keyed by (type, span), so repeated spans collapse) against the best partner."""
    best_score = 0.0
    best: dict[tuple[str, str], str] | None = None
    for other in partners:
        matches: dict[tuple[str, str], str] = {e: "" for e in rel.entities}
        unique: set[int] = set()
        for et, v in rel.entities:
            idx = _first_match_index(et, v, other.entities, match, pred_side)
            if idx is not None:
                matches[(et, v)] = other.entities[idx][1]
                unique.add(idx)
        score = len(unique) / len(rel.entities)
        if score > best_score:
            best_score, best = score, matches
    return best if best is not None else {e: "" for e in rel.entities}


def _relation_counts(pred: Sequence[Relation], gold: Sequence[Relation], match: MatchFn) -> Counts:
    counts = zero_counts(RELATION_TYPES)
    for rels, others, pred_side in ((pred, gold, True), (gold, pred, False)):
        for rel in rels:
            partners = [o for o in others if o.type == rel.type]
            matches = _relation_matches(rel, partners, match, pred_side) if partners else \
                {e: "" for e in rel.entities}
            found = [m for m in matches.values() if m]
            c = counts[rel.type]
            if pred_side:
                c["tp"] += len(set(found))
                c["fp"] += len(matches) - len(found)
                c["total_pred_ent"] += len(matches)
                c["pred_om"] += len(found) - len(set(found))
            else:
                c["fn"] += len(matches) - len(found)
                c["total_gold_ent"] += len(matches)
                c["gold_om"] += len(found) - len(set(found))
    return counts


def _classification_counts(pred_rel: bool, gold_rel: bool) -> Counts:
    counts = zero_counts(CLASSES)
    if pred_rel and gold_rel:
        counts["relevant"]["tp"] += 1
    elif not pred_rel and not gold_rel:
        counts["irrelevant"]["tp"] += 1
    elif pred_rel:
        counts["relevant"]["fp"] += 1
        counts["irrelevant"]["fn"] += 1
    else:
        counts["relevant"]["fn"] += 1
        counts["irrelevant"]["fp"] += 1
    return counts


DocCounts = dict[str, Counts]
SECTIONS = ("classification", "entities", "relations")


def doc_counts(doc: ChimeraDoc, pred: ChimeraPrediction, match: MatchFn) -> DocCounts:
    """Counts one document contributes to each section; pooled over documents by `metrics_from_counts`."""
    return {
        "classification": _classification_counts(bool(pred.relations), bool(doc.gold)),
        "entities": _flat_entity_counts(flat_entities(pred.relations), flat_entities(doc.gold), match),
        "relations": _relation_counts(pred.relations, doc.gold, match),
    }


def empty_counts() -> DocCounts:
    return {"classification": zero_counts(CLASSES), "entities": zero_counts(ENTITY_TYPES),
            "relations": zero_counts(RELATION_TYPES)}


def sum_counts(parts: Iterable[Mapping[str, Counts]]) -> DocCounts:
    total = empty_counts()
    for part in parts:
        for section, c in part.items():
            add_counts(total[section], c)
    return total


def metrics_from_counts(total: Mapping[str, Counts]) -> dict:
    """The reference scorer's metrics JSON: classification, entities, relations; each per type plus avg."""
    return {section: criteria(total[section]) for section in SECTIONS}


def outcome(doc: ChimeraDoc, pred: ChimeraPrediction, counts: DocCounts) -> str:
    """One of OUTCOMES, for filtering the document list."""
    if not doc.gold:
        return "true negative" if not pred.relations else "false alarm"
    if not pred.relations:
        return "missed recombination"
    if {r.type for r in pred.relations} != {r.type for r in doc.gold}:
        return "type mismatch"
    rel = counts["relations"]
    if all(rel[t]["fp"] == 0 and rel[t]["fn"] == 0 for t in RELATION_TYPES):
        return "perfect"
    return "partial"


def match_fn_from_labels(labels: Mapping[tuple[str, str, str], str]) -> MatchFn:
    """Build a MatchFn for one document from {(type, pred span, gold span): label}."""
    return lambda t, pv, gv: labels.get((t, pv, gv)) == MATCH


def aggregate(docs: Sequence[ChimeraDoc], preds: Mapping[str, ChimeraPrediction],
              labels: Mapping[tuple[str, str, str, str], str]) -> dict:
    """Metrics from effective labels keyed by (doc, type, pred span, gold span); unknown pairs are no-match."""
    by_doc: dict[str, dict[tuple[str, str, str], str]] = {}
    for (d, t, pv, gv), lab in labels.items():
        by_doc.setdefault(d, {})[(t, pv, gv)] = lab
    total = sum_counts(doc_counts(doc, preds[doc.paper_id], match_fn_from_labels(by_doc.get(doc.paper_id, {})))
                       for doc in docs)
    return metrics_from_counts(total)


# ---------------------------------------------------------------- (de)serialisation for the store


def doc_to_json(doc: ChimeraDoc, pred: ChimeraPrediction) -> dict:
    return {
        "paper_id": doc.paper_id, "text": doc.text, "document_class": doc.document_class, "line": doc.line,
        "gold": [[r.type, [list(e) for e in r.entities]] for r in doc.gold],
        "gold_spans": [[s.type, s.value, s.start, s.end] for s in doc.gold_spans],
        "pred": [[r.type, [list(e) for e in r.entities]] for r in pred.relations],
        "pred_line": pred.line,
    }


def doc_from_json(d: Mapping) -> tuple[ChimeraDoc, ChimeraPrediction]:
    def rels(x: list) -> tuple[Relation, ...]:
        return tuple(Relation(t, tuple((et, v) for et, v in ents)) for t, ents in x)

    doc = ChimeraDoc(d["paper_id"], d["text"], d["document_class"], rels(d["gold"]),
                     tuple(GoldSpan(*s) for s in d["gold_spans"]), d["line"])
    return doc, ChimeraPrediction(d["paper_id"], rels(d["pred"]), d["pred_line"])


def match_summary(doc: ChimeraDoc, pred: ChimeraPrediction, labels: Mapping[tuple[str, str, str], str]) -> dict:
    """For display: matched (type, pred, gold) pairs, and predicted / gold entities with no match at all."""
    matched = [(t, pv, gv) for (t, pv, gv), lab in labels.items() if lab == MATCH]
    hit_pred = {(t, pv) for t, pv, _ in matched}
    hit_gold = {(t, gv) for t, _, gv in matched}
    return {
        "matched": matched,
        "unmatched_pred": [e for e in dict.fromkeys(flat_entities(pred.relations)) if e not in hit_pred],
        "unmatched_gold": [e for e in dict.fromkeys(flat_entities(doc.gold)) if e not in hit_gold],
    }


def _get(d: object, name: str) -> object:
    return d.get(name) if isinstance(d, Mapping) else getattr(d, name, None)


def judge_log_records(decisions: Iterable[object]) -> list[dict]:
    """The replay-format lines of CHIMERA decisions: one per ordered span pair the judge answered.

    Accepts `Decision`s or decision rows (`audit.views.decisions`): fields doc, type, left (predicted span),
    right (gold span) and detail (`pred_gold` / `gold_pred` answers). A pair the judge did not answer
    (`missing`: failed, cancelled) has no line, so a replay reports it missing instead of inventing it.
    An unreadable answer is written as `"answer": "invalid"` with its raw text, and replays as invalid.
    """
    out: dict[tuple[str, str, str, str], dict] = {}
    for d in decisions:
        doc, etype, left, right = (str(_get(d, f)) for f in ("doc", "type", "left", "right"))
        detail = _get(d, "detail")
        if not isinstance(detail, Mapping):
            continue
        for order, s1, s2 in (("pred_gold", left, right), ("gold_pred", right, left)):
            a = detail.get(order)
            if not isinstance(a, Mapping) or a.get("value") not in (YES, NO, INVALID):
                continue
            key = (doc, etype, s1, s2)
            if key in out:
                continue
            rec = {"paper_id": doc, "entity_type": etype, "span1": s1, "span2": s2, "answer": a["value"]}
            if a["value"] == INVALID and a.get("raw") is not None:
                rec["raw"] = a["raw"]
            if a.get("rationale"):
                rec["rationale"] = a["rationale"]
            out[key] = rec
    return list(out.values())
