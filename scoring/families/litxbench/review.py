"""Decisions and re-solving under reviews.

The "judge" of LitXBench is the official algorithm: it decides which gold material pairs with which predicted one,
which items and configurations of a material pair go together, and whether each predicted number is in the paper.
Decisions hold the pairs the solver chose plus candidate pairs a reviewer may force (the best alternatives per row
and column). Reviews become constraints: `match` on a pair the unconstrained solver did not choose forces it;
`no-match` on a pair it chose forbids it; the paper is then re-solved (`solve_under`).

Decision strings: `left` is the predicted side, `right` the gold side; each starts with the JSON path of the thing
(no spaces in paths), followed by a readable description. A path names its material (and configuration), which is
how an item decision knows the material pair it belongs to.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from scoring.decisions import Decision
from scoring.families.base import canonical_json, json_list
from scoring.families.litxbench import hallucination
from scoring.families.litxbench.load import parse_paper
from scoring.families.litxbench.match import (
    MIN_ITEM_MATCH_SCORE,
    UNMATCHED_PENALTY,
    Constraints,
    Item,
    ItemMatch,
    MaterialPair,
    _condition,
    _is_ambient_pressure,
    _is_room_temperature,
    context_score,
    kind_score,
    quantity_score,
    values_match,
    within_match,
)
from scoring.families.litxbench.model import (
    FOUND,
    KIND_CONFIG,
    KIND_ITEM,
    KIND_MATERIAL,
    KIND_NUMBER,
    MATCH,
    NO_MATCH,
    NOT_FOUND,
    Measurement,
    Paper,
)
from scoring.families.litxbench.score import PaperResult, Solver, paper_counts
from scoring.families.litxbench.units import compatible, convert, unit_text

CANDIDATES = 3
"""Alternatives offered per row and per column of each assignment, best first."""
_MATERIAL_RE = re.compile(r"^(experiments\[\d+\]\.output_materials\[\d+\])")
_CONFIG_RE = re.compile(r"^(experiments\[\d+\]\.output_materials\[\d+\]\.measurements\[\d+\])\.measurements\[\d+\]")


def path_of(s: str) -> str:
    """The JSON path a decision string starts with."""
    return s.split(" ", 1)[0]


_STEP_RE = re.compile(r"([A-Za-z_][\w]*)?((?:\[\d+\])*)")


def content_at(root: object, path: str) -> list:
    """What a decision path names, as content: at every list step on the way the element's content and how many
    identical elements come before it in that list (two identical predicted items are two questions, whichever
    order the prediction lists them in, and an item is told apart by the material it lies in)."""
    node: object = {"experiments": root} if isinstance(root, list) else root
    out: list = []
    for step in path.split("."):
        m = _STEP_RE.fullmatch(step)
        if m is None:
            return [path]
        if m.group(1):
            if not isinstance(node, Mapping) or m.group(1) not in node:
                return [path]
            node = node[m.group(1)]
        for index in map(int, re.findall(r"\[(\d+)\]", m.group(2) or "")):
            if not isinstance(node, list) or index >= len(node):
                return [path]
            element = node[index]
            out.append([m.group(1), element, sum(x == element for x in node[:index])])
            node = element
    return [*out, path.rsplit("]", 1)[-1], node]


class ContentTexts:
    """`canonical_json(content_at(root, path))` for the paths of one document side, each list element's text
    computed once: a document's decisions name the same experiments and materials hundreds of times.

    Elements are remembered by identity, so the root must not change while this lives (one `question_keys` call)."""

    def __init__(self, root: object) -> None:
        self.root = root
        self._elements: dict[int, str] = {}
        self._paths: dict[str, str] = {}

    def text(self, path: str) -> str:
        found = self._paths.get(path)
        if found is None:
            found = self._paths[path] = self._text(path)
        return found

    def _element(self, element: object) -> str:
        found = self._elements.get(id(element))
        if found is None:
            found = self._elements[id(element)] = canonical_json(element)
        return found

    def _text(self, path: str) -> str:
        content = content_at(self.root, path)
        if len(content) < 2:  # a path that names nothing: [path]
            return canonical_json(content)
        *steps, tail, node = content
        texts = [json_list([canonical_json(name), self._element(element), canonical_json(n)])
                 for name, element, n in steps]
        # the node is the last step's element (alive in the root), or a value reached by name: spelled anew
        node_text = self._element(node) if steps and node is steps[-1][1] else canonical_json(node)
        return json_list([*texts, canonical_json(tail), node_text])


def resolve_path(root: object, path: str) -> object:
    """The value a decision path (`experiments[0].output_materials[1].measurements[2]`) names inside a paper's
    experiments list (a path that names nothing gives the path itself, so a key still exists)."""
    node: object = {"experiments": root} if isinstance(root, list) else root
    for step in path.split("."):
        m = _STEP_RE.fullmatch(step)
        if m is None:
            return path
        if m.group(1):
            if not isinstance(node, Mapping) or m.group(1) not in node:
                return path
            node = node[m.group(1)]
        for index in re.findall(r"\[(\d+)\]", m.group(2) or ""):
            if not isinstance(node, list) or int(index) >= len(node):
                return path
            node = node[int(index)]
    return node


def material_of(path: str) -> str:
    m = _MATERIAL_RE.match(path)
    return m.group(1) if m else path


def config_of(path: str) -> str | None:
    """The configuration a nested item path lies in (None for a top-level item)."""
    m = _CONFIG_RE.match(path)
    return m.group(1) if m else None


# ---------------------------------------------------------------- parsed payload cache


@dataclass
class Doc:
    """A payload parsed once: both papers, the text and a solver whose material-pair costs are cached.

    What only depends on the payload is computed once per document and kept here, so a review costs the re-solve
    alone: the number check (`numbers`), the material index and the baseline pairs of each scope.
    """

    paper_id: str
    gold: Paper
    pred: Paper
    text: str | None
    solver: Solver
    baseline: PaperResult
    _scopes: dict[tuple, set[tuple[str, str]] | None] = field(default_factory=dict, repr=False)

    @cached_property
    def numbers(self) -> list[tuple[hallucination.Number, bool | None, int | None]]:
        """`hallucination.locate` of the prediction in the text: (number, found, first position)."""
        return hallucination.locate(self.pred, self.text)

    @cached_property
    def number_keys(self) -> list[tuple[tuple[str, str, str, str], bool | None]]:
        """Each number's decision key (kind, type, left, right) with the check's found."""
        return [((KIND_NUMBER, n.source, n.path, number_text(n.value)), found) for n, found, _ in self.numbers]

    @cached_property
    def index(self) -> tuple[dict[str, int], dict[str, int]]:
        """Material path -> index, gold and predicted."""
        return ({m.path: i for i, m in enumerate(self.solver.gold_materials)},
                {m.path: j for j, m in enumerate(self.solver.pred_materials)})


_DOCS: OrderedDict[tuple[str, str | None], Doc] = OrderedDict()


def payload_key(payload: Mapping) -> tuple[str, str | None]:
    """What identifies a payload's document: the hash of its papers, and its text."""
    text = payload.get("text")
    plain = text is None or isinstance(text, str)
    # the text (most of a payload's bytes) is part of the key as itself: comparing a string is cheaper than
    # JSON-escaping and hashing it
    return (hashlib.sha1(json.dumps([payload.get("paper_id"), payload.get("gold"), payload.get("pred"),
                                     payload.get("kind_mode"), None if plain else text],
                                    sort_keys=True).encode()).hexdigest(), text if plain else None)


