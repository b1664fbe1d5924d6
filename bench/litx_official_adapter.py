"""Score litx-json v1 folders with the official `litxbench` 0.1.3 package and time it. Runs INSIDE a Python 3.12
venv holding that package (`bench/litxbench_speed.py` builds one and calls this script); it imports nothing of
Rejudge, only the standard library and `litxbench`.

    python3.12 bench/litx_official_adapter.py --gold G --pred P [--text T] [--expected E]

The package has no JSON loader, so this script converts each file (format: data/litxbench/README.md) into the
package's own objects, the way the expert ground truth builds them in Python (`litxalloy/extractions/*.py`):
`AlloyExperiment`, `AlloyMaterial`, `Measurement`, `CompMeasurement` (pymatgen `Composition`), `LatticeMeasurement`
(pymatgen `Lattice`, `Lattice.cubic` for cubic cells), `GlobalLatticeParam`, `Configuration`, `ProcessEvent`,
`Quantity` with units of the package's pint registry, kinds known to `AlloyMeasurementKind` /
`PhaseMeasurementKind` as enums (the "enum" mode of the reference files). `descriptions` are not converted: they
are never scored, and the package's constructor-time check that each description names a measurement kind still
present would refuse predictions that dropped measurements.

Then, per gold paper, as the reference files were made: `compare_experiments(gold, pred)`,
`compute_multi_level_metrics(result)`, `count_hallucinations(pred, text)`; counts are summed over papers and scored
once (micro), a gold paper without a prediction file is an empty extraction.

The last stdout line is a JSON report: seconds per phase (`import_s` = importing the package and its pymatgen/pint
stack, excluded from the scoring time like interpreter start-up; `read_s` = reading and parsing the JSON and text
files; `convert_s` = building the objects; `compare_s` = compare_experiments; `metrics_s` =
compute_multi_level_metrics; `hallucination_s` = count_hallucinations), the official overall numbers, and, with
`--expected`, their comparison with a reference `expected_*.json` (every number to 1e-9, per paper and overall).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TOLERANCE = 1e-9
UNIT_ALIASES = {
    "hv": "HV", "vickers_hardness": "HV", "gpa": "gigapascal", "mpa": "megapascal", "um": "micrometer",
    "μm": "micrometer", "µm": "micrometer", "mm": "millimeter", "nm": "nanometer", "g/cm3": "gram / centimeter ** 3",
    "g/cm^3": "gram / centimeter ** 3", "g/cm³": "gram / centimeter ** 3", "gram_per_cm3": "gram / centimeter ** 3",
    "%": "percent", "celsius": "degree_Celsius", "°c": "degree_Celsius", "℃": "degree_Celsius", "c": "degree_Celsius",
    "degree_celsius": "degree_Celsius", "k": "kelvin", "mpa·m^0.5": "megapascal * meter ** 0.5",
    "mpa*m^0.5": "megapascal * meter ** 0.5", "mpa√m": "megapascal * meter ** 0.5",
    "megapascal_sqrt_meter": "megapascal * meter ** 0.5", "mj/m2": "megajoule / meter ** 2",
    "mj/m^2": "megajoule / meter ** 2", "megajoules_per_meter_squared": "megajoule / meter ** 2", "v": "volt",
    "a/cm2": "ampere / centimeter ** 2", "a/cm^2": "ampere / centimeter ** 2",
    "amp_per_cm_squared": "ampere / centimeter ** 2", "mm/year": "millimeter / year", "mm/yr": "millimeter / year",
    "millimeter_per_year": "millimeter / year", "h": "hour", "min": "minute", "s": "second",
    "°c/min": "degree_Celsius / minute", "c/min": "degree_Celsius / minute",
    "celsius_per_minute": "degree_Celsius / minute", "rpm": "revolutions_per_minute",
}
"""Case-insensitive unit spellings accepted on input (README "Units"); anything else goes to pint as written."""


class Converter:
    """litx-json v1 (already parsed) -> the package's objects. Holds the imported package modules."""

    def __init__(self) -> None:
        import litxbench.core.models as core
        import litxbench.litxalloy.models as alloy
        from litxbench.core.extraction_utils import balance_composition, composition_with_weight_additions
        from litxbench.core.units import ureg
        from pymatgen.core import Composition, Lattice

        self.core, self.alloy, self.ureg = core, alloy, ureg
        self.Composition, self.Lattice = Composition, Lattice
        self.balance_composition = balance_composition
        self.weight_additions = composition_with_weight_additions
        self.kinds = {m.value: m for enum in (alloy.AlloyMeasurementKind, alloy.PhaseMeasurementKind) for m in enum}
        self._units: dict[str, Any] = {}

    # ------------------------------------------------------------ scalars

    @staticmethod
    def enum(value: str, enum: Any) -> Any:
        """Member by name, then value, then case-insensitively (as the paper's JSON track resolves names)."""
        if value in enum.__members__:
            return enum[value]
        for m in enum:
            if m.value == value:
                return m
        low = value.lower()
        for m in enum:
            if m.name.lower() == low or str(m.value).lower() == low:
                return m
        raise ValueError(f"unknown {enum.__name__} {value!r}")

    def unit(self, text: str) -> Any:
        u = self._units.get(text)
        if u is None:
            u = self._units[text] = self.ureg.Unit(UNIT_ALIASES.get(text.strip().lower(), text.strip()))
        return u

    def kind(self, text: str) -> Any:
        return self.kinds.get(text.lower(), text)

    def quantity(self, d: Mapping | None) -> Any:
        if d is None:
            return None
        return self.core.Quantity(value=d["value"], unit=self.unit(d["unit"]), description=d.get("description"),
                                  source=d.get("source"))

    def _opt_enum(self, value: str | None, enum: Any) -> Any:
        return None if value is None else self.enum(value, enum)

    # ------------------------------------------------------------ measurements

    def measurement(self, d: Mapping) -> Any:
        core = self.core
        return core.Measurement(
            kind=self.kind(d["kind"]), value=d["value"], unit=self.unit(d["unit"]), uncertainty=d.get("uncertainty"),
            measurement_method=self._opt_enum(d.get("measurement_method"), core.MeasurementMethod),
            description=d.get("description"), source=d.get("source"),
            temperature=self.quantity(d.get("temperature")), pressure=self.quantity(d.get("pressure")),
            measurement_statistic=self._opt_enum(d.get("measurement_statistic"), core.MeasurementStatistic),
            percentile=d.get("percentile"), group_name=d.get("group_name"),
            group_id=uuid.UUID(d["group_id"]) if d.get("group_id") else None)

    def group_measurements(self, d: Mapping) -> list:
        core = self.core
        values = [core.CoreMeasurementValue(
            statistic=self.enum(v["statistic"], core.MeasurementStatistic), value=v["value"],
            uncertainty=v.get("uncertainty"), description=v.get("description"), source=v.get("source"),
            percentile=v.get("percentile")) for v in d["values"]]
        return core.Measurement.group_measurements(
            kind=self.kind(d["kind"]), unit=self.unit(d["unit"]),
            measurement_method=self._opt_enum(d.get("measurement_method"), core.MeasurementMethod),
            description=d.get("description"), uncertainty=d.get("uncertainty"),
            temperature=self.quantity(d.get("temperature")), pressure=self.quantity(d.get("pressure")),
            source=d.get("source"), group_name=d.get("group_name"), values=values)

    def composition(self, data: Any) -> Any:
        comp = self.Composition
        if isinstance(data, str):
            return comp(data.replace(" ", "").replace("-", ""))
        if len(data) == 1 and next(iter(data)) in ("balance_composition", "from_weight_dict", "weight_additions"):
            (name, args), = data.items()
            data = {"_helper": name, **args}
        helper = data.get("_helper")
        if helper is None:
            return comp(dict(data))
        if helper == "balance_composition":
            return self.balance_composition(data["main_element"], dict(data["additions"]))
        if helper == "from_weight_dict":
            return comp.from_weights(dict(data["weights"]))
        if helper == "weight_additions":
            return self.weight_additions(self.composition(data["base"]),
                                         comp.from_weights(dict(data["additions_weights"])), data["fraction"])
        raise ValueError(f"unknown composition helper {helper!r}")

    def lattice(self, d: Mapping) -> Any:
        lat = self.Lattice
        kind = d.get("type")
        if kind is not None:
            kind = str(kind).lower()
            if kind == "cubic":
                obj = lat.cubic(d["a"])
            elif kind == "hexagonal":
                obj = lat.hexagonal(d["a"], d["c"])
            elif kind == "tetragonal":
                obj = lat.tetragonal(d["a"], d["c"])
            elif kind == "orthorhombic":
                obj = lat.orthorhombic(d["a"], d["b"], d["c"])
            else:
                raise ValueError(f"unknown lattice type {kind!r}")
        else:
            p = [d[k] for k in ("a", "b", "c", "alpha", "beta", "gamma")]
            # The ground truth writes cubic cells as Lattice.cubic (an exact matrix); every other cell the package
            # builds goes through from_parameters.
            obj = lat.cubic(p[0]) if p[0] == p[1] == p[2] and p[3] == p[4] == p[5] == 90 else lat.from_parameters(*p)
        return self.core.LatticeMeasurement(lattice=obj, description=d.get("description"), source=d.get("source"))

    def entry(self, d: Mapping) -> list:
        core = self.core
        t = d.get("_type", "measurement")
        if t == "measurement":
            return [self.measurement(d)]
        if t == "group_measurements":
            return self.group_measurements(d)
        if t == "composition":
            method = self._opt_enum(d.get("method"), core.MeasurementMethod) or core.MeasurementMethod.Unspecified
            return [core.CompMeasurement(self.composition(d["composition"]), method, description=d.get("description"),
                                         source=d.get("source"),
                                         validate_composition=d.get("validate_composition", True))]
        if t == "lattice":
            lm = self.lattice(d["lattice"])
            lm.description = d.get("description", lm.description)
            lm.source = d.get("source", lm.source)
            return [lm]
        if t == "lattice_param":
            return [core.GlobalLatticeParam(
                lattice=self.lattice(d["lattice"]) if d.get("lattice") is not None else None,
                struct=self._opt_enum(d.get("struct"), core.CrysStruct), name=d.get("name"),
                description=d.get("description"), phase_fraction=self.quantity(d.get("phase_fraction")),
                source=d.get("source"))]
        if t == "configuration":
            tags = None if d.get("tags") is None else {self.enum(x, core.ConfigTag) for x in d["tags"]}
            nested = [m for e in d.get("measurements", []) for m in self.entry(e)]
            return [core.Configuration(name=d.get("name"), within=d.get("within"),
                                       struct=self._opt_enum(d.get("struct"), core.CrysStruct), tags=tags,
                                       description=d.get("description"), source=d.get("source"), measurements=nested)]
        raise ValueError(f"unknown _type {t!r}")

    # ------------------------------------------------------------ experiments

    def event(self, d: Mapping) -> Any:
        return self.core.ProcessEvent(
            kind=self.enum(d["kind"], self.core.ProcessKind), description=d.get("description"),
            temperature=self.quantity(d.get("temperature")), duration=self.quantity(d.get("duration")),
            equipment=d.get("equipment"), source=d.get("source"), inputs=list(d.get("inputs") or []))

    def experiment(self, d: Mapping) -> Any:
        core, alloy = self.core, self.alloy
        raw = {name: core.RawMaterial(kind=self.enum(r.get("kind") or "Unspecified", core.RawMaterialKind),
                                      description=r.get("description"), source=r.get("source"))
               for name, r in d.get("raw_materials", {}).items()}
        sg = d.get("synthesis_groups", {})
        groups: Any = ([self.event(e) for e in sg] if isinstance(sg, list)
                       else {name: [self.event(e) for e in evs] for name, evs in sg.items()})
        mats = [alloy.AlloyMaterial(process=m.get("process"), name=m.get("name"),
                                    measurements=[x for e in m.get("measurements", []) for x in self.entry(e)])
                for m in d.get("output_materials", [])]
        return alloy.AlloyExperiment(raw_materials=raw, synthesis_groups=groups, output_materials=mats)

    def paper(self, data: Any) -> list:
        if isinstance(data, Mapping):
            data = data.get("experiments", [])
        return [self.experiment(e) for e in data]


