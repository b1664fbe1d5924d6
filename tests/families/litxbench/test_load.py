"""litx-json v1 loading: accepted shapes and InputError (file, line or None, "JSON.path: reason") on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.errors import InputError
from scoring.families.litxbench.load import load_paper, parse_paper
from scoring.families.litxbench.match import top_items
from scoring.families.litxbench.model import Composition, GlobalLatticeParam, Measurement, ProcessKind
from scoring.families.litxbench.process import normalise_events, resolve_events
from scoring.families.litxbench.units import convert, parse_unit

DATA = Path(__file__).resolve().parents[3] / "data" / "litxbench"


def exp(materials: list, groups: object = None) -> list:
    return [{"raw_materials": {"elements": {"kind": "Ingot"}},
             "synthesis_groups": groups if groups is not None else {"creation": [{"kind": "ArcMelting"},
                                                                                 {"kind": "AsCast"}]},
             "output_materials": materials}]


COMP = {"_type": "composition", "composition": {"Co": 1, "Cr": 1, "Ni": 1}}


def mat(*measurements: dict, process: str = "elements->creation") -> dict:
    return {"process": process, "measurements": [COMP, *measurements]}


def bad(data: object) -> str:
    with pytest.raises(InputError) as e:
        parse_paper(data, "p", "p.json")
    assert e.value.path == "p.json"
    return e.value.reason


def test_all_gold_papers_load_with_the_readme_counts():
    papers = [load_paper(p) for p in sorted((DATA / "gold").glob("*.json"))]
    assert len(papers) == 19
    mats = [m for p in papers for m in p.materials]
    assert len(mats) == 101
    items = sum(len(top_items(m)) for m in mats)
    assert items == 501  # README: 674 comparable items, 501 top-level
    events = sum(len(normalise_events(resolve_events(m))) for m in mats)
    assert events == 394
    free = {ms.kind for m in mats for ms in m.measurements if isinstance(ms, Measurement) and not ms.kind_is_enum}
    assert free and all(k not in ("vickers_hardness", "grain_size") for k in free)


def test_enum_names_and_values_case_insensitive_and_wrapper():
    data = {"experiments": exp([mat({"_type": "measurement", "kind": "Vickers_Hardness", "value": 300, "unit": "HV"},
                                    {"_type": "lattice_param", "struct": "bcc", "lattice": {"type": "cubic",
                                                                                            "a": 3.2}})],
                               {"creation": [{"kind": "Arc Melting"}, {"kind": "ascast"}]})}
    p = parse_paper(data, "p")
    m = p.materials[0]
    assert [e.kind for e in resolve_events(m)] == [ProcessKind.ArcMelting, ProcessKind.AsCast]
    meas = m.measurements[1]
    assert meas.kind == "vickers_hardness" and meas.kind_is_enum
    glp = m.measurements[2]
    assert isinstance(glp, GlobalLatticeParam) and glp.struct.name == "BCC"
    assert glp.lattice is not None and glp.lattice.written == (3.2, 3.2, 3.2, 90, 90, 90)


def test_string_kind_mode_keeps_every_kind_a_string():
    data = exp([mat({"_type": "measurement", "kind": "density", "value": 8, "unit": "g/cm3"})])
    assert not parse_paper(data, "p", kind_mode="string").materials[0].measurements[1].kind_is_enum
    assert parse_paper(data, "p").materials[0].measurements[1].kind_is_enum


def test_hv_converts_to_pressure_units_and_aliases_parse():
    assert convert(100, parse_unit("HV"), parse_unit("MPa")) == pytest.approx(980.7)
    assert str(parse_unit("°C")) == "degree_Celsius"
    assert str(parse_unit("gram / centimeter ** 3")) == str(parse_unit("g/cm3"))


def test_template_variables_are_substituted_and_reparsed():
    groups = {"creation": [{"kind": "ArcMelting"}, {"kind": "AsCast"}],
              "anneal[Temp,Hours]": [{"kind": "Annealing", "temperature": {"value": "~[Temp]", "unit": "°C"},
                                      "duration": {"value": "[Hours]", "unit": "h"}}]}
    p = parse_paper(exp([mat(process="elements->creation->anneal[Temp=800, Hours=10]")], groups), "p")
    ev = resolve_events(p.materials[0])[-1]
    assert ev.temperature.numeric == 800.0 and ev.temperature.qualifier.name == "APPROXIMATE"
    assert ev.duration.numeric == 10.0


def test_list_form_experiment_gives_every_material_the_default_group():
    p = parse_paper(exp([{"measurements": [COMP]}], [{"kind": "ArcMelting"}, {"kind": "AsCast"}]), "p")
    assert [e.kind.name for e in resolve_events(p.materials[0])] == ["ArcMelting", "AsCast"]


def test_group_measurements_expand_into_single_measurements():
    gm = {"_type": "group_measurements", "kind": "grain_size", "unit": "um", "uncertainty": 1,
          "values": [{"statistic": "lower", "value": 5}, {"statistic": "upper", "value": 50, "uncertainty": 2}]}
    ms = parse_paper(exp([mat(gm)]), "p").materials[0].measurements
    assert [(m.numeric, m.uncertainty) for m in ms[1:]] == [(5, 1), (50, 2)]
    assert ms[2].path.endswith("measurements[1].values[1]")


def test_composition_forms():
    d = {"_type": "composition", "composition": "Al0.5CoCrFeNi"}
    weights = {"_type": "composition", "composition": {"_helper": "from_weight_dict", "weights": {"Fe": 50, "Ni": 50}}}
    p = parse_paper(exp([{"process": "elements->creation", "measurements": [d, weights]}]), "p")
    c0, c1 = p.materials[0].measurements
    assert isinstance(c0, Composition) and c0.amounts == {"Al": 0.5, "Co": 1.0, "Cr": 1.0, "Fe": 1.0, "Ni": 1.0}
    assert c1.amounts["Fe"] == pytest.approx(0.512434, abs=1e-6)  # pymatgen's own docstring example


@pytest.mark.parametrize(("formula", "amounts"), [
    ("(FeCoNi)86Al7Ti7", {"Fe": 86, "Co": 86, "Ni": 86, "Al": 7, "Ti": 7}),
    ("Fe1e-3Ni", {"Fe": 0.001, "Ni": 1}),
    ("FeNi[Al]2", {"Fe": 1, "Ni": 1, "Al": 2}),
    ("Fe1Ni2Co0", {"Fe": 1, "Ni": 2}),  # pymatgen drops amounts below 1e-8
    ("((FeNi)2Al)3", {"Fe": 6, "Ni": 6, "Al": 3}),
    ("Ti-6Al-4V", None),  # negative amounts: pymatgen refuses it too
    ("Fe2.5.5", None),
    ("123", None),
])
def test_formula_strings_read_as_pymatgen_reads_them(formula, amounts):
    """The official loader builds compositions with pymatgen: bracket groups, scientific amounts and zero amounts
    were refused or kept here, and `Ti-6Al-4V` (minus signs stripped) was read as Ti6Al4V. 3,012 of 3,013 random
    formulas agree with pymatgen 2026.10.24 (the other: an unknown element, which pymatgen takes as a dummy)."""
    data = exp([{"process": "elements->creation", "measurements": [{"_type": "composition", "composition": formula}]}])
    if amounts is None:
        assert f"formula {formula!r}" in bad(data)
        return
    got = parse_paper(data, "p").materials[0].measurements[0].amounts
    assert got == pytest.approx(amounts)
    assert set(got) == set(amounts)


def test_a_step_naming_no_group_adds_no_event_and_is_said(tmp_path):
    """The official scorer skips a process step naming an unknown group (`el -> Melt` reads group ' Melt '); the file
    was refused whole. It is skipped, and the run's warnings name it."""
    from scoring.families.litxbench.load import unknown_steps

    paper = parse_paper(exp([mat(process="elements->creation->nosuch")]), "p", "p.json")
    assert [e.kind for e in resolve_events(paper.materials[0])] == \
        [e.kind for e in resolve_events(parse_paper(exp([mat()]), "p").materials[0])]
    assert unknown_steps(paper) == ["p.json: experiments[0].output_materials[0].process: step 'nosuch' names no "
                                    "synthesis group (defined: 'creation')"]


