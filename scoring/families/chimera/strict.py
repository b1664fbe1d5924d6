"""CHIMERA's strict 1-to-1 variant: the same effective decisions, aggregated by maximum bipartite matching.

The paper's text says "a predicted entity may match at most one gold entity, and vice versa"; its code
(`src/eval.py`, reproduced in `scorer.py`) matches greedily, first match wins, and lets several predictions hit
one gold entity (over-matching, counted but not penalised). This module is the labelled alternative that does
what the text says; it never replaces the paper-code numbers (chimera.md §4.4).

Definitions (per document; pooled over documents per type, macro-averaged as the paper code does):

- entities, per entity type: the predicted and gold entity *instances* of that type (as the code's flat pass
  counts them) form a bipartite graph whose edges are the effective `match` decisions; tp = size of a maximum
  matching (augmenting paths; `max_matching` names one, with scipy `linear_sum_assignment`), fp = predicted
  instances left unmatched, fn = gold instances left unmatched. So tp + fp = predicted entities and tp + fn =
  gold entities, and over-matching is 0 by definition.
- relations, per relation type: an entity of a relation is its (entity type, span), a span listed twice in one
  relation naming one entity (as in the code, whose matches are keyed by span). For every same-type
  (predicted relation, gold relation) pair, w = the size of the maximum 1-to-1 entity matching between them.
  Relations are aligned 1-to-1 by a maximum-weight assignment on w (pairs with w = 0 stay unaligned, as the
  code needs a similarity > 0 to pick a partner); tp = sum of w over aligned pairs, fp / fn = entities of
  predicted / gold relations not matched inside their aligned pair (an unaligned relation contributes all its
  entities). The code instead lets each relation pick its best partner independently per direction (several
  predicted relations may share one gold partner) and matches greedily inside the pair. With at most one
  relation per side (every published pipeline), alignment is the same in both and only the matching differs.

Consequences for the entity score, and for the relation score with at most one relation per side (checked
in tests/families/chimera/test_strict.py):
- without over-matching on either side (pred_om = gold_om = 0) both variants give the same tp, fp and fn;
- strict tp >= code tp (the code's distinct greedy hits are a matching), strict fp >= code fp and strict
  fn >= code fn (an entity the matching places has a match, so the code counts it as a hit too);
- hence strict precision and recall are NOT always lower: when the greedy first match wastes a gold entity,
  the maximum matching recovers it (pred P1 -> G1, P2 -> {G1, G2}: code tp 1, strict tp 2, so strict P is
  higher; a span predicted twice that matches two gold entities likewise gives strict the higher recall).
  Strict precision is lower than the code's whenever predictions over-match and every predicted entity
  matches at most one gold entity (the shape of chimera.md's first worked example); strict recall is lower
  whenever gold entities over-match and every gold entity matches at most one predicted entity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from scoring.families.chimera.model import ENTITY_TYPES, RELATION_TYPES, ChimeraDoc, ChimeraPrediction, Relation
from scoring.stats.prf import Counts, add_counts, criteria, zero_counts

STRICT = "strict_1to1"
"""Key of the strict variant in per-document counts and in the metrics JSON."""
STRICT_SECTIONS = ("entities", "relations")
SECTION_TITLES = {"entities": "entities (strict 1-to-1)", "relations": "relations (strict 1-to-1)"}
"""Section names of the strict rows in `metric_rows` (overview, scores, LaTeX)."""

MatchFn = Callable[[str, str, str], bool]
"""(entity type, predicted span, gold span) -> counted as a match? (as `scorer.MatchFn`)."""
Entity = tuple[str, str]


def max_matching(pred: Sequence[Entity], gold: Sequence[Entity], match: MatchFn) -> list[tuple[int, int]]:
    """A maximum 1-to-1 matching (index pairs) between predicted and gold entities: same type and `match`.

    `linear_sum_assignment` on the 0/1 match matrix (maximising) gives a maximum-cardinality matching; pairs it
    assigns across a 0 are dropped. Deterministic for a given input order. Counts need only its size
    (`matching_size`); these pairs are for display (`explain`).
    """
    if not pred or not gold:
        return []
    rows_01 = [[1 if pt == gt and match(pt, pv, gv) else 0 for gt, gv in gold] for pt, pv in pred]
    disjoint = _disjoint_positives(rows_01)
    if disjoint is not None:
        return disjoint
    return [(i, j) for i, j, _ in _max_assignment(rows_01)]


def _max_assignment(weights: Sequence[Sequence[int]]) -> list[tuple[int, int, int]]:
    """(row, column, weight) of a maximum-weight assignment, zero cells dropped (scipy, imported on first use so
    that scoring, which rarely needs it, does not load SciPy)."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    w = np.array(weights, dtype=int)
    rows, cols = linear_sum_assignment(w, maximize=True)
    return [(int(i), int(j), int(w[i, j])) for i, j in zip(rows, cols, strict=True) if w[i, j] > 0]