# ---------------------------------------------------------------- scoring and reporting


def paper_entry(result: Any, ml: Any, halluc: Any) -> dict:
    """One paper's numbers in the reference `expected_*.json` shape."""
    return {"materials": {"target": result.num_target_materials, "extracted": result.num_extracted_materials,
                          "matched": result.num_matched_materials},
            "measurement_level": {"precision": result.precision, "recall": result.recall, "f1": result.f1,
                                  "num_matched_items": result.num_matched_items,
                                  "num_total_target_items": result.num_total_target_items,
                                  "num_total_extracted_items": result.num_total_extracted_items},
            "total_cost": result.total_cost,
            "avg_process_edit_distance": (sum(m.process_edit_distance for m in result.matched_materials)
                                          / len(result.matched_materials) if result.matched_materials else 0.0),
            "multi_level": multi_level(ml),
            "hallucination": {"total_numbers": halluc.total_numbers, "numbers_found": halluc.numbers_found,
                              "numbers_not_found": halluc.numbers_not_found,
                              "hallucination_rate": halluc.hallucination_rate,
                              "not_found_values": list(halluc.not_found_values)}}


def multi_level(ml: Any) -> dict:
    out = {}
    for lv in ("value", "measurement", "config", "process", "material"):
        out[lv] = {"tp": getattr(ml, f"{lv}_tp"), "target": getattr(ml, f"{lv}_target"),
                   "extracted": getattr(ml, f"{lv}_extracted"), "precision": getattr(ml, f"{lv}_precision"),
                   "recall": getattr(ml, f"{lv}_recall"), "f1": getattr(ml, f"{lv}_f1")}
    out["overall"] = {"precision": ml.overall_precision, "recall": ml.overall_recall, "f1": ml.overall_f1}
    return out


