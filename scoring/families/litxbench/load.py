"""Loading litx-json v1 (see data/litxbench/README.md): one JSON file per paper, a folder per run.

Accepted on input: enum member names or values (case-insensitive, resolved as the paper's JSON track does), unit
aliases (`MPa`, `°C`, `HV`...), template variables in synthesis groups, list-form experiments (one implicit group
`default`), the `{"experiments": [...]}` wrapper and the paper's JSON prompt shape (`group_measurements`, lattice
shorthand `{"type": "cubic", "a": ...}`, composition formula strings and `_helper` objects). Every problem raises
`InputError(file, line or None, "JSON.path: reason")`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from scoring.errors import InputError, loads_strict, number_problem, refused_line
from scoring.families.litxbench.elements import ATOMIC_MASS
from scoring.families.litxbench.model import (
    ENUM_KINDS,
    KIND_UNITS,
    MAX_INPUT_BYTES,
    MAX_JSON_DEPTH,
    MAX_TEXTS_BYTES,
    Composition,
    ConfigTag,
    Configuration,
    CrysStruct,
    Experiment,
    GlobalLatticeParam,
    Lattice,
    Material,
    Measurement,
    MeasurementMethod,
    MeasurementStatistic,
    Paper,
    ProcessEvent,
    ProcessKind,
    ProcessStep,
    Quantity,
    RawMaterialKind,
    SynthesisGroup,
    lattice_parameters,
    parse_qualified,
)
from scoring.families.litxbench.units import compatible, parse_unit
from scoring.jsonl import check_file, check_folder
from scoring.limits import MAX_ITEM_TEXT_CHARS

E = TypeVar("E", bound=Enum)
KIND_MODES = ("enum", "string")
"""`enum`: known kind names become enums (the official Python track and the reference files); `string`: every kind
stays a plain string (the paper's JSON track), which switches on lenient word-overlap kind matching everywhere."""
_STEP_RE = re.compile(r"^([^\[]+)(?:\[([^\]]*)\])?.*$")
_BRACKETS_RE = re.compile(r"\[[^\]]*\]")
_FORMULA_PAIR = re.compile(r"([A-Z][a-z]*)\s*([-*\.e\d]*)")
_FORMULA_GROUP = re.compile(r"\(([^\(\)]+)\)\s*([\.e\d]*)")
_ONLY_NUMBERS = re.compile(r"[\s\d.*/]*$")


class _Bad(Exception):
    """A problem at a JSON path, turned into an InputError by `load_paper`."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def resolve_enum(value: Any, enum: type[E], path: str) -> E:
    """Member by name, then value, then case-insensitive name, then value (`json_to_experiments._resolve_enum`)."""
    if not isinstance(value, str):
        raise _Bad(path, f"expected a {enum.__name__} name, got {type(value).__name__}")
    if value in enum.__members__:
        return enum[value]
    for m in enum:
        if m.value == value:
            return m
    low = value.lower()
    for m in enum:
        if m.name.lower() == low or str(m.value).lower() == low:
            return m
    names = ", ".join(m.name for m in enum)
    raise _Bad(path, f"unknown {enum.__name__} {value!r}; expected one of {names}")


def _kind(value: Any, path: str, kind_mode: str) -> tuple[str, bool]:
    if not isinstance(value, str) or not value.strip():
        raise _Bad(path, "measurement kind must be a non-empty string")
    low = value.lower()
    for k in ENUM_KINDS:
        if k == low:
            return k, kind_mode == "enum"
    return value, False


def _obj(value: Any, path: str, what: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise _Bad(path, f"{what} must be an object, got {type(value).__name__}")
    return value


def _list(value: Any, path: str, what: str) -> list:
    if not isinstance(value, list):
        raise _Bad(path, f"{what} must be a list, got {type(value).__name__}")
    return value


def _number(value: Any, path: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad(path, f"expected a number, got {value!r}")
    problem = number_problem(value)
    if problem:
        raise _Bad(path, problem)
    return value


def _unit(value: Any, path: str) -> Any:
    if not isinstance(value, str):
        raise _Bad(path, f"unit must be a string, got {value!r}")
    try:
        return parse_unit(value)
    except ValueError:
        raise _Bad(path, f"unparseable unit {value!r} (use a pint unit name such as megapascal, or MPa)") from None


def _value(value: Any, path: str) -> Any:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _Bad(path, f"value must be a number or a string such as '~23', got {value!r}")
    problem = number_problem(parse_qualified(value)[0] if isinstance(value, str) else value)
    if problem:
        raise _Bad(path, problem)
    return value


DIMENSIONS = {"temperature": "kelvin", "pressure": "pascal", "duration": "second"}
"""A unit of the dimension each quantity field must have (a `phase_fraction` may be a fraction or a percentage)."""


def _quantity(data: Any, path: str) -> Quantity | None:
    if data is None:
        return None
    d = _obj(data, path, "quantity")
    if "value" not in d or "unit" not in d:
        raise _Bad(path, "a quantity needs both 'value' and 'unit'")
    unit = _unit(d["unit"], f"{path}.unit")
    field = path.rsplit(".", 1)[-1]
    if field in DIMENSIONS and not compatible(unit, parse_unit(DIMENSIONS[field])):
        raise _Bad(f"{path}.unit", f"unit {d['unit']!r} is not a unit of {field} (like {DIMENSIONS[field]})")
    return Quantity(_value(d["value"], f"{path}.value"), unit)


# ---------------------------------------------------------------- compositions


MAX_FORMULA_CHARS = 1_000
"""A composition formula longer than this is refused (each bracket group rewrites the string once)."""


def _parse_formula(text: str, path: str) -> dict[str, float]:
    """A formula string read as pymatgen's `Composition(formula)` reads it (the official loader's): `[`/`]` are
    brackets too and `@` is dropped; each innermost bracket group is multiplied out by the amount after it, then
    every `Element amount` pair is summed (an amount is digits, `.`, `e` and `-`: `Fe1e-3Ni`); anything left over is
    an error. Then as `Composition` does: a negative amount is refused (`Ti-6Al-4V`), amounts below 1e-8 are dropped.
    """
    if len(text) > MAX_FORMULA_CHARS:
        raise _Bad(path, f"composition formula is {len(text):,} characters long; the limit is {MAX_FORMULA_CHARS:,}")
    if _ONLY_NUMBERS.match(text):
        raise _Bad(path, f"cannot read composition formula {text!r}")
    formula = text.replace("@", "").replace("[", "(").replace("]", ")")

    def amount(raw: str, where: str) -> float:
        try:
            return float(raw)
        except ValueError:
            raise _Bad(path, f"cannot read composition formula {text[:40]!r}: {raw!r} after {where} is not an "
                             "amount") from None

    def pairs(form: str, factor: float) -> dict[str, float]:
        out: dict[str, float] = {}
        for m in _FORMULA_PAIR.finditer(form):
            value = amount(m[2], m[1]) if m[2].strip() else 1.0
            out[m[1]] = out.get(m[1], 0.0) + value * factor
            form = form.replace(m.group(), "", 1)
        if form.strip():
            raise _Bad(path, f"cannot read composition formula {text[:40]!r} ({form.strip()[:20]!r} is no element "
                             "and amount)")
        return out

    while group := _FORMULA_GROUP.search(formula):
        factor = amount(group[2], f"({group[1][:20]})") if group[2] else 1.0
        expanded = "".join(f"{el}{amt}" for el, amt in pairs(group[1], factor).items())
        formula = formula.replace(group.group(), expanded, 1)
    out: dict[str, float] = {}
    for el, value in pairs(formula, 1.0).items():
        if el not in ATOMIC_MASS:
            raise _Bad(path, f"unknown element {el!r} in formula {text[:40]!r}")
        problem = number_problem(value)
        if problem:
            raise _Bad(path, f"amount of {el} in formula {text[:40]!r}: {problem}")
        if value < -1e-8:
            raise _Bad(path, f"amount of {el} in formula {text[:40]!r} is negative ({value:g})")
        if abs(value) >= 1e-8:  # pymatgen drops amounts below its tolerance
            out[el] = value
    return out


def _from_weights(weights: Any, path: str) -> dict[str, float]:
    w = _obj(weights, path, "weights")
    for el in w:
        if el not in ATOMIC_MASS:
            raise _Bad(path, f"unknown element {el!r}")
    total = sum(_number(v, f"{path}.{el}") / ATOMIC_MASS[el] for el, v in w.items())
    if total <= 0:
        raise _Bad(path, "weights must sum to a positive amount")
    return {el: v / ATOMIC_MASS[el] / total for el, v in w.items()}


def _weight(comp: Mapping[str, float]) -> float:
    return sum(amt * ATOMIC_MASS[el] for el, amt in comp.items())


def _helper(d: Mapping, path: str) -> dict[str, float]:
    """`_helper` objects of the paper's JSON prompt (balance_composition, from_weight_dict, weight_additions)."""
    name = d.get("_helper")
    if name == "balance_composition":
        main, adds = d.get("main_element"), _obj(d.get("additions"), f"{path}.additions", "additions")
        if not isinstance(main, str):
            raise _Bad(path, "balance_composition needs 'main_element' (a string)")
        rest = 100 - sum(_number(v, f"{path}.additions.{k}") for k, v in adds.items())
        return _from_weights({main: rest, **adds}, path)
    if name == "from_weight_dict":
        return _from_weights(d.get("weights"), f"{path}.weights")
    if name == "weight_additions":
        base_raw = d.get("base")
        base = _parse_formula(base_raw, f"{path}.base") if isinstance(base_raw, str) else \
            _element_amounts(base_raw, f"{path}.base")
        add = _from_weights(d.get("additions_weights"), f"{path}.additions_weights")
        frac = _number(d.get("fraction"), f"{path}.fraction")
        scale = _weight(base) * frac / _weight(add)
        out = dict(base)
        for el, amt in add.items():
            out[el] = out.get(el, 0) + amt * scale
        return out
    raise _Bad(path, f"unknown composition helper {name!r}; expected balance_composition, from_weight_dict or "
                     "weight_additions")