def _disjoint_positives(matrix: Sequence[Sequence[int]]) -> list[tuple[int, int]] | None:
    """The (row, column) of every positive cell, by row, when no row and no column holds two; else None.

    Then the maximum (weight or cardinality) assignment is unique: it takes every positive cell, which is what
    `linear_sum_assignment` returns after dropping the zero cells.
    """
    out: list[tuple[int, int]] = []
    used: set[int] = set()
    for i, row in enumerate(matrix):
        hit = None
        for j, w in enumerate(row):
            if w > 0:
                if hit is not None or j in used:
                    return None
                hit = j
        if hit is not None:
            used.add(hit)
            out.append((i, hit))
    return out


def matching_size(pred: Sequence[Entity], gold: Sequence[Entity], match: MatchFn) -> int:
    """The size of a maximum 1-to-1 matching (`len(max_matching(...))`), by augmenting paths in plain Python.

    Every maximum matching has this size, so the strict counts do not depend on which one scipy would pick.
    """
    if not pred or not gold:
        return 0
    adjacent = [[j for j, (gt, gv) in enumerate(gold) if pt == gt and match(pt, pv, gv)] for pt, pv in pred]
    if len(adjacent) > 200:  # deep augmenting paths: recursion; no real document comes near
        return len(max_matching(pred, gold, match))
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in adjacent[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(1 for i, js in enumerate(adjacent) if js and augment(i, set()))


def entity_counts(pred_ents: Sequence[Entity], gold_ents: Sequence[Entity], match: MatchFn) -> Counts:
    """Strict flat entity counts per entity type (see the module docstring)."""
    counts = zero_counts(ENTITY_TYPES)
    for t in ENTITY_TYPES:
        p = [e for e in pred_ents if e[0] == t]
        g = [e for e in gold_ents if e[0] == t]
        if not p and not g:
            continue
        tp = matching_size(p, g, match)
        c = counts[t]
        c["tp"] += tp
        c["fp"] += len(p) - tp
        c["fn"] += len(g) - tp
        c["total_pred_ent"] += len(p)
        c["total_gold_ent"] += len(g)
    return counts


def _distinct(rel: Relation) -> list[Entity]:
    return list(dict.fromkeys(rel.entities))


def relation_alignment(pred: Sequence[Relation], gold: Sequence[Relation],
                       match: MatchFn) -> list[tuple[int, int, int]]:
    """(predicted relation index, gold relation index, matched entities) of the 1-to-1 relation alignment."""
    out = []
    for rtype in RELATION_TYPES:
        pi = [i for i, r in enumerate(pred) if r.type == rtype]
        gi = [j for j, r in enumerate(gold) if r.type == rtype]
        if not pi or not gi:
            continue
        weights = [[matching_size(_distinct(pred[i]), _distinct(gold[j]), match) for j in gi] for i in pi]
        disjoint = _disjoint_positives(weights)
        if disjoint is not None:
            out += [(pi[r], gi[c], weights[r][c]) for r, c in disjoint]
        else:
            out += [(pi[r], gi[c], w) for r, c, w in _max_assignment(weights)]
    return out


def relation_counts(pred: Sequence[Relation], gold: Sequence[Relation], match: MatchFn) -> Counts:
    """Strict relation counts per relation type (see the module docstring)."""
    counts = zero_counts(RELATION_TYPES)
    hit_pred: dict[int, int] = {}
    hit_gold: dict[int, int] = {}
    for i, j, w in relation_alignment(pred, gold, match):
        hit_pred[i], hit_gold[j] = w, w
        counts[pred[i].type]["tp"] += w
    for rels, hits, side in ((pred, hit_pred, "pred"), (gold, hit_gold, "gold")):
        for i, r in enumerate(rels):
            n = len(_distinct(r))
            c = counts[r.type]
            c["fp" if side == "pred" else "fn"] += n - hits.get(i, 0)
            c[f"total_{side}_ent"] += n
    return counts


def doc_counts(doc: ChimeraDoc, pred: ChimeraPrediction, match: MatchFn) -> dict[str, Counts]:
    """The strict counts one document contributes: {"entities": ..., "relations": ...}."""
    pred_ents = [e for r in pred.relations for e in r.entities]
    gold_ents = [e for r in doc.gold for e in r.entities]
    return {"entities": entity_counts(pred_ents, gold_ents, match),
            "relations": relation_counts(pred.relations, doc.gold, match)}


def empty_counts() -> dict[str, Counts]:
    return {"entities": zero_counts(ENTITY_TYPES), "relations": zero_counts(RELATION_TYPES)}


def add_into(total: dict[str, Counts], part: Mapping[str, Mapping[str, Mapping[str, int]]]) -> None:
    """total += part, section by section (in place)."""
    for section, c in part.items():
        add_counts(total.setdefault(section, {}), c)


def consistent(paper: Mapping[str, Counts], strict: Mapping[str, Counts]) -> bool:
    """Whether the strict counts cover the same entities as the paper-code counts (same totals per type).

    They always do for counts computed together; they do not for a run stored before the strict variant existed
    (its stored counts have no strict part, and re-counted documents would add only theirs)."""
    for section in STRICT_SECTIONS:
        for t, c in paper.get(section, {}).items():
            s = strict.get(section, {}).get(t, {})
            if any(c.get(k, 0) != s.get(k, 0) for k in ("total_pred_ent", "total_gold_ent")):
                return False
    return True


def metrics(strict_total: Mapping[str, Counts]) -> dict:
    """The strict part of the metrics JSON: {"entities": criteria, "relations": criteria} (as the paper code's)."""
    return {section: criteria(strict_total[section]) for section in STRICT_SECTIONS}


# ---------------------------------------------------------------- where the variants differ


def _prf(rec: Mapping[str, Mapping[str, int]]) -> dict:
    tp = sum(c["tp"] for c in rec.values())
    fp = sum(c["fp"] for c in rec.values())
    fn = sum(c["fn"] for c in rec.values())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def differing_documents(doc_counts: Iterable[tuple[str, Mapping]]) -> list[dict]:
    """The documents whose score changes between the paper-code and the strict variant, in input order.

    Args:
        doc_counts: (document id, that document's counts as `scorer.doc_counts` returns them, i.e. with the
            `strict_1to1` part), e.g. every document's audited counts.

    Returns:
        One dict per differing document: `doc`; per section (`entities`, `relations`) the document's pooled
        `paper` and `strict` tp / fp / fn / precision / recall / f1 (pooled over the types it has); and `types`:
        the (section, type) whose tp / fp / fn differ, with both triples and the paper code's over-matching.
        Documents without strict counts (stored before the variant existed) are skipped.
    """
    out = []
    for doc_id, counts in doc_counts:
        strict = counts.get(STRICT)
        if not strict:
            continue
        types = []
        for section in STRICT_SECTIONS:
            for t, c in counts.get(section, {}).items():
                s = strict.get(section, {}).get(t)
                if s is None:
                    continue
                paper3, strict3 = (c["tp"], c["fp"], c["fn"]), (s["tp"], s["fp"], s["fn"])
                if paper3 != strict3:
                    types.append({"section": section, "type": t, "paper": paper3, "strict": strict3,
                                  "pred_om": c.get("pred_om", 0), "gold_om": c.get("gold_om", 0)})
        if types:
            out.append({"doc": doc_id, "types": types,
                        **{section: {"paper": _prf(counts.get(section, {})), "strict": _prf(strict.get(section, {}))}
                           for section in STRICT_SECTIONS}})
    return out


def explain(doc: ChimeraDoc, pred: ChimeraPrediction, match: MatchFn) -> dict:
    """For display: how each variant pairs this document's entities (flat entity score).

    Returns:
        `first_match`: (type, predicted, gold) the paper code's predicted pass credits (first matching gold);
        `strict_pairs`: (type, predicted, gold) of the maximum 1-to-1 matching;
        `over_matched_pred`: predicted (type, span) whose first match is a gold entity an earlier prediction
            already took (the code's `pred_om`); `over_matched_gold`: gold (type, span) whose first matching
            prediction was already taken by an earlier gold entity (`gold_om`);
        `shared_gold`: gold (type, span) hit by more than one prediction's first match;
        `over_matching_pred` / `over_matching_gold`: every predicted / gold (type, span) taking part in an
            over-match on either pass (what a view highlights).
    """
    pred_ents = [e for r in pred.relations for e in r.entities]
    gold_ents = [e for r in doc.gold for e in r.entities]

    def first(ents_a: Sequence[Entity], ents_b: Sequence[Entity], a_is_pred: bool) -> list[int | None]:
        out: list[int | None] = []
        for ta, va in ents_a:
            hit = None
            for j, (tb, vb) in enumerate(ents_b):
                if ta == tb and (match(ta, va, vb) if a_is_pred else match(ta, vb, va)):
                    hit = j
                    break
            out.append(hit)
        return out

    p_first, g_first = first(pred_ents, gold_ents, True), first(gold_ents, pred_ents, False)
    seen: set[int] = set()
    om_pred, taken = [], {}
    for i, j in enumerate(p_first):
        if j is None:
            continue
        if j in seen:
            om_pred.append(pred_ents[i])
        seen.add(j)
        taken.setdefault(j, []).append(i)
    seen_p: set[int] = set()
    om_gold, taken_p = [], {}
    for j, i in enumerate(g_first):
        if i is None:
            continue
        if i in seen_p:
            om_gold.append(gold_ents[j])
        seen_p.add(i)
        taken_p.setdefault(i, []).append(j)
    shared_g = {j for j, ii in taken.items() if len(ii) > 1}
    shared_p = {i for i, jj in taken_p.items() if len(jj) > 1}
    part_pred = [i for j in shared_g for i in taken[j]] + list(shared_p)
    part_gold = list(shared_g) + [j for i in shared_p for j in taken_p[i]]
    strict_pairs = []
    for t in ENTITY_TYPES:
        p = [e for e in pred_ents if e[0] == t]
        g = [e for e in gold_ents if e[0] == t]
        strict_pairs += [(t, p[i][1], g[j][1]) for i, j in max_matching(p, g, match)]
    return {
        "first_match": [(pred_ents[i][0], pred_ents[i][1], gold_ents[j][1]) for i, j in enumerate(p_first)
                        if j is not None],
        "strict_pairs": strict_pairs,
        "over_matched_pred": list(dict.fromkeys(om_pred)),
        "over_matched_gold": list(dict.fromkeys(om_gold)),
        "shared_gold": list(dict.fromkeys(gold_ents[j] for j in sorted(shared_g))),
        "over_matching_pred": list(dict.fromkeys(pred_ents[i] for i in sorted(part_pred))),
        "over_matching_gold": list(dict.fromkeys(gold_ents[j] for j in sorted(part_gold))),
    }