def doc_from_payload(payload: Mapping) -> Doc:
    """Parse (or fetch from a small LRU cache) the document a payload describes."""
    key = payload_key(payload)
    if key in _DOCS:
        _DOCS.move_to_end(key)
        return _DOCS[key]
    mode = payload.get("kind_mode", "enum")
    gold = parse_paper(payload["gold"], payload["paper_id"], f"{payload['paper_id']} (gold)", mode)
    pred = parse_paper(payload.get("pred") or [], payload["paper_id"], f"{payload['paper_id']} (prediction)", mode)
    solver = Solver(gold, pred)
    d = Doc(payload["paper_id"], gold, pred, payload.get("text"), solver, solver.solve())
    _DOCS[key] = d
    while len(_DOCS) > 64:
        _DOCS.popitem(last=False)
    return d


# ---------------------------------------------------------------- constraints from labels


def _baseline_pairs(doc: Doc, kind: str, gp: str, pp: str) -> set[tuple[str, str]] | None:
    """The pairs the unconstrained solver chooses in the scope of a decision (None: scope unknown)."""
    if kind == KIND_MATERIAL:
        scope: tuple = (kind,)
    elif kind == KIND_CONFIG:
        scope = (kind, material_of(gp), material_of(pp))
    else:
        scope = (kind, material_of(gp), material_of(pp), config_of(gp), config_of(pp))
    if scope not in doc._scopes:
        doc._scopes[scope] = _scope_pairs(doc, kind, gp, pp)
    return doc._scopes[scope]