def _element_amounts(data: Any, path: str) -> dict[str, float | int]:
    d = _obj(data, path, "composition")
    out: dict[str, float | int] = {}
    for el, amt in d.items():
        if el not in ATOMIC_MASS:
            raise _Bad(f"{path}.{el}", f"unknown element {el!r}")
        v = _number(amt, f"{path}.{el}")
        if v < -1e-8:
            raise _Bad(f"{path}.{el}", "amounts cannot be negative")
        if abs(v) >= 1e-8:  # pymatgen drops amounts below its tolerance
            out[el] = v
    return out


def _composition_amounts(data: Any, path: str) -> dict[str, float | int]:
    if isinstance(data, str):
        amounts: dict[str, float | int] = _parse_formula(data, path)
    elif isinstance(data, Mapping) and "_helper" in data:
        amounts = _helper(data, path)
    elif isinstance(data, Mapping) and len(data) == 1 and next(iter(data)) in (
            "balance_composition", "from_weight_dict", "weight_additions"):
        (name, args), = data.items()
        amounts = _helper({"_helper": name, **_obj(args, f"{path}.{name}", name)}, path)
    elif isinstance(data, Mapping):
        amounts = _element_amounts(data, path)
    else:
        raise _Bad(path, f"composition must be an element -> amount mapping (or a formula string), got "
                         f"{type(data).__name__}")
    if not amounts:
        raise _Bad(path, "composition is empty")
    return amounts


