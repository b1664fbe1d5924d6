"""Pairing: item scores, item / configuration / material assignment (official eval.py, 0.1.3), under optional
reviewer constraints.

Every assignment builds the official square matrix (padding 0 for items, 5 for configurations, 50 for materials)
and calls scipy's `linear_sum_assignment`, then keeps only pairs under the threshold, so with no constraints the
pairings are the official ones, ties included. A constraint is a (gold path, predicted path) pair: a *forced* pair is
taken out of the matrix and kept whatever its score; a *forbidden* pair's cell is set to the padding value, which is
what "leave both unmatched" costs, so the threshold always drops it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np

from scoring.families.litxbench import units
from scoring.families.litxbench.model import (
    Composition,
    ConfigTag,
    Configuration,
    GlobalLatticeParam,
    Lattice,
    Material,
    Measurement,
    MeasurementMethod,
    ProcessEvent,
    Quantity,
    ValueQualifier,
)
from scoring.families.litxbench.process import Alignment, align, normalise_events, resolve_events
from scoring.families.litxbench.units import compatible, convert, to_base, unit_text

MIN_ITEM_MATCH_SCORE = 0.25
CONFIG_UNMATCHED_PENALTY = 5.0
UNMATCHED_PENALTY = 50.0
ABS_TOL = 1e-6
REL_TOL = 1e-3
"""The corrected (non-official) variant's relative tolerance, in base units: rounded conversions such as
25 °C = 298 K pass, and tiny values (5.89e-5 vs 5.85e-5 A/cm²) no longer match by default."""
_W_TAGS, _W_STRUCT, _W_NAME, _W_MEAS, _W_WITHIN = 2.0, 2.0, 1.0, 3.0, 2.0
_MAX_CONFIG_COST = _W_TAGS + _W_STRUCT + _W_NAME + _W_MEAS + _W_WITHIN
T = TypeVar("T")


@dataclass(frozen=True)
class Constraints:
    """Reviewer constraints on one paper: (gold path, predicted path) pairs per level."""

    forced: frozenset[tuple[str, str]] = frozenset()
    forbidden: frozenset[tuple[str, str]] = frozenset()
    relative: bool = False
    """Use the corrected relative tolerance instead of the official absolute 1e-6."""

    def within(self, prefix_gold: str, prefix_pred: str) -> Constraints:
        """The constraints whose paths lie under two material / configuration paths (for cache keys)."""
        if not self.forced and not self.forbidden:
            return self
        def keep(pairs: frozenset[tuple[str, str]]) -> frozenset[tuple[str, str]]:
            return frozenset(p for p in pairs if p[0].startswith(prefix_gold + ".") and
                             p[1].startswith(prefix_pred + "."))
        return Constraints(keep(self.forced), keep(self.forbidden), self.relative)


NONE = Constraints()

# ---------------------------------------------------------------- comparable items


@dataclass
class Item:
    """`ComparableItem`: a typed thing to pair (measurement, composition, lattice, struct, phase_fraction)."""

    type: str
    obj: Any
    context: str | None
    path: str

    def what(self) -> str:
        o = self.obj
        if self.type == "struct":
            return f"struct={o.value}"
        if self.type == "phase_fraction":
            return f"phase_fraction={o.raw} {unit_text(o.unit)}"
        return o.what()


def top_items(material: Material) -> list[Item]:
    """`_extract_comparable_items`: top-level measurements, GLPs split into lattice / struct / phase items."""
    items: list[Item] = []
    for m in material.measurements:
        if isinstance(m, Measurement):
            items.append(Item("measurement", m, None, m.path))
        elif isinstance(m, Composition):
            items.append(Item("composition", m, None, m.path))
        elif isinstance(m, Lattice):
            items.append(Item("lattice", m, None, m.path))
        elif isinstance(m, GlobalLatticeParam):
            ctx = m.name or ""
            if m.lattice is not None:
                items.append(Item("lattice", m.lattice, ctx, f"{m.path}.lattice"))
            if m.struct is not None:
                items.append(Item("struct", m.struct, ctx, f"{m.path}.struct"))
            if m.phase_fraction is not None:
                items.append(Item("phase_fraction", m.phase_fraction, ctx, f"{m.path}.phase_fraction"))
    return items


def config_items(cfg: Configuration) -> list[Item]:
    """`_extract_config_comparable_items`: nested items, no context."""
    out = []
    for m in cfg.measurements:
        if isinstance(m, Measurement):
            out.append(Item("measurement", m, None, m.path))
        elif isinstance(m, Lattice):
            out.append(Item("lattice", m, None, m.path))
        elif isinstance(m, Composition):
            out.append(Item("composition", m, None, m.path))
    return out


def configurations(material: Material) -> list[Configuration]:
    return [m for m in material.measurements if isinstance(m, Configuration)]


# ---------------------------------------------------------------- scores

_PUNCT = re.compile(r"[()[\],:/+]")
_Q = ValueQualifier
_ORDER = [_Q.EXACT, _Q.APPROXIMATE, _Q.ABOVE, _Q.BELOW, _Q.ABOVE_OR_EQUAL, _Q.BELOW_OR_EQUAL, _Q.MUCH_ABOVE,
          _Q.MUCH_BELOW]
_MATRIX = [
    [1.0, 0.75, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25],
    [0.75, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25],
    [0.5, 0.5, 1.0, 0, 0.75, 0, 0.5, 0],
    [0.5, 0.5, 0, 1.0, 0, 0.75, 0, 0.5],
    [0.5, 0.5, 0.75, 0, 1.0, 0, 0.5, 0],
    [0.5, 0.5, 0, 0.75, 0, 1.0, 0, 0.5],
    [0.25, 0.25, 0.5, 0, 0.5, 0, 1.0, 0],
    [0.25, 0.25, 0, 0.5, 0, 0.5, 0, 1.0],
]
QUALIFIER_COMPAT = {(a, b): _MATRIX[i][j] for i, a in enumerate(_ORDER) for j, b in enumerate(_ORDER)}


_TRACE: ContextVar[list[tuple[Any, ...]] | None] = ContextVar("litxbench_tolerance_trace", default=None)
"""While `tolerance_blind` runs: every tolerance comparison made, with its official answer."""


def values_match(a: float | None, a_unit: Any, b: float | None, b_unit: Any, relative: bool = False) -> bool:
    """`_values_match`: convert the predicted value to the gold unit, compare with absolute tolerance 1e-6."""
    if a is not None and b is not None:
        if not compatible(a_unit, b_unit):
            return False
        conv = convert(b, b_unit, a_unit)
        if conv is None:
            return False
        if relative:
            # in base units, so that offset units (°C) are compared on an absolute scale
            x, y = to_base(a, a_unit), to_base(b, b_unit)
            return x is not None and y is not None and abs(x - y) <= max(1e-12, REL_TOL * max(abs(x), abs(y)))
        out = abs(a - conv) <= ABS_TOL
        trace = _TRACE.get()
        if trace is not None:
            trace.append((a, a_unit, b, b_unit, out))
        return out
    return a == b


def tolerance_blind(compute: Callable[[], T]) -> tuple[T, bool]:
    """Run an official-tolerance computation; (its result, whether the corrected tolerance agrees on every
    comparison it made).

    The tolerance only enters through `values_match`, so when every comparison gets the same answer under both
    tolerances, the corrected computation takes the same path to the same result and need not be run.
    """
    trace: list[tuple[Any, ...]] = []
    token = _TRACE.set(trace)
    try:
        out = compute()
    finally:
        _TRACE.reset(token)
    return out, all(values_match(a, au, b, bu, True) == official for a, au, b, bu, official in trace)


def quantity_score(a: Quantity, b: Quantity, relative: bool = False) -> float:
    """`_quantity_score`: qualifier compatibility if the numbers match (or are both missing), else 0."""
    if not (a.numeric is None and b.numeric is None) and \
            not values_match(a.numeric, a.unit, b.numeric, b.unit, relative):
        return 0.0
    return QUALIFIER_COMPAT.get((a.qualifier, b.qualifier), 0.0)


def context_score(a: str | None, b: str | None) -> float:
    """`_context_score`: Jaccard of lower-cased word sets (punctuation as spaces); None/empty rules as official."""
    if a is None and b is None:
        return 1.0
    if a is None or b is None:
        return 0.0
    ta = set(_PUNCT.sub(" ", a.lower()).split())
    tb = set(_PUNCT.sub(" ", b.lower()).split())
    if not ta and not tb:
        return 1.0
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


_CAMEL = re.compile(r"([a-z])([A-Z])")


@lru_cache(maxsize=4096)
def _kind_words(kind: str) -> frozenset[str]:
    words: set[str] = set()
    for part in kind.split("_"):
        for w in _CAMEL.sub(r"\1_\2", part).split("_"):
            w = w.lower().strip()
            if w:
                words.add(w)
    return frozenset(words)


def kind_score(a: str, b: str, a_enum: bool, b_enum: bool) -> float:
    """`_kind_match_score`: 1 if equal, 0 for two different enums, else word overlap (0.7 / max(0.3, Jaccard))."""
    if a == b:
        return 1.0
    if a_enum and b_enum:
        return 0.0
    wa, wb = _kind_words(a), _kind_words(b)
    overlap = wa & wb
    if not overlap:
        return 0.0
    if len(overlap) >= 2:
        return 0.7
    union = wa | wb
    return max(0.3, len(overlap) / len(union) if union else 0.0)


def _is_room_temperature(q: Quantity) -> bool:
    if q.numeric is None:
        return False
    k = convert(q.numeric, q.unit, units.KELVIN)
    return k is not None and abs(k - units.ROOM_TEMPERATURE_K) <= 2.0


def _is_ambient_pressure(q: Quantity) -> bool:
    if q.numeric is None:
        return False
    p = convert(q.numeric, q.unit, units.ATM)
    return p is not None and 0.9 <= p <= 1.1


def _condition(a: Quantity | None, b: Quantity | None, ambient: Callable[[Quantity], bool],
               relative: bool) -> tuple[float, bool]:
    if a is None and b is None:
        return 0.0, False
    if a is not None and b is not None:
        return quantity_score(a, b, relative), True
    present = a if a is not None else b
    assert present is not None
    return (0.85 if ambient(present) else 0.0), True


def measurement_score(a: Measurement, b: Measurement, relative: bool = False) -> float:
    """`measurement_score`: kind score x weighted mean of qualifier (1), temperature (2), pressure (2)."""
    ks = kind_score(a.kind, b.kind, a.kind_is_enum, b.kind_is_enum)
    if ks == 0.0:
        return 0.0
    if not (a.numeric is None and b.numeric is None) and \
            not values_match(a.numeric, a.unit, b.numeric, b.unit, relative):
        return 0.0
    comps = [(1.0, QUALIFIER_COMPAT.get((a.qualifier, b.qualifier), 0.0))]
    ts, ta = _condition(a.temperature, b.temperature, _is_room_temperature, relative)
    if ta:
        comps.append((2.0, ts))
    ps, pa = _condition(a.pressure, b.pressure, _is_ambient_pressure, relative)
    if pa:
        comps.append((2.0, ps))
    total = sum(w for w, _ in comps)
    return ks * (sum(w * s for w, s in comps) / total)


def composition_score(gold: Composition, pred: Composition) -> float:
    """`_comp_measurement_score`: 0 unless the fractional formulas are equal; then 0.75 + 0.25 x method."""
    if gold.alphabetical_fractional_formula() != pred.alphabetical_fractional_formula():
        return 0.0
    if gold.method in (MeasurementMethod.Unspecified, MeasurementMethod.Balance) or gold.method == pred.method:
        return 1.0
    return 0.75


def lattice_matched(a: Lattice, b: Lattice) -> bool:
    return all(abs(x - y) < 0.01 for x, y in zip(a.params, b.params, strict=True))


def item_score(a: Item, b: Item, relative: bool = False) -> float:
    """`_comparable_item_score`: same type required; context similarity x type score."""
    if a.type != b.type:
        return 0.0
    cs = context_score(a.context, b.context)
    if cs == 0.0:
        return 0.0
    if a.type == "measurement":
        s = measurement_score(a.obj, b.obj, relative)
    elif a.type == "composition":
        s = composition_score(a.obj, b.obj)
    elif a.type == "lattice":
        s = 1.0 if lattice_matched(a.obj, b.obj) else 0.0
    elif a.type == "struct":
        s = 1.0 if a.obj == b.obj else 0.0
    elif a.type == "phase_fraction":
        s = quantity_score(a.obj, b.obj, relative)
    else:
        s = 0.0
    return cs * s


# ---------------------------------------------------------------- constrained assignment


@dataclass
class Assignment:
    """The result of one (constrained) Hungarian step, in indices of the real rows and columns."""

    kept: list[tuple[int, int]]
    """Pairs kept, sorted by row (forced ones included)."""
    dropped: list[tuple[int, int]]
    """Real pairs the solver assigned but the threshold (or a prohibition) discarded (spec §10.2)."""
    unmatched_rows: list[int]
    unmatched_cols: list[int]
    forced: set[tuple[int, int]] = field(default_factory=set)


def assign(cost: np.ndarray, pad: float, keep: Callable[[float], bool], forced: Sequence[tuple[int, int]] = (),
           forbidden: Sequence[tuple[int, int]] = ()) -> Assignment:
    """Hungarian on the square padding of `cost` (n x m real cells), official threshold after assignment."""
    from scipy.optimize import linear_sum_assignment  # 0.25 s to import: only where a paper is solved (#38)

    n, m = cost.shape
    fr: set[int] = set()
    fc: set[int] = set()
    forced_ok: set[tuple[int, int]] = set()
    for r, c in sorted(forced):
        if r not in fr and c not in fc:
            forced_ok.add((r, c))
            fr.add(r)
            fc.add(c)
    rows = [i for i in range(n) if i not in fr]
    cols = [j for j in range(m) if j not in fc]
    kept = set(forced_ok)
    dropped: list[tuple[int, int]] = []
    if rows and cols:
        sub = cost[np.ix_(rows, cols)].copy() if (fr or fc) else cost.copy()
        if forbidden:
            ri = {r: k for k, r in enumerate(rows)}
            ci = {c: k for k, c in enumerate(cols)}
            for r, c in forbidden:
                if r in ri and c in ci:
                    sub[ri[r], ci[c]] = pad
        size = max(len(rows), len(cols))
        mat = np.full((size, size), pad, dtype=float)
        mat[: len(rows), : len(cols)] = sub
        for r, c in zip(*linear_sum_assignment(mat), strict=True):
            if r < len(rows) and c < len(cols):
                if keep(float(mat[r, c])):
                    kept.add((rows[r], cols[c]))
                else:
                    dropped.append((rows[r], cols[c]))
    kr = {r for r, _ in kept}
    kc = {c for _, c in kept}
    return Assignment(sorted(kept), dropped, [i for i in range(n) if i not in kr], [j for j in range(m) if j not in kc],
                      forced_ok)


def _indices(pairs: frozenset[tuple[str, str]], gold: Sequence[Any], pred: Sequence[Any]) -> list[tuple[int, int]]:
    if not pairs:
        return []
    gi = {x.path: i for i, x in enumerate(gold)}
    pi = {x.path: j for j, x in enumerate(pred)}
    return [(gi[g], pi[p]) for g, p in pairs if g in gi and p in pi]


@dataclass
class ItemMatch:
    """`MeasurementMatchResult` over two item lists."""

    gold: list[Item]
    pred: list[Item]
    pairs: list[tuple[int, int, float]]
    unmatched_gold: list[int]
    unmatched_pred: list[int]
    scores: np.ndarray
    dropped: list[tuple[int, int]] = field(default_factory=list)
    forced: set[tuple[int, int]] = field(default_factory=set)

    @property
    def match_score(self) -> float:
        return sum(s for _, _, s in self.pairs)

    @property
    def total(self) -> int:
        return max(len(self.pairs) + len(self.unmatched_gold), len(self.pairs) + len(self.unmatched_pred))


def match_items(gold: list[Item], pred: list[Item], cons: Constraints = NONE) -> ItemMatch:
    """`match_comparable_items`: maximise the summed score; keep pairs scoring > 0.25."""
    n, m = len(gold), len(pred)
    scores = np.zeros((n, m))
    for i, g in enumerate(gold):
        for j, p in enumerate(pred):
            scores[i, j] = item_score(g, p, cons.relative)
    if n == 0 or m == 0:
        return ItemMatch(gold, pred, [], list(range(n)), list(range(m)), scores)
    # Items of different types never match (`item_score` is 0), yet the assignment can pair them and the threshold
    # drop them, and a review may then call such a pair a match: it is not one the scorer can count, so it is not
    # forced (a pair forced across types would be compared as if both were of the gold item's type).
    forced = [(i, j) for i, j in _indices(cons.forced, gold, pred) if gold[i].type == pred[j].type]
    a = assign(-scores, 0.0, lambda c: c < -MIN_ITEM_MATCH_SCORE, forced, _indices(cons.forbidden, gold, pred))
    return ItemMatch(gold, pred, [(i, j, float(scores[i, j])) for i, j in a.kept], a.unmatched_rows,
                     a.unmatched_cols, scores, a.dropped, a.forced)


# ---------------------------------------------------------------- configurations


def _config_map(cfgs: list[Configuration]) -> dict[str, Configuration]:
    return {c.name: c for c in cfgs if c.name}


def _ancestors(cfg: Configuration, cmap: dict[str, Configuration]) -> list[str]:
    out: list[str] = []
    cur, seen = cfg, set()
    while cur.within is not None and cur.within not in seen:
        seen.add(cur.within)
        parent = cmap.get(cur.within)
        if parent is None:
            out.append(cur.within)
            break
        out.append(parent.name or "")
        cur = parent
    out.reverse()
    return out


def _ancestry_tags(cfg: Configuration, cmap: dict[str, Configuration]) -> set[ConfigTag]:
    tags = set(cfg.tags) if cfg.tags else set()
    cur, seen = cfg, set()
    while cur.within is not None and cur.within not in seen:
        seen.add(cur.within)
        parent = cmap.get(cur.within)
        if parent is None:
            break
        if parent.tags:
            tags |= parent.tags
        cur = parent
    return tags


@dataclass
class ConfigPair:
    """One configuration pair: its cost parts and its nested item match."""

    cost: float
    breakdown: dict[str, float]
    items: ItemMatch

    @property
    def score(self) -> float:
        return max(0.0, 1.0 - self.cost / _MAX_CONFIG_COST)


def config_cost(gold: Configuration, pred: Configuration, gmap: dict[str, Configuration],
                pmap: dict[str, Configuration], cons: Constraints = NONE) -> ConfigPair:
    """`_config_cost`: 2 (tags) + 2 (struct) + 1 (name) + 3 (nested items) + 2 (within), maximum 10."""
    tg, tp = _ancestry_tags(gold, gmap), _ancestry_tags(pred, pmap)
    if not tg and not tp:
        tags = 1.0
    elif not tg or not tp:
        tags = 0.0
    else:
        tags = len(tg & tp) / len(tg | tp)
    if gold.struct is None and pred.struct is None:
        struct = 1.0
    elif gold.struct is not None and pred.struct is not None:
        struct = 1.0 if gold.struct == pred.struct else 0.0
    else:
        struct = 0.0
    cg = " ".join([*_ancestors(gold, gmap), *([gold.name] if gold.name else [])])
    cp = " ".join([*_ancestors(pred, pmap), *([pred.name] if pred.name else [])])
    name = 1.0 if not cg and not cp else context_score(cg or None, cp or None)
    if gold.within is None and pred.within is None:
        within = 1.0
    elif gold.within is None or pred.within is None:
        within = 0.0
    else:
        within = context_score(gold.within, pred.within)
    im = match_items(config_items(gold), config_items(pred), cons)
    meas = im.match_score / im.total if im.total > 0 else 1.0
    cost = (_W_TAGS * (1.0 - tags) + _W_STRUCT * (1.0 - struct) + _W_NAME * (1.0 - name)
            + _W_MEAS * (1.0 - meas) + _W_WITHIN * (1.0 - within))
    return ConfigPair(cost, {"tags": tags, "struct": struct, "name": name, "measurement": meas, "within": within}, im)


def within_match(gold: Configuration, pred: Configuration,
                 pairs: Sequence[tuple[Configuration, Configuration]]) -> bool:
    """`_check_within_match`: both roots, or parents that were themselves paired (by name)."""
    if gold.within is None and pred.within is None:
        return True
    if gold.within is None or pred.within is None:
        return False
    return any(tg.name == gold.within and tp.name == pred.within for tg, tp in pairs)


@dataclass
class ConfigMatch:
    """`ConfigurationMatchResult` plus every candidate pair's cost (for review)."""

    gold: list[Configuration]
    pred: list[Configuration]
    pairs: list[tuple[int, int, ConfigPair]]
    unmatched_gold: list[int]
    unmatched_pred: list[int]
    candidates: dict[tuple[int, int], ConfigPair]
    dropped: list[tuple[int, int]] = field(default_factory=list)
    forced: set[tuple[int, int]] = field(default_factory=set)

    def paired_objects(self) -> list[tuple[Configuration, Configuration]]:
        return [(self.gold[i], self.pred[j]) for i, j, _ in self.pairs]