def _scope_pairs(doc: Doc, kind: str, gp: str, pp: str) -> set[tuple[str, str]] | None:
    if kind == KIND_MATERIAL:
        r = doc.baseline
        return {(r.gold[i].path, r.pred[j].path) for i, j, _ in r.matched}
    gi, pi = doc.index
    gm, pm = material_of(gp), material_of(pp)
    if gm not in gi or pm not in pi:
        return None
    mp = doc.solver.pair(gi[gm], pi[pm])
    if kind == KIND_CONFIG:
        cm = mp.configs
        return {(cm.gold[a].path, cm.pred[b].path) for a, b, _ in cm.pairs}
    gc, pc = config_of(gp), config_of(pp)
    if gc is None and pc is None:
        im = mp.items
    elif gc is not None and pc is not None:
        cm = mp.configs
        ag = next((a for a, c in enumerate(cm.gold) if c.path == gc), None)
        bp = next((b for b, c in enumerate(cm.pred) if c.path == pc), None)
        if ag is None or bp is None or (ag, bp) not in cm.candidates:
            return None
        im = cm.candidates[(ag, bp)].items
    else:
        return None
    return {(im.gold[a].path, im.pred[b].path) for a, b, _ in im.pairs}


def constraints_from(doc: Doc, labels: Mapping[tuple[str, str, str, str], str], relative: bool = False) -> Constraints:
    """Reviews as constraints: labels that differ from what the unconstrained solver chose."""
    forced, forbidden = set(), set()
    for (kind, _t, left, right), lab in labels.items():
        if kind not in (KIND_MATERIAL, KIND_ITEM, KIND_CONFIG) or lab not in (MATCH, NO_MATCH):
            continue
        pp, gp = path_of(left), path_of(right)
        base = _baseline_pairs(doc, kind, gp, pp)
        if base is None:
            continue
        chosen = (gp, pp) in base
        if lab == MATCH and not chosen:
            forced.add((gp, pp))
        elif lab == NO_MATCH and chosen:
            forbidden.add((gp, pp))
    return Constraints(frozenset(forced), frozenset(forbidden), relative)


def solve_under(doc: Doc, cons: Constraints) -> PaperResult:
    """The paper re-solved under constraints (the baseline itself when there are none)."""
    if not cons.forced and not cons.forbidden and not cons.relative:
        return doc.baseline
    return doc.solver.solve(cons)


def number_counts(doc: Doc, labels: Mapping[tuple[str, str, str, str], str]) -> dict:
    """Hallucination counts: each number found or not found under its `number` decision's label."""
    checked = doc.number_keys
    total = len(checked)
    if total == 0 or any(f is None for _, f in checked):
        return {"total_numbers": total, "numbers_found": 0, "numbers_not_found": 0}
    nf = 0
    for key, found in checked:
        lab = labels.get(key)
        if lab is not None:
            found = lab == FOUND
        nf += not found
    return {"total_numbers": total, "numbers_found": total - nf, "numbers_not_found": nf}