# ---------------------------------------------------------------- measurements


def _lattice(data: Any, path: str) -> Lattice:
    d = _obj(data, path, "lattice")
    kind = d.get("type")
    try:
        if kind is None:
            written = tuple(_number(d[k], f"{path}.{k}") for k in ("a", "b", "c", "alpha", "beta", "gamma"))
        else:
            a = _number(d["a"], f"{path}.a")
            kind = str(kind).lower()
            if kind == "cubic":
                written = (a, a, a, 90, 90, 90)
            elif kind == "hexagonal":
                written = (a, a, _number(d["c"], f"{path}.c"), 90, 90, 120)
            elif kind == "tetragonal":
                written = (a, a, _number(d["c"], f"{path}.c"), 90, 90, 90)
            elif kind == "orthorhombic":
                written = (a, _number(d["b"], f"{path}.b"), _number(d["c"], f"{path}.c"), 90, 90, 90)
            else:
                raise _Bad(f"{path}.type", f"unknown lattice type {kind!r}; expected cubic, hexagonal, "
                                           "tetragonal or orthorhombic")
    except KeyError as e:
        raise _Bad(path, f"lattice is missing parameter {e.args[0]!r}") from None
    return Lattice(lattice_parameters(*written), written, path)


def _measurement(d: Mapping, path: str, kind_mode: str, *, stat_path: str | None = None) -> Measurement:
    for key in ("kind", "value", "unit"):
        if key not in d:
            raise _Bad(path, f"a measurement needs {key!r}")
    kind, is_enum = _kind(d["kind"], f"{path}.kind", kind_mode)
    unit = _unit(d["unit"], f"{path}.unit")
    if kind in KIND_UNITS and not compatible(unit, parse_unit(KIND_UNITS[kind])):
        raise _Bad(f"{path}.unit", f"unit {d['unit']!r} is not a unit of a {kind} (like {KIND_UNITS[kind]})")
    unc = d.get("uncertainty")
    if unc is not None:
        unc = _number(unc, f"{path}.uncertainty")
    if d.get("measurement_statistic") is not None:
        resolve_enum(d["measurement_statistic"], MeasurementStatistic, stat_path or f"{path}.measurement_statistic")
    if d.get("measurement_method") is not None:
        resolve_enum(d["measurement_method"], MeasurementMethod, f"{path}.measurement_method")
    return Measurement(kind, is_enum, _value(d["value"], f"{path}.value"), unit, unc,
                       _quantity(d.get("temperature"), f"{path}.temperature"),
                       _quantity(d.get("pressure"), f"{path}.pressure"), path)