def match_configs(gold: list[Configuration], pred: list[Configuration], cons: Constraints = NONE) -> ConfigMatch:
    """`match_configurations`: Hungarian on `config_cost`, padding 5, keep cost < 5."""
    n, m = len(gold), len(pred)
    if n == 0 and m == 0:
        return ConfigMatch(gold, pred, [], [], [], {})
    gmap, pmap = _config_map(gold), _config_map(pred)
    cand: dict[tuple[int, int], ConfigPair] = {}
    cost = np.full((n, m), CONFIG_UNMATCHED_PENALTY)
    for i in range(n):
        for j in range(m):
            cp = config_cost(gold[i], pred[j], gmap, pmap, cons.within(gold[i].path, pred[j].path))
            cand[(i, j)] = cp
            cost[i, j] = cp.cost
    if n == 0 or m == 0:
        return ConfigMatch(gold, pred, [], list(range(n)), list(range(m)), cand)
    a = assign(cost, CONFIG_UNMATCHED_PENALTY, lambda c: c < CONFIG_UNMATCHED_PENALTY,
               _indices(cons.forced, gold, pred), _indices(cons.forbidden, gold, pred))
    return ConfigMatch(gold, pred, [(i, j, cand[(i, j)]) for i, j in a.kept], a.unmatched_rows, a.unmatched_cols,
                       cand, a.dropped, a.forced)