def number_text(v: float | int) -> str:
    return repr(v)


# ---------------------------------------------------------------- decisions


def _top(values: np.ndarray, k: int, best_low: bool) -> list[int]:
    order = np.argsort(values if best_low else -values, kind="stable")
    return [int(x) for x in order[:k]]


def _candidate_cells(matrix: np.ndarray, eligible: np.ndarray, best_low: bool) -> list[tuple[int, int]]:
    """Top alternatives per row and per column among eligible cells, best first, capped at CANDIDATES each."""
    n, m = matrix.shape
    cells: list[tuple[int, int]] = []
    big = np.inf if best_low else -np.inf
    masked = np.where(eligible, matrix, big)
    for i in range(n):
        cells += [(i, j) for j in _top(masked[i], CANDIDATES, best_low) if eligible[i, j]]
    for j in range(m):
        cells += [(i, j) for i in _top(masked[:, j], CANDIDATES, best_low) if eligible[i, j]]
    return list(dict.fromkeys(cells))


def material_decisions(doc: Doc, r: PaperResult) -> list[Decision]:
    """One decision per chosen, assigned-but-dropped, or candidate material pair."""
    n, m = r.cost.shape
    if n == 0 or m == 0:
        return []
    kept = {(i, j) for i, j, _ in r.matched}
    cells = list(dict.fromkeys([*sorted(kept), *r.dropped,
                                *_candidate_cells(r.cost, np.ones_like(r.cost, dtype=bool), True)]))
    out = []
    for i, j in cells:
        mp = r.pairs[(i, j)]
        g, p = r.gold[i], r.pred[j]
        ties = [r.pred[k].label() for k in range(m) if k != j and r.cost[i, k] == r.cost[i, j]]
        settings = _process_settings_differ(mp)
        quirks = []
        if (i, j) in r.dropped:
            quirks.append("threshold applied after assignment: the solver paired these but the cost is >= 50")
        if ties and (i, j) in kept:
            quirks.append("tie: another predicted material costs the same; scipy's order chose this one")
        if settings and (i, j) in kept:
            quirks.append("process kinds alone: aligned events differ in temperature/duration, which the cost "
                          "ignores")
        out.append(Decision(doc.paper_id, KIND_MATERIAL, "material", p.label(), g.label(),
                            MATCH if (i, j) in kept else NO_MATCH,
                            {"cost": mp.cost, "threshold": UNMATCHED_PENALTY, "chosen": (i, j) in kept,
                             "assigned": (i, j) in kept or (i, j) in r.dropped,
                             "process_edit_distance": mp.alignment.distance,
                             "item_mismatch": mp.items.total - mp.items.match_score,
                             "config_cost": mp.cost - mp.alignment.distance - (mp.items.total - mp.items.match_score),
                             "rank_for_gold": int((r.cost[i] < r.cost[i, j]).sum()) + 1,
                             "rank_for_pred": int((r.cost[:, j] < r.cost[i, j]).sum()) + 1,
                             "ties": ties[:5], "process_settings_differ": settings, "quirks": quirks,
                             "gold_process": [e.kind.value for e in mp.gold_events],
                             "pred_process": [e.kind.value for e in mp.pred_events],
                             "alignment": [[a, b] for a, b in mp.alignment.steps]}))
    return out


def _process_settings_differ(mp: MaterialPair) -> list[str]:
    out = []
    for a, b in mp.alignment.matched:
        ge, pe = mp.gold_events[a], mp.pred_events[b]
        for f in ("temperature", "duration"):
            gq, pq = getattr(ge, f), getattr(pe, f)
            if (gq is None) != (pq is None) or (gq is not None and pq is not None and quantity_score(gq, pq) < 1):
                out.append(f"{ge.kind.value} {f}: gold {gq.text() if gq else '-'} vs predicted "
                           f"{pq.text() if pq else '-'}")
    return out