def _group_measurements(d: Mapping, path: str, kind_mode: str) -> list[Measurement]:
    """`Measurement.group_measurements`: one kind/unit and >= 2 values, expanded into single measurements."""
    values = _list(d.get("values"), f"{path}.values", "group_measurements 'values'")
    if len(values) < 2:
        raise _Bad(f"{path}.values", "group_measurements needs at least two values")
    out = []
    for i, v in enumerate(values):
        vp = f"{path}.values[{i}]"
        vd = _obj(v, vp, "a group value")
        if vd.get("statistic") is None:
            raise _Bad(vp, "each value needs a 'statistic' (mean, median, lower, upper, percentile)")
        merged = {k: d[k] for k in ("kind", "unit", "uncertainty", "temperature", "pressure") if k in d}
        merged["value"] = vd.get("value")
        if vd.get("uncertainty") is not None:
            merged["uncertainty"] = vd["uncertainty"]
        merged["measurement_statistic"] = vd["statistic"]
        out.append(_measurement(merged, vp, kind_mode, stat_path=f"{vp}.statistic"))
    return out


def _entry(data: Any, path: str, kind_mode: str, *, nested: bool) -> list[Any]:
    d = _obj(data, path, "a measurement entry")
    t = d.get("_type", "measurement")
    if t == "measurement":
        return [_measurement(d, path, kind_mode)]
    if t == "group_measurements":
        return _group_measurements(d, path, kind_mode)
    if t == "composition":
        if "composition" not in d:
            raise _Bad(path, "a composition entry needs 'composition'")
        method = MeasurementMethod.Unspecified
        if d.get("method") is not None:
            method = resolve_enum(d["method"], MeasurementMethod, f"{path}.method")
        return [Composition(_composition_amounts(d["composition"], f"{path}.composition"), method, path)]
    if t == "lattice":
        lat = _lattice(d.get("lattice"), f"{path}.lattice")
        return [replace(lat, path=path)]
    if t == "lattice_param" and not nested:
        lat = _lattice(d["lattice"], f"{path}.lattice") if d.get("lattice") is not None else None
        struct = resolve_enum(d["struct"], CrysStruct, f"{path}.struct") if d.get("struct") is not None else None
        name = d.get("name")
        if name is not None and not isinstance(name, str):
            raise _Bad(f"{path}.name", "name must be a string")
        return [GlobalLatticeParam(lat, struct, name, _quantity(d.get("phase_fraction"), f"{path}.phase_fraction"),
                                   path)]
    if t == "configuration" and not nested:
        return [_configuration(d, path, kind_mode)]
    allowed = "measurement, group_measurements, composition, lattice" + (
        "" if nested else ", lattice_param, configuration")
    raise _Bad(f"{path}._type", f"unknown or misplaced _type {t!r}; expected one of {allowed}")


