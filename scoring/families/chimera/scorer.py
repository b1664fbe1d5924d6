"""CHIMERA recombination extraction: load, decide (judge calls) and aggregate (metrics).

Semantics follow the paper's scorer (CHIMERA-KB `src/eval.py`); see docs/chimera-scoring.md.
`decide` is the only step that asks a judge; `aggregate` is a pure function of documents, predictions and
a match label per (doc, entity type, unordered span pair).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from scoring.decisions import INVALID_LABEL, MATCH, NO_MATCH, Decision
from scoring.families.chimera import strict
from scoring.families.chimera.load import load_gold, load_predictions, parse_relations  # noqa: F401
from scoring.families.chimera.model import (  # noqa: F401
    ALIASES,
    CLASSES,
    ENTITIES_OF,
    ENTITY_TYPES,
    GOLD_COLUMNS,
    KIND,
    OUTCOMES,
    RELATION_TYPES,
    ChimeraDoc,
    ChimeraPrediction,
    GoldSpan,
    LoadedPredictions,
    Relation,
    normalise_name,
)
from scoring.families.chimera.questions import SpanQuery, span_question
from scoring.judges.answer import INVALID, MISSING, NO, YES, JudgeStats, answer_dict
from scoring.judges.asking import ask_with_cache
from scoring.judges.transport import AnswerCache, Judge, Progress
from scoring.stats.prf import Counts, add_counts, criteria, zero_counts

# ---------------------------------------------------------------- decide


def flat_entities(relations: Sequence[Relation]) -> list[tuple[str, str]]:
    return [e for r in relations for e in r.entities]


def _distinct(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def candidate_pairs(doc: ChimeraDoc, pred: ChimeraPrediction) -> list[tuple[str, str, str]]:
    """Every same-type (entity type, predicted span, gold span) pair the scorer may ask about (ordered)."""
    pred_ents, gold_ents = flat_entities(pred.relations), flat_entities(doc.gold)
    pairs = []
    for t in ENTITY_TYPES:
        ps = _distinct(v for et, v in pred_ents if et == t)
        gs = _distinct(v for et, v in gold_ents if et == t)
        pairs.extend((t, pv, gv) for pv in ps for gv in gs)
    return pairs


def question_pairs(doc: ChimeraDoc, pred: ChimeraPrediction) -> list[tuple[str, str, str, dict]]:
    """One (entity type, left, right, sides) per judge question: an UNORDERED same-type span pair {x, y} with one
    span on the predicted side and the other on the gold side.

    (pred A, gold B) and (pred B, gold A) are the same question (the paper's match asks both span orders), so
    they make one decision. `left`/`right` keep the orientation of the first occurrence in (type, predicted,
    gold) order, i.e. predicted first where only one orientation occurs; `sides` says where each span occurs.
    """
    pred_ents, gold_ents = flat_entities(pred.relations), flat_entities(doc.gold)
    out: dict[tuple[str, str, str], tuple[str, str, str, dict]] = {}
    for t in ENTITY_TYPES:  # the order of `candidate_pairs`
        ps = _distinct(v for et, v in pred_ents if et == t)
        gs = _distinct(v for et, v in gold_ents if et == t) if ps else []
        p, g = set(ps), set(gs)
        for pv in ps:
            for gv in gs:
                key = (t, pv, gv) if pv <= gv else (t, gv, pv)  # the unordered pair {pv, gv}
                if key not in out:
                    out[key] = (t, pv, gv, _SIDES[pv in g, gv in p])
    return list(out.values())


_SIDES = {(left_both, right_both): {"left": ["predicted", "gold"] if left_both else ["predicted"],
                                    "right": ["predicted", "gold"] if right_both else ["gold"]}
          for left_both in (False, True) for right_both in (False, True)}
"""The four `sides` a question can have, one object each, shared by every decision's detail (read-only: stored as
JSON, read back as new objects): a dict and two lists per decision were 0.3 KB of 100,000 abstracts' decisions."""


def paper_call_count(doc: ChimeraDoc, pred: ChimeraPrediction) -> int:
    """Judge calls the paper's scorer makes for this document (no cache; chimera.md §3.4)."""
    def same_type_pairs(a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]]) -> int:
        if not a or not b:
            return 0
        per_type: dict[str, int] = {}
        for tb, _ in b:
            per_type[tb] = per_type.get(tb, 0) + 1
        return sum(per_type.get(ta, 0) for ta, _ in a)

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
    """Ask the judge every question (an unordered same-type span pair, in both span orders) once.

    One decision per question (`question_pairs`); its detail holds the answer in each order (`pred_gold`: left
    span shown first; `gold_pred`: right span first) and on which side(s) each span occurs. Judge statistics
    count each ordered prompt once. `stats` (optional) is updated live for progress displays.
    """
    stats = stats if stats is not None else JudgeStats()
    pairs_by_doc: list[tuple[ChimeraDoc, list[tuple[str, str, str, dict]]]] = []
    query_index: dict[tuple[str, str, str, str], int] = {}
    queries: list[SpanQuery] = []
    for doc in docs:
        pred = preds[doc.paper_id]
        stats.paper_calls += paper_call_count(doc, pred)
        pairs = question_pairs(doc, pred)
        pairs_by_doc.append((doc, pairs))
        for t, left, right, _ in pairs:
            for s1, s2 in ((left, right), (right, left)):
                k = (doc.paper_id, t, s1, s2)
                if k not in query_index:
                    query_index[k] = len(queries)
                    queries.append(span_question(doc.paper_id, doc.text, t, s1, s2))
    stats.distinct_queries = len(queries)
    answers = ask_with_cache(judge, queries, cache, stats, progress)
    for (doc_id, t, s1, s2), i in query_index.items():
        a = answers[i]
        if a.value == MISSING:
            if len(stats.missing_examples) < 10:
                stats.missing_examples.append({"paper_id": doc_id, "entity_type": t, "span1": s1, "span2": s2,
                                               "why": a.rationale})
    decisions: list[Decision] = []
    equal: dict[tuple, dict] = {}
    for doc, pairs in pairs_by_doc:
        for t, left, right, sides in pairs:
            i_fwd, i_bwd = query_index[(doc.paper_id, t, left, right)], query_index[(doc.paper_id, t, right, left)]
            fwd, bwd = answers[i_fwd], answers[i_bwd]
            detail = {"pred_gold": _shared_answer(equal, fwd), "gold_pred": _shared_answer(equal, bwd),
                      "sides": sides}
            decisions.append(Decision(doc.paper_id, KIND, t, left, right, label_from_answers(fwd.value, bwd.value),
                                      detail))
    return decisions, stats