def _near_miss(g: Item, p: Item) -> dict:
    """Why an item pair scores what it does: kind, value, unit, qualifier, temperature, pressure; quirk flags."""
    out: dict = {}
    if g.type != p.type:
        return {"reason": "different item types"}
    if context_score(g.context, p.context) == 0.0:
        out["reason"] = "GLP names differ (a named phase never matches an unnamed one)"
        return out
    if g.type == "measurement":
        gm: Measurement = g.obj
        pm: Measurement = p.obj
        ks = kind_score(gm.kind, pm.kind, gm.kind_is_enum, pm.kind_is_enum)
        out["kind_score"] = ks
        out["gold"] = {"kind": gm.kind, "value": gm.raw, "unit": unit_text(gm.unit)}
        out["pred"] = {"kind": pm.kind, "value": pm.raw, "unit": unit_text(pm.unit)}
        reasons = []
        if ks == 0.0:
            reasons.append("kind")
        if gm.numeric is not None and pm.numeric is not None:
            if not compatible(gm.unit, pm.unit):
                reasons.append("unit")
            else:
                conv = convert(pm.numeric, pm.unit, gm.unit)
                out["pred_in_gold_unit"] = conv
                absolute = values_match(gm.numeric, gm.unit, pm.numeric, pm.unit)
                relative = values_match(gm.numeric, gm.unit, pm.numeric, pm.unit, True)
                if not absolute:
                    reasons.append("value")
                    if relative:
                        out["quirk_rounded_conversion_failed"] = True
                elif not relative:
                    out["quirk_absolute_tolerance_only"] = True
        elif (gm.numeric is None) != (pm.numeric is None):
            reasons.append("value")
        if gm.qualifier != pm.qualifier:
            reasons.append("qualifier")
        for f, amb in (("temperature", _is_room_temperature), ("pressure", _is_ambient_pressure)):
            s, active = _condition(getattr(gm, f), getattr(pm, f), amb, False)
            if active and s < 1:
                reasons.append(f)
                gq, pq = getattr(gm, f), getattr(pm, f)
                out[f] = {"gold": gq.text() if gq else None, "pred": pq.text() if pq else None, "score": s}
        out["reason"] = ", ".join(reasons) if reasons else "match"
    elif g.type == "composition":
        gf, pf = g.obj.alphabetical_fractional_formula(), p.obj.alphabetical_fractional_formula()
        out.update({"gold_formula": gf, "pred_formula": pf, "gold_method": g.obj.method.name,
                    "pred_method": p.obj.method.name})
        out["reason"] = "composition" if gf != pf else ("method" if g.obj.method != p.obj.method else "match")
    elif g.type == "lattice":
        out.update({"gold": list(g.obj.written), "pred": list(p.obj.written)})
        out["reason"] = "match" if all(abs(a - b) < 0.01 for a, b in zip(g.obj.params, p.obj.params,
                                                                         strict=True)) else "lattice parameter"
    elif g.type == "struct":
        out["reason"] = "match" if g.obj == p.obj else "struct"
    elif g.type == "phase_fraction":
        out.update({"gold": g.obj.text(), "pred": p.obj.text()})
        out["reason"] = "match" if quantity_score(g.obj, p.obj) == 1 else "value"
    return out


def _item_eligible(im: ItemMatch) -> np.ndarray:
    n, m = len(im.gold), len(im.pred)
    el = np.zeros((n, m), dtype=bool)
    for i, g in enumerate(im.gold):
        for j, p in enumerate(im.pred):
            if im.scores[i, j] > 0:
                el[i, j] = True
            elif g.type == p.type and context_score(g.context, p.context) > 0:
                if g.type == "measurement":
                    el[i, j] = kind_score(g.obj.kind, p.obj.kind, g.obj.kind_is_enum, p.obj.kind_is_enum) > 0
                else:
                    el[i, j] = g.type in ("composition", "lattice", "phase_fraction")
    return el