def _configuration(d: Mapping, path: str, kind_mode: str) -> Configuration:
    for key in ("name", "within"):
        if d.get(key) is not None and not isinstance(d[key], str):
            raise _Bad(f"{path}.{key}", f"{key} must be a string")
    struct = resolve_enum(d["struct"], CrysStruct, f"{path}.struct") if d.get("struct") is not None else None
    tags = None
    if d.get("tags") is not None:
        tl = _list(d["tags"], f"{path}.tags", "tags")
        tags = frozenset(resolve_enum(t, ConfigTag, f"{path}.tags[{i}]") for i, t in enumerate(tl))
    ms: list[Any] = []
    for i, m in enumerate(_list(d.get("measurements", []), f"{path}.measurements", "measurements")):
        ms.extend(_entry(m, f"{path}.measurements[{i}]", kind_mode, nested=True))
    return Configuration(d.get("name"), d.get("within"), struct, tags, ms, path)


# ---------------------------------------------------------------- processes


def parse_step(text: str, path: str, inputs: tuple[str, ...] = ()) -> ProcessStep:
    """`ProcessStep.parse_material_step`: `base[Var=val,...]` (the base name is kept exactly, unstripped)."""
    if len(_BRACKETS_RE.findall(text)) > 1:
        raise _Bad(path, f"process step {text!r} has several bracket groups; write step[A=1,B=2]")
    m = _STEP_RE.match(text)
    if not m:
        raise _Bad(path, f"invalid process step {text!r}")
    variables: dict[str, str] = {}
    for a in (m.group(2) or "").split(","):
        a = a.strip()
        if "=" in a:
            k, v = a.split("=", 1)
            variables[k.strip()] = v.strip()
    return ProcessStep(m.group(1), variables, inputs)


def parse_process(text: Any, path: str) -> list[ProcessStep]:
    """`ProcessStep.parse_process_string`: inputs, then `->`-separated group steps."""
    if not isinstance(text, str):
        raise _Bad(path, f"process must be a string, got {type(text).__name__}")
    segs = text.split("->")
    inputs = tuple(n.strip() for n in segs[0].split(",") if n.strip())
    if len(segs) < 2 or not inputs:
        raise _Bad(path, f"bad process string {text!r}: expected 'input1,input2->group->group[Var=value]'")
    return [parse_step(segs[1], path, inputs)] + [parse_step(s, path) for s in segs[2:]]


def _group(name: str, events: list[ProcessEvent], path: str) -> SynthesisGroup:
    if len(_BRACKETS_RE.findall(name)) > 1:
        raise _Bad(path, f"group name {name!r} has several bracket groups")
    m = _STEP_RE.match(name)
    if not m:
        raise _Bad(path, f"invalid synthesis group name {name!r}")
    tvars = frozenset(v.strip() for v in (m.group(2) or "").split(",") if v.strip())
    return SynthesisGroup(name, m.group(1), tvars, events)


def _event(data: Any, path: str) -> ProcessEvent:
    d = _obj(data, path, "a process event")
    if "kind" not in d:
        raise _Bad(path, "a process event needs 'kind'")
    inputs = d.get("inputs") or []
    _list(inputs, f"{path}.inputs", "inputs")
    desc = d.get("description")
    return ProcessEvent(resolve_enum(d["kind"], ProcessKind, f"{path}.kind"),
                        _quantity(d.get("temperature"), f"{path}.temperature"),
                        _quantity(d.get("duration"), f"{path}.duration"),
                        desc if isinstance(desc, str) else None, tuple(str(i) for i in inputs))


