"""Units: one pint registry defined like the official package's (`HV = 9.807 MPa`), unit parsing with the aliases
the paper's JSON track accepts, and cached conversions (pint is slow; the scorer converts the same pairs often)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pint import UnitRegistry

ureg: Any = UnitRegistry()
ureg.define("HV = 9.807 * megapascal = vickers_hardness")

_U = ureg.Unit
_ALIASES: dict[str, Any] = {
    "hv": _U("HV"), "vickers_hardness": _U("HV"),
    "gigapascal": _U("gigapascal"), "gpa": _U("gigapascal"),
    "megapascal": _U("megapascal"), "mpa": _U("megapascal"),
    "micrometer": _U("micrometer"), "um": _U("micrometer"), "μm": _U("micrometer"), "µm": _U("micrometer"),
    "millimeter": _U("millimeter"), "mm": _U("millimeter"),
    "nanometer": _U("nanometer"), "nm": _U("nanometer"),
    "gram_per_cm3": _U("gram / centimeter ** 3"), "g/cm3": _U("gram / centimeter ** 3"),
    "g/cm^3": _U("gram / centimeter ** 3"), "g/cm³": _U("gram / centimeter ** 3"),
    "percent": _U("percent"), "%": _U("percent"),
    "dimensionless": _U("dimensionless"),
    "celsius": _U("degree_Celsius"), "°c": _U("degree_Celsius"), "℃": _U("degree_Celsius"), "c": _U("degree_Celsius"),
    "degree_celsius": _U("degree_Celsius"),
    "kelvin": _U("kelvin"), "k": _U("kelvin"),
    "atm": _U("atm"),
    "megapascal_sqrt_meter": _U("megapascal * meter ** 0.5"), "mpa·m^0.5": _U("megapascal * meter ** 0.5"),
    "mpa*m^0.5": _U("megapascal * meter ** 0.5"), "mpa√m": _U("megapascal * meter ** 0.5"),
    "megajoules_per_meter_squared": _U("megajoule / meter ** 2"), "mj/m2": _U("megajoule / meter ** 2"),
    "mj/m^2": _U("megajoule / meter ** 2"),
    "volt": _U("volt"), "v": _U("volt"),
    "amp_per_cm_squared": _U("ampere / centimeter ** 2"), "a/cm2": _U("ampere / centimeter ** 2"),
    "a/cm^2": _U("ampere / centimeter ** 2"),
    "millimeter_per_year": _U("millimeter / year"), "mm/year": _U("millimeter / year"),
    "mm/yr": _U("millimeter / year"),
    "hour": _U("hour"), "h": _U("hour"), "minute": _U("minute"), "min": _U("minute"),
    "second": _U("second"), "s": _U("second"),
    "celsius_per_minute": _U("degree_Celsius / minute"), "°c/min": _U("degree_Celsius / minute"),
    "c/min": _U("degree_Celsius / minute"),
    "revolutions_per_minute": _U("revolutions_per_minute"), "rpm": _U("revolutions_per_minute"),
}
"""Case-insensitive aliases (the paper's `json_to_experiments._UNIT_ALIAS_MAP`, plus a few spellings)."""


@lru_cache(maxsize=4096)
def parse_unit(text: str) -> Any:
    """A pint Unit for a unit string (pint's own names, or an alias).

    Raises:
        ValueError: pint does not know the unit.
    """
    key = text.strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
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
        return ureg.Quantity(value, from_unit).to(to_unit).magnitude
    except Exception:  # noqa: BLE001
        return None


@lru_cache(maxsize=262144)
def to_base(value: float, unit: Any) -> float | None:
    """The value in base SI units (kelvin for temperatures), or None when pint cannot convert."""
    try:
        return ureg.Quantity(value, unit).to_base_units().magnitude
    except Exception:  # noqa: BLE001
        return None


ROOM_TEMPERATURE_K: float = ureg.Quantity(23.0, _U("degree_Celsius")).to("kelvin").magnitude
KELVIN, ATM = _U("kelvin"), _U("atm")