def item_decisions(paper_id: str, im: ItemMatch) -> list[Decision]:
    """Chosen, dropped and candidate item pairs of one material (or configuration) pair."""
    n, m = len(im.gold), len(im.pred)
    if n == 0 or m == 0:
        return []
    kept = {(i, j) for i, j, _ in im.pairs}
    cells = list(dict.fromkeys([*sorted(kept), *im.dropped, *_candidate_cells(im.scores, _item_eligible(im), False)]))
    out = []
    for i, j in cells:
        g, p = im.gold[i], im.pred[j]
        detail = {"score": float(im.scores[i, j]), "threshold": MIN_ITEM_MATCH_SCORE, "chosen": (i, j) in kept,
                  "gold_what": g.what(), "pred_what": p.what(), **_near_miss(g, p)}
        if (i, j) in im.dropped:
            detail["quirk_threshold_after_assignment"] = True
        out.append(Decision(paper_id, KIND_ITEM, g.type, f"{p.path} {p.what()}", f"{g.path} {g.what()}",
                            MATCH if (i, j) in kept else NO_MATCH, detail))
    return out


def pair_decisions(paper_id: str, mp: MaterialPair) -> list[Decision]:
    """Item and configuration decisions of one material pair (nested items of its chosen configuration pairs)."""
    out = item_decisions(paper_id, mp.items)
    cm = mp.configs
    n, m = len(cm.gold), len(cm.pred)
    if n and m:
        kept = {(a, b) for a, b, _ in cm.pairs}
        cost = np.array([[cm.candidates[(a, b)].cost for b in range(m)] for a in range(n)])
        cells = list(dict.fromkeys([*sorted(kept), *cm.dropped,
                                    *_candidate_cells(cost, np.ones_like(cost, dtype=bool), True)]))
        objs = cm.paired_objects()
        for a, b in cells:
            cp = cm.candidates[(a, b)]
            g, p = cm.gold[a], cm.pred[b]
            detail = {"cost": cp.cost, "score": cp.score, "threshold_cost": 5.0, "chosen": (a, b) in kept,
                      "breakdown": dict(cp.breakdown), "gold_within": g.within, "pred_within": p.within,
                      "parent_check": within_match(g, p, objs) if (a, b) in kept else None}
            if (a, b) in cm.dropped:
                detail["quirk_threshold_after_assignment"] = True
            out.append(Decision(paper_id, KIND_CONFIG, "configuration", f"{p.path} {p.what()}",
                                f"{g.path} {g.what()}", MATCH if (a, b) in kept else NO_MATCH, detail))
        for _, _, cp in cm.pairs:
            out += item_decisions(paper_id, cp.items)
    return out


def number_decisions(doc: Doc) -> list[Decision]:
    out = []
    for n, found, at in doc.numbers:
        if found is None:
            continue
        out.append(Decision(doc.paper_id, KIND_NUMBER, n.source, n.path, number_text(n.value),
                            FOUND if found else NOT_FOUND,
                            {"value": n.value, "variants": hallucination.variants(n.value), "at": at}))
    return out


def decisions(doc: Doc) -> list[Decision]:
    """Every decision of one document under the unconstrained solve."""
    r = doc.baseline
    out = material_decisions(doc, r)
    for _, _, mp in r.matched:
        out += pair_decisions(doc.paper_id, mp)
    out += number_decisions(doc)
    seen: dict[tuple, Decision] = {}
    for d in out:
        seen.setdefault(d.key, d)
    return list(seen.values())


_AHEAD: dict[tuple, dict] = {}
AHEAD_CAP = 4096
"""Documents whose counts `count_ahead` keeps at most: a run's papers (their counts' JSON is under 1 KB each)."""


def _ahead_key(payload: Mapping, labels: Mapping[tuple[str, str, str, str], str]) -> tuple:
    return payload_key(payload), frozenset(labels.items())


def forget_ahead() -> None:
    """Drop the counts `count_ahead` kept (a run scored before, or one that never reached its store)."""
    _AHEAD.clear()