def _shared_answer(equal: dict[tuple, dict], answer: object) -> dict:
    """`answer_dict(answer)`, one object for every equal one in a run (read-only, as `_SIDES`): a replayed or
    fuzzy judge gives a handful of distinct answers, and two dicts per decision held 0.4 KB of each of 100,000
    abstracts' decisions (#38)."""
    d = answer_dict(answer)
    try:  # the types in the key: 1, 1.0 and True are equal, but spell differently in JSON
        return equal.setdefault(tuple((k, type(v), v) for k, v in d.items()), d)
    except TypeError:  # a field that is not a scalar (none today) is not shared
        return d


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
    """Counts one document contributes to each section; pooled over documents by `metrics_from_counts`.

    Besides the paper-code sections, `strict_1to1` holds the strict variant's entity and relation counts under
    the same match function (`strict.py`), so reviews move both and no judge call is added.
    """
    return {
        "classification": _classification_counts(bool(pred.relations), bool(doc.gold)),
        "entities": _flat_entity_counts(flat_entities(pred.relations), flat_entities(doc.gold), match),
        "relations": _relation_counts(pred.relations, doc.gold, match),
        strict.STRICT: strict.doc_counts(doc, pred, match),  # type: ignore[dict-item]
    }


def empty_counts() -> DocCounts:
    return {"classification": zero_counts(CLASSES), "entities": zero_counts(ENTITY_TYPES),
            "relations": zero_counts(RELATION_TYPES), strict.STRICT: strict.empty_counts()}  # type: ignore[dict-item]


def sum_counts(parts: Iterable[Mapping[str, Counts]]) -> DocCounts:
    total = empty_counts()
    for part in parts:
        for section, c in part.items():
            if section == strict.STRICT:
                strict.add_into(total[section], c)  # type: ignore[arg-type]
            else:
                add_counts(total[section], c)
    return total


def metrics_from_counts(total: Mapping[str, Counts]) -> dict:
    """The reference scorer's metrics JSON: classification, entities, relations; each per type plus avg.

    Plus `strict_1to1` ({"entities", "relations"}, same shape) when the totals carry consistent strict counts;
    a run stored before the strict variant existed gets `strict_1to1_unavailable` (the reason) instead.
    """
    out = {section: criteria(total[section]) for section in SECTIONS}
    strict_total = total.get(strict.STRICT)
    if strict_total is not None and strict.consistent(total, strict_total):  # type: ignore[arg-type]
        out[strict.STRICT] = strict.metrics(strict_total)  # type: ignore[arg-type]
    else:
        out[f"{strict.STRICT}_unavailable"] = ("this run's stored counts predate the strict 1-to-1 variant; "
                                               "score the run again to see it")
    return out


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
    """Build a MatchFn for one document from {(type, left span, right span): label}.

    A question is an unordered pair, so (type, a, b) answers for (type, b, a) too: one label serves every
    orientation, the entity score and the relation score.
    """
    def match(t: str, pv: str, gv: str) -> bool:
        lab = labels.get((t, pv, gv))
        if lab is None:
            lab = labels.get((t, gv, pv))
        return lab == MATCH

    return match


def aggregate(docs: Sequence[ChimeraDoc], preds: Mapping[str, ChimeraPrediction],
              labels: Mapping[tuple[str, str, str, str], str]) -> dict:
    """Metrics from effective labels keyed by (doc, type, span, span) in either orientation; unknown pairs are
    no-match."""
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
        return tuple([Relation(t, tuple([(et, v) for et, v in ents])) for t, ents in x])

    doc = ChimeraDoc(d["paper_id"], d["text"], d["document_class"], rels(d["gold"]),
                     tuple([GoldSpan(*s) for s in d["gold_spans"]]), d["line"])
    return doc, ChimeraPrediction(d["paper_id"], rels(d["pred"]), d["pred_line"])


def match_summary(doc: ChimeraDoc, pred: ChimeraPrediction, labels: Mapping[tuple[str, str, str], str]) -> dict:
    """For display: matched (type, pred, gold) pairs in every orientation the labels serve, and predicted / gold
    entities with no match at all."""
    pred_ents, gold_ents = set(flat_entities(pred.relations)), set(flat_entities(doc.gold))
    matched = []
    for (t, a, b), lab in labels.items():
        if lab != MATCH:
            continue
        for pv, gv in ((a, b), (b, a)):
            if (t, pv) in pred_ents and (t, gv) in gold_ents and (t, pv, gv) not in matched:
                matched.append((t, pv, gv))
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
