"""LitXBench's data model: the enums of the official package and the parsed litx-json v1 objects.

The objects mirror `litxbench.core.models` (0.1.3) closely enough that the scorer can follow the official code line
by line, but they are plain frozen-ish dataclasses without pymatgen: a composition is an ordered element -> amount
mapping, a lattice its six parameters as pymatgen would report them (see `lattice_parameters`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from scoring.families.litxbench.units import unit_text

KIND_MATERIAL, KIND_ITEM, KIND_CONFIG, KIND_NUMBER = "material_pair", "item_pair", "config_pair", "number"
MATCH, NO_MATCH, FOUND, NOT_FOUND = "match", "no-match", "found", "not-found"
OUTCOMES = ("perfect", "partial", "materials missed", "empty prediction")
MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 64
"""Deeper JSON than this is rejected (litx-json needs ~12 levels; deeper nesting is an attack or a bug)."""
MAX_TEXTS_BYTES = 512 * 1024 * 1024
"""The most bytes of paper texts one run reads (each text is held to MAX_INPUT_BYTES as well)."""


class ValueQualifier(StrEnum):
    EXACT = "exact"
    APPROXIMATE = "approximate"
    ABOVE = "above"
    BELOW = "below"
    ABOVE_OR_EQUAL = "above_or_equal"
    BELOW_OR_EQUAL = "below_or_equal"
    MUCH_ABOVE = "much_above"
    MUCH_BELOW = "much_below"


_PREFIXES = {"~": "APPROXIMATE", ">>": "MUCH_ABOVE", "<<": "MUCH_BELOW", ">=": "ABOVE_OR_EQUAL",
             "<=": "BELOW_OR_EQUAL", ">": "ABOVE", "<": "BELOW"}
QUALIFIER_SYMBOL = {ValueQualifier[v]: k for k, v in _PREFIXES.items()} | {ValueQualifier.EXACT: ""}
_QUALIFIER_RE = re.compile(r"^(~|>>|<<|>=|<=|>|<)\s*(.+)$")


class MeasurementMethod(StrEnum):
    XRD = "xray_diffractometer"
    DSC = "differential_scanning_calorimeter"
    TensileTest = "tensile_test"
    CompressionTest = "compression_test"
    VickersHardnessTest = "vickers_hardness_test"
    NanoindentTest = "nanoindent_test"
    ArchimedesMethod = "archimedes_method"
    OpticalMicroscope = "optical_microscope"
    SEM = "scanning_electron_microscope"
    TEM = "transmission_electron_microscope"
    STEM = "scanning_transmission_electron_microscope"
    EBSD = "electron_backscatter_diffraction"
    UniversalTestingMachine = "universal_testing_machine"
    ResonanceUltrasoundSpectroscopy = "resonance_ultrasound_spectroscopy"
    FractureToughnessTest = "fracture_toughness_test"
    Balance = "balance"
    EDS = "energy_dispersive_xray_spectroscopy"
    TEM_EDS = "tem_energy_dispersive_xray_spectroscopy"
    WDS = "wavelength_dispersive_xray_spectroscopy"
    EPMA = "electron_probe_microanalysis"
    LIBS = "laser_induced_breakdown_spectroscopy"
    ED_XRF = "energy_dispersive_xray_fluorescence"
    WD_XRF = "wavelength_dispersive_xray_fluorescence"
    Spark_OES = "spark_optical_emission_spectroscopy"
    ICP_OES = "inductively_coupled_plasma_optical_emission_spectroscopy"
    ICP_MS = "inductively_coupled_plasma_mass_spectroscopy"
    Unspecified = "unspecified"


class CrysStruct(StrEnum):
    FCC = "FCC"
    BCC = "BCC"
    HCP = "HCP"
    DHCP = "DHCP"
    Diamond = "Diamond"
    L12 = "L12"
    L10 = "L10"
    B2 = "B2"
    D019 = "D019"
    D03 = "D03"
    Heusler = "Heusler"
    Rocksalt = "B1"
    Zincblende = "B3"
    C14 = "C14"
    C15 = "C15"
    Perovskite = "E21"
    Amorphous = "Amorphous"
    Unknown = "Unknown"


class ConfigTag(StrEnum):
    Dendrite = "dendrite"
    Interdendritic = "interdendritic"
    Equiaxed = "equiaxed"
    Columnar = "columnar"
    Eutectic = "eutectic"
    Coring = "coring"
    Lath = "lath"
    Martensite = "martensite"
    Acicular = "acicular"
    Lamellar = "lamellar"
    Widmanstatten = "widmanstatten"
    Matrix = "matrix"
    Precipitate = "precipitate"
    Intragranular = "intragranular"
    Intergranular = "intergranular"
    Segregation = "segregation"
    Twin = "twin"
    Subgrain = "subgrain"
    Structure = "structure"
    Unknown = "unknown"


class ProcessKind(StrEnum):
    Mixing = "Mixing"
    MechanicalAlloying = "Mechanical Alloying"
    PlanetaryMilling = "Planetary Milling"
    GasAtomization = "Gas Atomization"
    ArcMelting = "Arc Melting"
    InductionMelting = "Induction Melting"
    CastingUnspecified = "Casting Unspecified"
    AsCast = "As Cast"
    GravityCasting = "Gravity Casting"
    DropCasting = "Drop Casting"
    SuctionCasting = "Suction Casting"
    DirectionalSolidification = "Directional Solidification"
    SparkPlasmaSintering = "Spark Plasma Sintering"
    HotPressingSintering = "Hot Pressing Sintering"
    VacuumFurnace = "Vacuum Furnace"
    Homogenization = "Homogenization"
    Annealing = "Annealing"
    NonIsothermalAnnealing = "Non-Isothermal Annealing"
    IsothermalHolding = "Isothermal Holding"
    WaterQuenching = "Water Quenching"
    SolutionHeatTreatment = "Solution Heat Treatment"
    HotExtrusion = "Hot Extrusion"
    HotRolling = "Hot Rolling"
    ColdRolling = "Cold Rolling"
    CrossRolling = "Cross Rolling"
    ColdForging = "Cold Forging"
    Press = "Press"
    FrictionStirProcessing = "Friction Stir Processing"
    ElectricalDischargeMachining = "Electro-Discharge Machining"
    Cut = "Cut"
    Grinding = "Grinding"
    Polishing = "Polishing"
    Etching = "Etching"
    AquaRegia = "AquaRegia"
    SandBlasting = "Sand Blasting"
    Degreased = "Degreased"
    UltrasonicBath = "Ultrasonic Bath"
    AirDrying = "Air Drying"


class RawMaterialKind(StrEnum):
    Ingot = "ingot"
    Powder = "powder"
    Plate = "plate"
    Unspecified = "unspecified"
    Other = "other"


class MeasurementStatistic(StrEnum):
    mean = "mean"
    median = "median"
    lower = "lower"
    upper = "upper"
    percentile = "percentile"


ALLOY_MEASUREMENT_KINDS = (
    "vickers_hardness", "berkovich_hardness", "pugh_ductility_ratio", "density",
    "yield_strength_tension", "ultimate_strain_tension", "ultimate_tensile_strength", "fracture_strain_tension",
    "fracture_strength_tension", "strain_hardening_exponent_tension", "poissons_ratio_tension",
    "fracture_energy_tension", "true_stress_tension",
    "yield_strength_compression", "ultimate_strain_compression", "ultimate_compressive_strength",
    "fracture_strain_compression", "fracture_strength_compression", "strain_hardening_exponent_compression",
    "poissons_ratio_compression", "fracture_energy_compression", "true_stress_compression",
    "elastic_limit_compression", "elastic_limit_tension", "youngs_modulus", "fracture_toughness",
    "work_of_fracture", "crystallite_size", "lattice_strain", "melting_point", "solidus", "liquidus",
)
"""`litxbench.litxalloy.models.AlloyMeasurementKind` (member name = value)."""
PHASE_MEASUREMENT_KINDS = ("volume_fraction", "length", "grain_size", "phase_size")
"""`PhaseMeasurementKind` (member name = value)."""
ENUM_KINDS = frozenset(ALLOY_MEASUREMENT_KINDS + PHASE_MEASUREMENT_KINDS)
_PRESSURE = ("vickers_hardness", "berkovich_hardness", "yield_strength_tension", "ultimate_tensile_strength",
             "fracture_strength_tension", "true_stress_tension", "yield_strength_compression",
             "ultimate_compressive_strength", "fracture_strength_compression", "true_stress_compression",
             "elastic_limit_compression", "elastic_limit_tension", "youngs_modulus")
_RATIO = ("pugh_ductility_ratio", "ultimate_strain_tension", "fracture_strain_tension",
          "strain_hardening_exponent_tension", "poissons_ratio_tension", "ultimate_strain_compression",
          "fracture_strain_compression", "strain_hardening_exponent_compression", "poissons_ratio_compression",
          "lattice_strain", "volume_fraction")
KIND_UNITS: dict[str, str] = {
    **dict.fromkeys(_PRESSURE, "megapascal"), **dict.fromkeys(_RATIO, "dimensionless"),
    **dict.fromkeys(("crystallite_size", "length", "grain_size", "phase_size"), "micrometer"),
    **dict.fromkeys(("melting_point", "solidus", "liquidus"), "kelvin"),
    **dict.fromkeys(("fracture_energy_tension", "fracture_energy_compression", "work_of_fracture"),
                    "megajoule / meter ** 2"),
    "density": "gram / centimeter ** 3", "fracture_toughness": "megapascal * meter ** 0.5"}
"""A unit of the dimension each enum measurement kind is measured in (a unit of another dimension is refused: a
hardness in parsec can never be compared with the paper's)."""


def parse_qualified(value: Any) -> tuple[float | int | None, ValueQualifier]:
    """`NumericQualifierMixin._parse_qualified_value`: (numeric value or None, qualifier) of a raw value."""
    if isinstance(value, bool):
        return None, ValueQualifier.EXACT
    if isinstance(value, int | float):
        return value, ValueQualifier.EXACT
    if isinstance(value, str):
        m = _QUALIFIER_RE.match(value.strip())
        if m:
            try:
                num = float(m.group(2))
            except ValueError:
                return None, ValueQualifier.EXACT
            return num, ValueQualifier[_PREFIXES[m.group(1)]]
        try:
            return float(value), ValueQualifier.EXACT
        except ValueError:
            return None, ValueQualifier.EXACT
    return None, ValueQualifier.EXACT


@dataclass
class Quantity:
    """A value with a unit (`unit` is a pint Unit of `units.ureg`); `raw` is the value as written."""

    raw: Any
    unit: Any
    numeric: float | int | None = None
    qualifier: ValueQualifier = ValueQualifier.EXACT

    def __post_init__(self) -> None:
        self.numeric, self.qualifier = parse_qualified(self.raw)

    def text(self) -> str:
        return f"{self.raw} {unit_text(self.unit)}"


@dataclass
class Measurement:
    """One measured property. `kind` is the kind string; `kind_is_enum` says whether it was an enum member."""

    kind: str
    kind_is_enum: bool
    raw: Any
    unit: Any
    uncertainty: float | int | None = None
    temperature: Quantity | None = None
    pressure: Quantity | None = None
    path: str = ""
    numeric: float | int | None = None
    qualifier: ValueQualifier = ValueQualifier.EXACT

    def __post_init__(self) -> None:
        self.numeric, self.qualifier = parse_qualified(self.raw)

    def what(self) -> str:
        s = f"{self.kind}={self.raw} {unit_text(self.unit)}"
        if self.temperature is not None:
            s += f" @T={self.temperature.raw} {unit_text(self.temperature.unit)}"
        if self.pressure is not None:
            s += f" @P={self.pressure.raw} {unit_text(self.pressure.unit)}"
        return s


@dataclass
class Composition:
    """A composition measurement: element -> amount in input order (amounts below 1e-8 dropped, as pymatgen)."""

    amounts: dict[str, float | int]
    method: MeasurementMethod = MeasurementMethod.Unspecified
    path: str = ""
    _formula: str | None = field(default=None, repr=False)

    @property
    def n_atoms(self) -> float:
        return sum(abs(v) for v in self.amounts.values())

    def alphabetical_fractional_formula(self) -> str:
        """pymatgen `fractional_composition.alphabetical_formula`: what two compositions must share to match."""
        if self._formula is None:
            n = 0
            for v in self.amounts.values():
                n += abs(v)
            tokens = []
            for el, amt in self.amounts.items():
                frac = amt / n
                if abs(frac) < 1e-8:
                    continue
                tokens.append(f"{el}{_formula_double_format(frac)}")
            self._formula = " ".join(sorted(tokens))
        return self._formula

    def what(self) -> str:
        inner = " ".join(f"{el}{_fmt_num(v)}" for el, v in self.amounts.items())
        return f"composition {inner} ({self.method.name})"


def _formula_double_format(x: float) -> Any:
    """pymatgen `formula_double_format(x, ignore_ones=False)`."""
    if math.isclose(x, round(x), abs_tol=1e-8, rel_tol=0):
        return round(x)
    return round(x, 8)


def _fmt_num(v: float | int) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def lattice_parameters(a: float, b: float, c: float, alpha: float, beta: float, gamma: float) -> tuple[float, ...]:
    """(a, b, c, alpha, beta, gamma) as pymatgen's `Lattice.from_parameters(...).parameters` returns them.

    pymatgen stores a matrix and recomputes lengths and angles from it, so the numbers carry its float round-off
    (they are what the hallucination check searches for). Same arithmetic as pymatgen 2025.x.
    """
    angles_r = np.radians([alpha, beta, gamma])
    cos_alpha, cos_beta, cos_gamma = np.cos(angles_r)
    sin_alpha, sin_beta, _ = np.sin(angles_r)
    val = (cos_alpha * cos_beta - cos_gamma) / (sin_alpha * sin_beta)
    val = np.clip(val, -1, 1)
    gamma_star = np.arccos(val)
    m = np.array([[a * sin_beta, 0.0, a * cos_beta],
                  [-b * sin_alpha * np.cos(gamma_star), b * sin_alpha * np.sin(gamma_star), b * cos_alpha],
                  [0.0, 0.0, float(c)]], dtype=np.float64)
    lengths = np.sqrt(np.sum(m ** 2, axis=1)).tolist()
    angles = np.zeros(3)
    for dim in range(3):
        jj, kk = (dim + 1) % 3, (dim + 2) % 3
        angles[dim] = np.clip(np.dot(m[jj], m[kk]) / (lengths[jj] * lengths[kk]), -1, 1)
    return (*lengths, *np.rad2deg(np.arccos(angles)).tolist())


@dataclass
class Lattice:
    """A lattice measurement: the six parameters (pymatgen round-off included) and the values as written."""

    params: tuple[float, ...]
    written: tuple[float, ...]
    path: str = ""

    def what(self) -> str:
        return "lattice " + ",".join(_fmt_num(v) for v in self.written)


@dataclass
class GlobalLatticeParam:
    """A global phase record (`lattice_param`): up to three comparable items."""

    lattice: Lattice | None = None
    struct: CrysStruct | None = None
    name: str | None = None
    phase_fraction: Quantity | None = None
    path: str = ""


@dataclass
class Configuration:
    """A phase or microstructural region; nested `measurements` are Measurement, Composition or Lattice."""

    name: str | None = None
    within: str | None = None
    struct: CrysStruct | None = None
    tags: frozenset[ConfigTag] | None = None
    measurements: list[Any] = field(default_factory=list)
    path: str = ""

    def what(self) -> str:
        bits = [self.name or "(unnamed)"]
        if self.struct is not None:
            bits.append(self.struct.name)
        if self.tags:
            bits.append("[" + ",".join(sorted(t.name for t in self.tags)) + "]")
        if self.within is not None:
            bits.append(f"within {self.within}")
        return " ".join(bits)


@dataclass
class ProcessEvent:
    """One processing step; only kind, temperature and duration are scored."""

    kind: ProcessKind
    temperature: Quantity | None = None
    duration: Quantity | None = None
    description: str | None = None
    inputs: tuple[str, ...] = ()


@dataclass
class ProcessStep:
    """One `->` segment of a process string: group base name and its `Var=value` assignments."""

    base_name: str
    variables: dict[str, str]
    inputs: tuple[str, ...] = ()


@dataclass
class SynthesisGroup:
    """A named list of events with template variables (`annealing[Temp]`)."""

    name: str
    base_name: str
    template_vars: frozenset[str]
    events: list[ProcessEvent]


@dataclass
class Material:
    """An output material: its process steps and its measurements (any mix of the measurement classes)."""

    process: str | None
    name: str | None
    measurements: list[Any]
    steps: list[ProcessStep] | None
    path: str
    groups: dict[str, SynthesisGroup] = field(default_factory=dict, repr=False)
    """The synthesis groups of its experiment (by base name)."""

    def label(self) -> str:
        """Stable readable id: JSON path plus name or first composition."""
        hint = self.name
        if hint is None:
            comp = next((m for m in self.measurements if isinstance(m, Composition)), None)
            hint = " ".join(f"{el}{_fmt_num(v)}" for el, v in comp.amounts.items()) if comp else ""
        return f"{self.path} ({hint})" if hint else self.path


@dataclass
class Experiment:
    """One experiment: synthesis groups by base name and its output materials."""

    groups: dict[str, SynthesisGroup]
    materials: list[Material]
    list_form: bool = False


@dataclass
class Paper:
    """One file of litx-json v1: all experiments of one paper (gold or predicted)."""

    paper_id: str
    experiments: list[Experiment]
    path: str = ""

    @property
    def materials(self) -> list[Material]:
        """All materials in one pool, ordered by experiment then material (`_collect_materials`)."""
        return [m for e in self.experiments for m in e.materials]
