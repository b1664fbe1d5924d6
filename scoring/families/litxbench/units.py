"""Units: one pint registry defined like the official package's (`HV = 9.807 MPa`), unit parsing with the aliases
the paper's JSON track accepts, and cached conversions (pint is slow; the scorer converts the same pairs often).

The registry is built on first use, not on import: building it took 0.45 s of every command that imports the family
and never converts a unit (`queue --next`, `estimate`, the dashboard's first page, #38). `ureg`, `KELVIN`, `ATM` and
`ROOM_TEMPERATURE_K` are read as attributes of this module (built then)."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

_ALIAS_UNITS = {
    "hv": "HV", "vickers_hardness": "HV",
    "gigapascal": "gigapascal", "gpa": "gigapascal",
    "megapascal": "megapascal", "mpa": "megapascal",
    "micrometer": "micrometer", "um": "micrometer", "μm": "micrometer", "µm": "micrometer",
    "millimeter": "millimeter", "mm": "millimeter",
    "nanometer": "nanometer", "nm": "nanometer",
    "gram_per_cm3": "gram / centimeter ** 3", "g/cm3": "gram / centimeter ** 3",
    "g/cm^3": "gram / centimeter ** 3", "g/cm³": "gram / centimeter ** 3",
    "percent": "percent", "%": "percent",
    "dimensionless": "dimensionless",
    "celsius": "degree_Celsius", "°c": "degree_Celsius", "℃": "degree_Celsius", "c": "degree_Celsius",
    "degree_celsius": "degree_Celsius",
    "kelvin": "kelvin", "k": "kelvin",
    "atm": "atm",
    "megapascal_sqrt_meter": "megapascal * meter ** 0.5", "mpa·m^0.5": "megapascal * meter ** 0.5",
    "mpa*m^0.5": "megapascal * meter ** 0.5", "mpa√m": "megapascal * meter ** 0.5",
    "megajoules_per_meter_squared": "megajoule / meter ** 2", "mj/m2": "megajoule / meter ** 2",
    "mj/m^2": "megajoule / meter ** 2",
    "volt": "volt", "v": "volt",
    "amp_per_cm_squared": "ampere / centimeter ** 2", "a/cm2": "ampere / centimeter ** 2",
    "a/cm^2": "ampere / centimeter ** 2",
    "millimeter_per_year": "millimeter / year", "mm/year": "millimeter / year",
    "mm/yr": "millimeter / year",
    "hour": "hour", "h": "hour", "minute": "minute", "min": "minute",
    "second": "second", "s": "second",
    "celsius_per_minute": "degree_Celsius / minute", "°c/min": "degree_Celsius / minute",
    "c/min": "degree_Celsius / minute",
    "revolutions_per_minute": "revolutions_per_minute", "rpm": "revolutions_per_minute",
}
"""Case-insensitive aliases (the paper's `json_to_experiments._UNIT_ALIAS_MAP`, plus a few spellings), each to the
pint unit it stands for."""


@cache
def _registry() -> tuple[Any, dict[str, Any]]:
    """(the registry, alias -> pint Unit), built once."""
    from pint import UnitRegistry

    ureg = UnitRegistry()
    ureg.define("HV = 9.807 * megapascal = vickers_hardness")
    return ureg, {alias: ureg.Unit(name) for alias, name in _ALIAS_UNITS.items()}


@cache
def _constants() -> dict[str, Any]:
    ureg = _registry()[0]
    return {"ureg": ureg, "KELVIN": ureg.Unit("kelvin"), "ATM": ureg.Unit("atm"),
            "ROOM_TEMPERATURE_K": ureg.Quantity(23.0, ureg.Unit("degree_Celsius")).to("kelvin").magnitude}


def __getattr__(name: str) -> Any:
    if name in ("ureg", "KELVIN", "ATM", "ROOM_TEMPERATURE_K"):
        return _constants()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@lru_cache(maxsize=4096)
def parse_unit(text: str) -> Any:
    """A pint Unit for a unit string (pint's own names, or an alias).

    Raises:
        ValueError: pint does not know the unit.
    """
    ureg, aliases = _registry()
    key = text.strip().lower()
    if key in aliases:
        return aliases[key]
    for candidate in (text.strip(), key):
        try:
            return ureg.Unit(candidate)
        except Exception:  # noqa: BLE001, S112 - pint raises many kinds of errors for an unknown unit
            continue
    raise ValueError(f"unknown unit {text!r}")


@lru_cache(maxsize=4096)
def unit_text(unit: Any) -> str:
    """`str(unit)`, formatted once per unit (pint formats a unit afresh, slowly, on every call)."""
    return str(unit)


@lru_cache(maxsize=65536)
def compatible(a: Any, b: Any) -> bool:
    """`_units_compatible`: same dimensionality."""
    try:
        return bool(a.is_compatible_with(b))
    except Exception:  # noqa: BLE001
        return a == b


@lru_cache(maxsize=262144)
def convert(value: float, from_unit: Any, to_unit: Any) -> float | None:
    """`ureg.Quantity(value, from_unit).to(to_unit).magnitude`, or None when pint cannot convert."""
    try:
        return _registry()[0].Quantity(value, from_unit).to(to_unit).magnitude
    except Exception:  # noqa: BLE001
        return None


@lru_cache(maxsize=262144)
def to_base(value: float, unit: Any) -> float | None:
    """The value in base SI units (kelvin for temperatures), or None when pint cannot convert."""
    try:
        return _registry()[0].Quantity(value, unit).to_base_units().magnitude
    except Exception:  # noqa: BLE001
        return None