@pytest.mark.parametrize(("data", "needle"), [
    (exp([mat({"_type": "lattice_param", "struct": "XYZ"})]), "experiments[0].output_materials[0].measurements[1]"
                                                              ".struct: unknown CrysStruct 'XYZ'"),
    (exp([mat(process="elements")]), "output_materials[0].process: bad process string 'elements'"),
    (exp([mat(process="elements->creation[A=1][B=2]")]), "several bracket groups"),
    (exp([mat({"_type": "measurement", "kind": "density", "value": 1, "unit": "furlongs^q"})]),
     "measurements[1].unit: unparseable unit"),
    (exp([{"process": "elements->creation", "measurements": [{"_type": "composition", "composition": [1, 2]}]}]),
     "measurements[0].composition: composition must be an element -> amount mapping"),
    (exp([{"process": "elements->creation", "measurements": []}]), "needs at least one top-level composition"),
    (exp([mat({"_type": "configuration", "name": "x", "within": "nope"})]), "within='nope' names no configuration"),
    (exp([mat({"_type": "measurement", "kind": "density", "unit": "g/cm3"})]), "a measurement needs 'value'"),
    (exp([mat({"_type": "wat"})]), "measurements[1]._type: unknown or misplaced _type 'wat'"),
    ({"nope": 1}, "(root): expected a list of experiments"),
])
def test_bad_input_names_the_json_path(data, needle):
    assert needle in bad(data)