def count_ahead(payload: Mapping, doc: Doc, decisions: Sequence[Decision]) -> None:
    """A document's counts under its judge labels, computed while it is decided (its solved papers at hand) and kept
    for `counts_of`: the store counts a run's documents after every one is decided, when the cache of solved papers
    (64) no longer holds them, and each was solved again (500 papers: 15.5 s of `score`, #38)."""
    if len(_AHEAD) < AHEAD_CAP:
        labels = {(d.kind, d.type, d.left, d.right): d.judge for d in decisions}
        _AHEAD[_ahead_key(payload, labels)] = counts(doc, labels)


def counts_of(payload: Mapping, labels: Mapping[tuple[str, str, str, str], str]) -> dict:
    """`counts` of the payload's document: the counts `count_ahead` kept for exactly this payload and these labels
    (taken, so each serves once), else computed."""
    # a review (nothing kept: not scoring) does not spell the payload's key twice
    kept = _AHEAD.pop(_ahead_key(payload, labels), None) if _AHEAD else None
    return kept if kept is not None else counts(doc_from_payload(payload), labels)


def counts(doc: Doc, labels: Mapping[tuple[str, str, str, str], str], corrected: bool = True) -> dict:
    """Per-document counts: {"papers": {paper_id: {levels..., hallucination, corrected}}}."""
    cons = constraints_from(doc, labels)
    c = paper_counts(solve_under(doc, cons))
    c["hallucination"] = number_counts(doc, labels)
    if corrected:
        rc = Constraints(cons.forced, cons.forbidden, True)
        cc = paper_counts(solve_under(doc, rc), True)
        c["corrected"] = {k: cc[k] for k in ("value", "measurement", "config", "process", "material")}
    return {"papers": {doc.paper_id: c}}


def redecide(doc: Doc, labels: Mapping[tuple[str, str, str, str], str]) -> list[Decision]:
    """Item / configuration decisions of pairs that the labels bring in and scoring did not decide."""
    cons = constraints_from(doc, labels)
    if not cons.forced:
        return []
    r = solve_under(doc, cons)
    base = {(i, j) for i, j, _ in doc.baseline.matched}
    known = set(labels)
    out: list[Decision] = []
    for i, j, _ in r.matched:
        base_mp = doc.solver.pair(i, j)  # judge labels = the unconstrained pairing of this material pair
        news = pair_decisions(doc.paper_id, base_mp) if (i, j) not in base else []
        base_cfg = {(a, b) for a, b, _ in base_mp.configs.pairs}
        for a, b, _cp in doc.solver.pair(i, j, cons).configs.pairs:
            if (a, b) not in base_cfg:
                news += item_decisions(doc.paper_id, base_mp.configs.candidates[(a, b)].items)
        out += [d for d in news if (d.kind, d.type, d.left, d.right) not in known]
    seen: dict[tuple, Decision] = {}
    for d in out:
        seen.setdefault(d.key, d)
    return list(seen.values())


def moot(doc: Doc, labels: Mapping[tuple[str, str, str, str], str]) -> set[tuple[str, str, str, str]]:
    """Item / configuration decisions whose material (or configuration) pair is not chosen under the labels."""
    r = solve_under(doc, constraints_from(doc, labels))
    mats = {(r.gold[i].path, r.pred[j].path) for i, j, _ in r.matched}
    cfgs = {(mp.configs.gold[a].path, mp.configs.pred[b].path)
            for _, _, mp in r.matched for a, b, _ in mp.configs.pairs}
    out = set()
    for key in labels:
        kind, _t, left, right = key
        if kind not in (KIND_ITEM, KIND_CONFIG):
            continue
        pp, gp = path_of(left), path_of(right)
        if (material_of(gp), material_of(pp)) not in mats:
            out.add(key)
            continue
        if kind == KIND_ITEM:
            gc, pc = config_of(gp), config_of(pp)
            if gc is not None and pc is not None and (gc, pc) not in cfgs:
                out.add(key)
    return out