def overall(papers: Mapping[str, dict], metrics_cls: Any) -> dict:
    """Counts summed over papers, then scored once with the package's own MultiLevelMetrics."""
    ps = list(papers.values())
    fields = {f"{lv}_{k}": sum(p["multi_level"][lv][k] for p in ps)
              for lv in ("value", "measurement", "config", "process", "material") for k in ("tp", "target",
                                                                                             "extracted")}
    ml = metrics_cls(**fields)
    tp = sum(p["measurement_level"]["num_matched_items"] for p in ps)
    tt = sum(p["measurement_level"]["num_total_target_items"] for p in ps)
    te = sum(p["measurement_level"]["num_total_extracted_items"] for p in ps)
    pr = tp / te if te else 0.0
    rc = tp / tt if tt else 0.0
    total = sum(p["hallucination"]["total_numbers"] for p in ps)
    nf = sum(p["hallucination"]["numbers_not_found"] for p in ps)
    return {"num_papers": len(ps),
            "materials": {k: sum(p["materials"][k] for p in ps) for k in ("target", "extracted", "matched")},
            "measurement_level": {"precision": pr, "recall": rc, "f1": 2 * pr * rc / (pr + rc) if pr + rc else 0.0,
                                  "num_matched_items": tp, "num_total_target_items": tt,
                                  "num_total_extracted_items": te},
            "multi_level": multi_level(ml),
            "macro_mean_overall_f1": sum(p["multi_level"]["overall"]["f1"] for p in ps) / len(ps) if ps else 0.0,
            "hallucination": {"total_numbers": total, "numbers_not_found": nf,
                              "hallucination_rate": nf / total if total else 0.0}}