# ---------------------------------------------------------------- materials


@dataclass
class MaterialPair:
    """`MaterialCostResult`: the cost of pairing two materials and everything it was computed from."""

    cost: float
    alignment: Alignment
    gold_events: list[ProcessEvent]
    pred_events: list[ProcessEvent]
    items: ItemMatch
    configs: ConfigMatch


def events_of(material: Material) -> list[ProcessEvent]:
    return normalise_events(resolve_events(material))


def material_cost(gold: Material, pred: Material, cons: Constraints = NONE,
                  events: tuple[list[ProcessEvent], list[ProcessEvent]] | None = None) -> MaterialPair:
    """`material_cost`: process edit distance + top-level item mismatch + configuration cost (not normalised)."""
    ge, pe = events if events is not None else (events_of(gold), events_of(pred))
    al = align(ge, pe)
    cm = match_configs(configurations(gold), configurations(pred), cons)
    im = match_items(top_items(gold), top_items(pred), cons)
    mismatches = im.total - im.match_score
    ccost = 0.0
    for _, _, cp in cm.pairs:
        ccost += 1.0 - cp.score
    ccost += len(cm.unmatched_gold) + len(cm.unmatched_pred)
    for _, _, cp in cm.pairs:
        ccost += 1.0 * (cp.items.total - cp.items.match_score)
    cost = 1.0 * al.distance + 1.0 * mismatches + ccost
    return MaterialPair(cost, al, ge, pe, im, cm)