def substitute(group: SynthesisGroup, variables: Mapping[str, str]) -> list[ProcessEvent]:
    """`SynthesisGroup.substitute_variables`: replace `[Var]` in quantity values and strings, re-parse values."""
    def sub(text: str) -> str:
        for k, v in variables.items():
            text = text.replace(f"[{k}]", v)
        return text

    out = []
    for ev in group.events:
        changes: dict[str, Any] = {}
        for fname in ("temperature", "duration"):
            q = getattr(ev, fname)
            if q is not None:
                s = str(q.raw)
                t = sub(s)
                if t != s:
                    changes[fname] = Quantity(t, q.unit)
        if ev.description is not None and sub(ev.description) != ev.description:
            changes["description"] = sub(ev.description)
        out.append(replace(ev, **changes) if changes else ev)
    return out


def _check_steps(mat: Material, path: str) -> None:
    """A step's variables against its group's. A step naming no group is no error: the official scorer skips it
    (litxbench.md §6; `process.resolve_events`), and `unknown_steps` lists it for the run's warnings."""
    for step in mat.steps or []:
        g = mat.groups.get(step.base_name)
        if g is None:
            continue
        for var in step.variables:
            if var not in g.template_vars:
                raise _Bad(f"{path}.process", f"step assigns {var!r} but group {g.name!r} declares no such variable")
        if g.template_vars:
            missing = sorted(g.template_vars - set(step.variables))
            if missing:
                raise _Bad(f"{path}.process", f"step {step.base_name!r} gives no value for [{missing[0]}] of group "
                                              f"{g.name!r}")


# ---------------------------------------------------------------- experiments and files


def _material(data: Any, path: str, groups: dict[str, SynthesisGroup], list_form: bool, raw_names: list[str],
              kind_mode: str) -> Material:
    d = _obj(data, path, "a material")
    process = d.get("process")
    name = d.get("name")
    if name is not None and not isinstance(name, str):
        raise _Bad(f"{path}.name", "name must be a string")
    steps = parse_process(process, f"{path}.process") if process is not None else None
    if list_form:
        if steps:
            raise _Bad(f"{path}.process", "with list-form synthesis_groups a material must not have a process")
        steps = [ProcessStep("default", {}, tuple(raw_names))]
    ms: list[Any] = []
    for i, m in enumerate(_list(d.get("measurements", []), f"{path}.measurements", "measurements")):
        ms.extend(_entry(m, f"{path}.measurements[{i}]", kind_mode, nested=False))
    if not any(isinstance(m, Composition) for m in ms):
        raise _Bad(f"{path}.measurements", "a material needs at least one top-level composition")
    names = {m.name for m in ms if isinstance(m, Configuration) and m.name is not None}
    for m in ms:
        if isinstance(m, Configuration) and m.within is not None and m.within not in names:
            raise _Bad(f"{m.path}.within", f"within={m.within!r} names no configuration of this material")
    mat = Material(process, name, ms, steps, path, groups)
    _check_steps(mat, path)
    return mat


def _experiment(data: Any, path: str, kind_mode: str) -> Experiment:
    d = _obj(data, path, "an experiment")
    raw = d.get("raw_materials", {})
    raw_d = _obj(raw, f"{path}.raw_materials", "raw_materials")
    for k, v in raw_d.items():
        rv = _obj(v, f"{path}.raw_materials.{k}", "a raw material")
        if rv.get("kind") is not None:
            resolve_enum(rv["kind"], RawMaterialKind, f"{path}.raw_materials.{k}.kind")
    sg = d.get("synthesis_groups", {})
    groups: dict[str, SynthesisGroup] = {}
    list_form = isinstance(sg, list)
    if list_form:
        events = [_event(e, f"{path}.synthesis_groups[{j}]") for j, e in enumerate(sg)]
        groups["default"] = SynthesisGroup("default", "default", frozenset(), events)
    else:
        for gname, evs in _obj(sg, f"{path}.synthesis_groups", "synthesis_groups").items():
            gp = f"{path}.synthesis_groups.{gname}"
            events = [_event(e, f"{gp}[{j}]") for j, e in enumerate(_list(evs, gp, "a synthesis group"))]
            g = _group(gname, events, gp)
            groups[g.base_name] = g
    mats = [_material(m, f"{path}.output_materials[{i}]", groups, list_form, list(raw_d), kind_mode)
            for i, m in enumerate(_list(d.get("output_materials", []), f"{path}.output_materials",
                                        "output_materials"))]
    return Experiment(groups, mats, list_form)


