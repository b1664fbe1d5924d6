"""The hallucination check (official `core/hallucination.py`): is every number of a prediction in the paper text?

Numbers collected per material: measurement value, uncertainty, temperature and pressure (configurations
included); composition amounts as stored; the six lattice parameters with pymatgen's round-off; GLP phase
fractions; process-event temperature and duration after template substitution (Cut included, no implicit Mixing).
A number is found when one of its spellings ("450" / "450.0" for whole numbers, `format(v, "g")` / `str(v)`
otherwise) occurs with no digit right before or after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scoring.families.litxbench.model import (
    Composition,
    Configuration,
    GlobalLatticeParam,
    Lattice,
    Measurement,
    Paper,
    Quantity,
)
from scoring.families.litxbench.process import resolve_events


@dataclass(frozen=True)
class Number:
    """One number of a prediction: where it is (JSON-like path), what it is, and its value."""

    path: str
    source: str
    """measurement value, uncertainty, temperature, pressure, composition, lattice, phase fraction, process ..."""
    value: float | int


def variants(value: float | int) -> list[str]:
    """`_format_number_variants`: the spellings searched for."""
    if isinstance(value, int) or (isinstance(value, float) and value == int(value)):
        i = int(value)
        return [str(i), f"{i}.0"]
    out = [f"{value:g}"]
    if str(value) not in out:
        out.append(str(value))
    return out


_DIGIT = re.compile(r"\d")


def find(variant: str, text: str) -> int | None:
    """Where `(?<!\\d)VARIANT(?!\\d)` (the official pattern) first matches in `text`, or None.

    Same leftmost match as the regex search, found with `str.find` over the occurrences (overlapping ones included)
    and a `\\d` check of the characters either side: the regex engine cannot skip ahead to a literal behind a
    lookbehind, so on a paper-sized text it is far slower.
    """
    n = len(variant)
    p = text.find(variant)
    while p != -1:
        if (p == 0 or not _DIGIT.match(text, p - 1)) and not _DIGIT.match(text, p + n):
            return p
        p = text.find(variant, p + 1)
    return None


def first_at(value: float | int, text: str) -> int | None:
    """Where the first spelling of `value` that occurs in `text` first occurs (spellings in `variants` order)."""
    for v in variants(value):
        at = find(v, text)
        if at is not None:
            return at
    return None


def in_text(value: float | int, text: str) -> bool:
    """`_number_in_text`."""
    return first_at(value, text) is not None


def _q(q: Quantity | None, path: str, source: str) -> list[Number]:
    return [] if q is None or q.numeric is None else [Number(path, source, q.numeric)]


def _meas(m: Measurement) -> list[Number]:
    out = [] if m.numeric is None else [Number(f"{m.path}.value", "measurement value", m.numeric)]
    if m.uncertainty is not None:
        out.append(Number(f"{m.path}.uncertainty", "uncertainty", m.uncertainty))
    return out + _q(m.temperature, f"{m.path}.temperature", "temperature") + _q(
        m.pressure, f"{m.path}.pressure", "pressure")


def _comp(c: Composition) -> list[Number]:
    # get_el_amt_dict accumulates into a float default, so amounts are reported as floats
    return [Number(f"{c.path}.composition.{el}", "composition", 0.0 + v) for el, v in c.amounts.items()]


def _lat(lat: Lattice, path: str) -> list[Number]:
    return [Number(f"{path}.{k}", "lattice", v) for k, v in zip(("a", "b", "c", "alpha", "beta", "gamma"),
                                                                 lat.params, strict=True)]


def numbers(paper: Paper) -> list[Number]:
    """`extract_all_numbers`, in the official order, each with a path."""
    out: list[Number] = []
    for mat in paper.materials:
        for m in mat.measurements:
            if isinstance(m, Configuration):
                for n in m.measurements:
                    if isinstance(n, Measurement):
                        out += _meas(n)
                    elif isinstance(n, Composition):
                        out += _comp(n)
                    elif isinstance(n, Lattice):
                        out += _lat(n, f"{n.path}.lattice")
            elif isinstance(m, Measurement):
                out += _meas(m)
            elif isinstance(m, Composition):
                out += _comp(m)
            elif isinstance(m, Lattice):
                out += _lat(m, f"{m.path}.lattice")
            elif isinstance(m, GlobalLatticeParam):
                if m.lattice is not None:
                    out += _lat(m.lattice, f"{m.path}.lattice")
                out += _q(m.phase_fraction, f"{m.path}.phase_fraction", "phase fraction")
        for k, ev in enumerate(resolve_events(mat)):
            out += _q(ev.temperature, f"{mat.path}.process[{k}].temperature", f"process {ev.kind.name} temperature")
            out += _q(ev.duration, f"{mat.path}.process[{k}].duration", f"process {ev.kind.name} duration")
    return out


def check(paper: Paper, text: str | None) -> list[tuple[Number, bool | None]]:
    """Every number with found (True / False), or None for all when the text is missing or blank (the official
    scorer then reports 0 not found)."""
    return [(n, found) for n, found, _ in locate(paper, text)]


def locate(paper: Paper, text: str | None) -> list[tuple[Number, bool | None, int | None]]:
    """`check` plus where each found number first occurs (`first_at`); each distinct value is searched once."""
    nums = numbers(paper)
    if not text or not text.strip():
        return [(n, None, None) for n in nums]
    at: dict[tuple[type, float | int], int | None] = {}
    out = []
    for n in nums:
        key = (type(n.value), n.value)  # 450 and 450.0 are spelled alike, but keep them apart all the same
        if key not in at:
            at[key] = first_at(n.value, text)
        out.append((n, at[key] is not None, at[key]))
    return out


def summary(checked: list[tuple[Number, bool | None]]) -> dict:
    """`count_hallucinations` numbers: total, found, not found, rate, and the not-found values."""
    total = len(checked)
    if total == 0 or any(f is None for _, f in checked):
        return {"total_numbers": total, "numbers_found": 0, "numbers_not_found": 0, "hallucination_rate": 0.0,
                "not_found_values": []}
    nf = [n.value for n, f in checked if not f]
    return {"total_numbers": total, "numbers_found": total - len(nf), "numbers_not_found": len(nf),
            "hallucination_rate": len(nf) / total, "not_found_values": nf}