def test_templated_group_used_without_values_is_rejected():
    groups = {"creation": [{"kind": "ArcMelting"}, {"kind": "AsCast"}],
              "anneal[Temp]": [{"kind": "Annealing", "temperature": {"value": "[Temp]", "unit": "K"}}]}
    assert "gives no value for [Temp]" in bad(exp([mat(process="elements->creation->anneal")], groups))


def test_malformed_json_reports_the_line(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('[\n  {"raw_materials": {},\n  oops\n]\n')
    with pytest.raises(InputError) as e:
        load_paper(f)
    assert e.value.line == 3 and "malformed JSON" in e.value.reason


def test_absurdly_deep_json_is_refused_before_parsing(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(InputError) as e:
        load_paper(f)
    assert "nested" in e.value.reason
    shallow_but_too_deep = json.loads("[" * 80 + "]" * 80)
    assert "deeper than" in bad(shallow_but_too_deep)


def test_a_text_over_the_limit_is_refused_at_its_line_and_path(tmp_path):
    """A 50 MB description (never scored) took `score` 89 s and 3.7 GB and was stored in the documents' payload."""
    data = exp([mat()])
    data[0]["raw_materials"]["elements"]["description"] = "x" * 1_000_001
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(InputError) as e:
        load_paper(path)
    line = next(i for i, x in enumerate(path.read_text().splitlines(), 1) if '"description"' in x)
    assert (e.value.path, e.value.line) == (str(path), line)
    assert e.value.reason.startswith("[0].raw_materials.elements.description: a text of 1,000,001 characters")


def test_a_run_with_a_step_naming_no_group_scores_as_without_it_and_warns(tmp_path):
    """End to end: the file scores as if the step were absent (what the official scorer does), with a warning."""
    import shutil

    from audit.runs import score_run
    from audit.store.database import open_db
    from tests.conftest import ROOT

    data = ROOT / "data" / "litxbench"
    pred = tmp_path / "pred"
    shutil.copytree(data / "pred_drop_meas30", pred)
    target = pred / "doi_10_1038__s41467_019_08460_2.json"
    doc = json.loads(target.read_text(encoding="utf-8"))
    doc[0]["output_materials"][0]["process"] = "elements->creation->Anneal "
    target.write_text(json.dumps(doc), encoding="utf-8")
    db = open_db(tmp_path / "d.db")
    inputs = {"gold": str(data / "gold"), "text": str(data / "papers")}
    spaced = score_run(db, "litxbench", {**inputs, "pred": str(pred)}, "official", run="spaced")
    plain = score_run(db, "litxbench", {**inputs, "pred": str(data / "pred_drop_meas30")}, "official", run="plain")
    assert spaced["original_metrics"] == plain["original_metrics"]
    assert any("1 process step names no synthesis group" in w and "'Anneal '" in w
               for w in spaced["summary"]["warnings"])