def _depth_ok(obj: Any) -> bool:
    stack = [(obj, 1)]
    while stack:
        o, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return False
        if isinstance(o, dict):
            stack.extend((v, depth + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, depth + 1) for v in o)
    return True


def parse_paper(data: Any, paper_id: str, source: str = "<json>", kind_mode: str = "enum") -> Paper:
    """A Paper from already-parsed JSON (a list of experiments, or `{"experiments": [...]}`).

    Raises:
        InputError: naming `source` and the JSON path of the problem.
    """
    if kind_mode not in KIND_MODES:
        raise ValueError(f"kind_mode must be one of {KIND_MODES}")
    if not _depth_ok(data):
        raise InputError(source, None, f"(root): JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(data, Mapping) and "experiments" in data:
        data = data["experiments"]
    if not isinstance(data, list):
        raise InputError(source, None, "(root): expected a list of experiments or {\"experiments\": [...]}, got "
                                       f"{type(data).__name__}")
    try:
        exps = [_experiment(e, f"experiments[{i}]", kind_mode) for i, e in enumerate(data)]
    except _Bad as b:
        raise InputError(source, None, f"{b.path}: {b.reason}") from None
    return Paper(paper_id, exps, source)


def read_json(path: Path) -> Any:
    """Parse one JSON file (size-checked, UTF-8, depth-checked, `scoring.errors.loads_strict`: no duplicate key,
    every number finite).

    Raises:
        InputError: with the line of a syntax error or of a refused value.
    """
    raw = _read_bytes(path, MAX_INPUT_BYTES, "file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(str(path), raw[: e.start].count(b"\n") + 1, "not valid UTF-8 text") from None
    # Cheap pre-check: json.loads recurses, so absurd nesting must be refused before it is parsed.
    depth = best = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    if best > MAX_JSON_DEPTH * 4:
        raise InputError(str(path), None, f"(root): JSON nested {best} levels deep (limit {MAX_JSON_DEPTH})")
    try:
        data = loads_strict(text)
    except json.JSONDecodeError as e:
        raise InputError(str(path), e.lineno, f"malformed JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:
        raise InputError(str(path), None, "(root): JSON nested too deeply") from None
    except ValueError as e:  # a duplicate key, a number that is not finite (scoring.errors.loads_strict)
        raise InputError(str(path), refused_line(text, e), f"(root): {e}") from None
    long = _long_text(data, "")
    if long is not None:
        where, value = long
        at = text.find(value[:200])
        raise InputError(str(path), text.count("\n", 0, at) + 1 if at >= 0 else None,
                         f"{where}: a text of {len(value):,} characters; the limit is {MAX_ITEM_TEXT_CHARS:,} "
                         "(scoring.limits)")
    return data


def _long_text(value: object, where: str) -> tuple[str, str] | None:
    """The first string in `value` longer than `MAX_ITEM_TEXT_CHARS`, with its JSON path (None: none is)."""
    if isinstance(value, str):
        return (where or "(root)", value) if len(value) > MAX_ITEM_TEXT_CHARS else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _long_text(v, f"{where}[{k}]" if isinstance(k, int) else f"{where}.{k}" if where else str(k))
        if found is not None:
            return found
    return None


def unknown_steps(paper: Paper) -> list[str]:
    """`FILE: PATH.process: step 'X' names no synthesis group (defined: …)` for each process step the scorer skips."""
    out = []
    for mat in paper.materials:
        for step in mat.steps or []:
            if step.base_name not in mat.groups:
                known = ", ".join(repr(k) for k in mat.groups) or "none"
                out.append(f"{paper.path}: {mat.path}.process: step {step.base_name[:60]!r} names no synthesis group "
                           f"(defined: {known[:200]})")
    return out


def load_paper(path: str | Path, kind_mode: str = "enum") -> Paper:
    """One litx-json v1 file; the paper id is the file name without `.json`."""
    p = Path(path)
    return parse_paper(read_json(p), p.stem, str(p), kind_mode)


def check_paper_id(pid: str, path: Path) -> str:
    """A paper id (a file name without its suffix) that names a file in its folder and nowhere else.

    Raises:
        InputError: an id with a path separator of any system, a `..` part, or a control character.
    """
    parts = re.split(r"[\\/]", pid)
    if len(parts) > 1 or pid.startswith("..") or any(unicodedata.category(c) == "Cc" for c in pid):
        raise InputError(str(path), None, f"paper id {pid!r} looks like a path (a separator, '..' or a control "
                                          "character); name the file <paper_id>.json with letters, digits, '-', '_'")
    return pid


def json_files(folder: str | Path) -> dict[str, Path]:
    """paper id -> file of a run folder (every `*.json`, sorted by name), each a regular file inside the folder.

    Raises:
        InputError: not a folder; a link that leaves the folder (`scoring.jsonl.check_folder`); a paper id that
            looks like a path.
    """
    f = Path(folder)
    if not f.is_dir():
        raise InputError(str(f), None, "not a folder (a run is a folder of <paper_id>.json files)")
    check_folder(f)
    out = {}
    other_case = sorted(p.name for p in f.iterdir() if p.suffix.lower() == ".json" and p.suffix != ".json")
    if other_case:  # `*.json` would leave them out unseen (and only on a case-sensitive file system)
        raise InputError(str(f / other_case[0]), None, f"file name ends in {Path(other_case[0]).suffix!r}; name "
                                                       "it <paper_id>.json (lower case) so it is read")
    for p in sorted(f.glob("*.json")):
        if not p.is_file():
            raise InputError(str(p), None, "is not a regular file (a folder named .json?)")
        out[check_paper_id(p.stem, p)] = p
    return out


def load_folder(folder: str | Path, kind_mode: str = "enum") -> dict[str, Paper]:
    """paper id -> Paper for every JSON file of a folder."""
    return {pid: load_paper(p, kind_mode) for pid, p in json_files(folder).items()}


def _read_bytes(path: Path, limit: int, what: str) -> bytes:
    check_file(path, limit=limit, what=what)
    with path.open("rb") as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:  # the file grew after the check
        raise InputError(str(path), None, f"{what} exceeds the limit of {limit // 2**20} MiB")
    return raw


def load_texts(folder: str | Path | None, paper_ids: list[str]) -> tuple[dict[str, str], list[str]]:
    """Paper texts (`<id>.md`, `.txt` or `.markdown`) and the ids that have none.

    Each text is held to the limit of an input file (`MAX_INPUT_BYTES`), all of them to `MAX_TEXTS_BYTES`; the
    folder's links must stay inside it.

    Raises:
        InputError: not a folder, a link leaving it, a text over a limit or not UTF-8.
    """
    texts: dict[str, str] = {}
    missing: list[str] = []
    base = Path(folder) if folder else None
    if base is not None and not base.is_dir():
        raise InputError(str(base), None, "not a folder (expected <paper_id>.md files)")
    if base is not None:
        check_folder(base)
    total = 0
    for pid in paper_ids:
        found = None
        if base is not None:
            for suffix in (".md", ".txt", ".markdown"):
                if (base / f"{check_paper_id(pid, base / pid)}{suffix}").is_file():
                    found = base / f"{pid}{suffix}"
                    break
        if found is None:
            missing.append(pid)
            continue
        raw = _read_bytes(found, MAX_INPUT_BYTES, "paper text")
        total += len(raw)
        if total > MAX_TEXTS_BYTES:
            raise InputError(str(base), None, f"the paper texts exceed {MAX_TEXTS_BYTES // 2**20} MiB together")
        try:
            texts[pid] = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(str(found), raw[: e.start].count(b"\n") + 1, "not valid UTF-8 text") from None
    return texts, missing