IGNORED = {"compare_seconds", "compare_seconds_total"}


def differences(ours: Any, ref: Any, path: str = "") -> list[str]:
    """Where two JSON values differ (numbers to 1e-9; keys only in `ours` are ignored, timings skipped)."""
    if isinstance(ref, Mapping):
        if not isinstance(ours, Mapping):
            return [f"{path}: {ours!r} != {ref!r}"]
        out = []
        for k, v in ref.items():
            if k in IGNORED:
                continue
            if k not in ours:
                out.append(f"{path}.{k}: missing")
            else:
                out += differences(ours[k], v, f"{path}.{k}")
        return out
    if isinstance(ref, list):
        if not isinstance(ours, list) or len(ours) != len(ref):
            return [f"{path}: {ours!r} != {ref!r}"]
        return [d for i, (a, b) in enumerate(zip(ours, ref, strict=True)) for d in differences(a, b, f"{path}[{i}]")]
    if isinstance(ref, int | float) and not isinstance(ref, bool):
        if isinstance(ours, int | float) and math.isclose(ours, ref, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            return []
        return [f"{path}: {ours!r} != {ref!r}"]
    return [] if ours == ref else [f"{path}: {ours!r} != {ref!r}"]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gold", required=True, type=Path)
    ap.add_argument("--pred", required=True, type=Path)
    ap.add_argument("--text", type=Path)
    ap.add_argument("--expected", type=Path, help="reference expected_*.json to check the numbers against")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    from importlib.metadata import version

    from litxbench.core.eval import MultiLevelMetrics, compare_experiments, compute_multi_level_metrics
    from litxbench.core.hallucination import count_hallucinations

    conv = Converter()
    times = {"import_s": time.perf_counter() - t0, "read_s": 0.0, "convert_s": 0.0, "compare_s": 0.0,
             "metrics_s": 0.0, "hallucination_s": 0.0}
    papers: dict[str, dict] = {}
    for gold_file in sorted(args.gold.glob("*.json")):
        pid = gold_file.stem
        t = time.perf_counter()
        gold_raw = json.loads(gold_file.read_text(encoding="utf-8-sig"))
        pred_file = args.pred / gold_file.name
        pred_raw = json.loads(pred_file.read_text(encoding="utf-8-sig")) if pred_file.is_file() else []
        text_file = args.text / f"{pid}.md" if args.text else None
        text = text_file.read_text(encoding="utf-8") if text_file and text_file.is_file() else ""
        t1 = time.perf_counter()
        gold, pred = conv.paper(gold_raw), conv.paper(pred_raw)
        t2 = time.perf_counter()
        result = compare_experiments(gold, pred)
        t3 = time.perf_counter()
        ml = compute_multi_level_metrics(result)
        t4 = time.perf_counter()
        halluc = count_hallucinations(pred, text)
        t5 = time.perf_counter()
        for key, dt in (("read_s", t1 - t), ("convert_s", t2 - t1), ("compare_s", t3 - t2), ("metrics_s", t4 - t3),
                        ("hallucination_s", t5 - t4)):
            times[key] += dt
        papers[pid] = paper_entry(result, ml, halluc)
    total = overall(papers, MultiLevelMetrics)
    report: dict[str, Any] = {"litxbench_version": version("litxbench"), "python": sys.version.split()[0],
                              **times, "papers": len(papers), "overall": total}
    if args.expected:
        ref = json.loads(args.expected.read_text(encoding="utf-8"))
        report["overall_diffs"] = differences(total, ref["overall"], "overall")
        per_paper = {pid: differences(papers.get(pid), p, f"papers.{pid}") for pid, p in ref["papers"].items()}
        report["papers_equal"] = sum(not d for d in per_paper.values())
        report["papers_checked"] = len(per_paper)
        report["paper_diffs"] = [d for ds in per_paper.values() for d in ds][:20]
    return report


if __name__ == "__main__":
    print(json.dumps(main()))
