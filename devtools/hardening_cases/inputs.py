"""Issue 27, input files and folders of every family: LitXBench folders (links leaving them, paper ids that climb
out, oversized texts), one numeric rule for every field (NaN, Infinity, 1e309, 5,000-digit integers), duplicate
JSON keys and invisible spans, inputs where nothing matches any gold item, an ideation judge log read the other way
round, and the new-run form refusing what the CLI refuses. Tests: tests/hardening/test_round2_inputs.py,
tests/app/test_newrun_inputs.py.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from devtools.hardening_cases import Case2

ROOT = Path(__file__).resolve().parents[2]
CHIMERA, IDEATION, RETRIEVAL = ROOT / "data" / "chimera", ROOT / "data" / "ideation", ROOT / "data" / "retrieval"
GOLD, PRED, LOG = CHIMERA / "eval.csv", CHIMERA / "pred_mixed.jsonl", CHIMERA / "judge_mixed.jsonl"
HOSTILE = {"NaN": "NaN", "Infinity": "Infinity", "1e309": "1e309", "5,000-digit integer": "9" * 5000}


def _paper(amount: str = "0.5", value: str = "200") -> str:
    return ('[{"raw_materials": {"el": {"kind": "Ingot"}}, "synthesis_groups": [{"kind": "ArcMelting"}],\n'
            ' "output_materials": [{"measurements": [\n'
            f'  {{"_type": "composition", "composition": {{"Fe": 0.5, "Ni": {amount}}}}},\n'
            f'  {{"kind": "hardness", "value": {value}, "unit": "HV"}}]}}]}}]\n')


class _Folders:
    """LitXBench gold/pred/text folders of one case, under the module's scratch folder."""

    def __init__(self, work: Path, name: str, gold: str | None = None, pred: str | None = None) -> None:
        self.base = work / "litx" / name
        self.gold, self.pred, self.text = self.base / "gold", self.base / "pred", self.base / "text"
        for f in (self.gold, self.pred, self.text):
            f.mkdir(parents=True, exist_ok=True)
        (self.gold / "p1.json").write_text(gold or _paper())
        (self.pred / "p1.json").write_text(pred or _paper())

    def argv(self, *extra: str, text: bool = False) -> list[str | bytes]:
        return ["score", "litxbench", "--db", "{db}", "--gold", str(self.gold), "--pred", str(self.pred),
                "--judge", "official", *(["--text", str(self.text)] if text else []), *extra]


def _jsonl(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _litx_cases(work: Path) -> list[Case2]:
    group = "inputs: litxbench folders"
    out = []
    f = _Folders(work, "pred-link")
    outside = f.base / "elsewhere.json"
    outside.write_text(_paper(value="300"))
    (f.pred / "p1.json").unlink()
    os.symlink(outside, f.pred / "p1.json")
    out.append(Case2(group, "prediction file linked to a file outside the folder", f.argv(), watch=[f.base]))
    f = _Folders(work, "text-link")
    target = Path("/etc/passwd") if Path("/etc/passwd").exists() else Path("/etc/hostname")
    os.symlink(target, f.text / "p1.md")
    out.append(Case2(group, "paper text linked to a system file", f.argv(text=True), watch=[f.base]))
    f = _Folders(work, "root-link")
    os.symlink("/", f.pred / "root")
    out.append(Case2(group, "prediction sub-folder linked to /", f.argv(), watch=[f.base]))
    f = _Folders(work, "text-root-link")
    os.symlink("/", f.text / "all")
    out.append(Case2(group, "text sub-folder linked to /", f.argv(text=True), watch=[f.base]))
    for name, pid, side in (("gold id ..\\..\\x", "..\\..\\x", "gold"), ("prediction id ..\\x", "..\\x", "pred"),
                            ("prediction id ..x", "..x", "pred")):
        f = _Folders(work, "id-" + str(len(out)))
        folder = f.gold if side == "gold" else f.pred
        (folder / f"{pid}.json").write_text(_paper())
        if side == "gold":
            (f.pred / f"{pid}.json").write_text(_paper())
        out.append(Case2(group, f"paper {name}", f.argv(), watch=[f.base]))
    f = _Folders(work, "big-text")
    with (f.text / "p1.md").open("wb") as fh:  # sparse: 600 MiB as stat sees it, nothing on disk
        fh.truncate(600 * 2**20)
    out.append(Case2(group, "paper text of 600 MiB", f.argv(text=True), watch=[f.gold, f.pred]))
    f = _Folders(work, "dup-key", pred=_paper().replace('"Fe": 0.5,', '"Fe": 0.5, "Fe": 0.9,'))
    out.append(Case2(group, "duplicate key in a prediction file", f.argv(), watch=[f.base]))
    return out


def _number_cases(work: Path) -> list[Case2]:
    group = "inputs: numbers"
    out = []
    ideas = _jsonl(work / "num" / "ideas.jsonl", [
        {"question_id": "q1", "question": "Q?", "system": "a", "idea": "A"},
        {"question_id": "q1", "question": "Q?", "system": "b", "idea": "B"}])
    first = json.loads(next(x for x in (RETRIEVAL / "demo_rankings.jsonl").read_text(encoding="utf-8").splitlines()
                            if x.strip()))
    numbers_key = next(k for k, v in first.items() if isinstance(v, list) and v and isinstance(v[0], int | float))
    for label, lit in HOSTILE.items():
        slug = label.split(",")[0].replace(" ", "-")
        for where in ("gold composition", "pred composition", "measurement value"):
            if where == "gold composition" and lit != "NaN":
                continue
            bad = _paper(amount=lit) if "composition" in where else _paper(value=lit)
            f = _Folders(work, f"num-{slug}-{where.replace(' ', '-')}", gold=bad if where.startswith("gold") else None,
                         pred=None if where.startswith("gold") else bad)
            out.append(Case2(group, f"litxbench {where} {label}", f.argv(), watch=[f.base]))
        f = _Folders(work, f"num-{slug}-string", pred=_paper(value=f'"{lit}"'))
        out.append(Case2(group, f"litxbench measurement value \"{label}\" as a string", f.argv(), watch=[f.base]))
        absolute = _jsonl(work / "num" / f"abs-{slug}.jsonl", [
            f'{{"question_id": "q1", "system": "a", "criterion": "novelty", "score": {lit}}}'])
        out.append(Case2(group, f"ideation score {label}", ["score", "ideation", "--db", "{db}", "--ideas",
                                                             str(ideas), "--absolute", str(absolute)],
                         watch=[absolute]))
        extra = _jsonl(work / "num" / f"ideas-{slug}.jsonl", [
            f'{{"question_id": "q1", "question": "Q?", "system": "a", "idea": "A", "year": {lit}}}'])
        out.append(Case2(group, f"ideation extra field {label}", ["score", "ideation", "--db", "{db}", "--ideas",
                                                                   str(extra)], watch=[extra]))
        text = json.dumps(first).replace(f'"{numbers_key}": [', f'"{numbers_key}": [{lit}, ', 1)
        rankings = _jsonl(work / "num" / f"rank-{slug}.jsonl", [text])
        out.append(Case2(group, f"retrieval {numbers_key} {label}", ["score", "retrieval", "--db", "{db}", "--pred",
                                                                      str(rankings)], watch=[rankings]))
    return out


def _record_cases(work: Path) -> list[Case2]:
    group = "inputs: records"
    pid = next(line.split(",")[0] for line in GOLD.read_text(encoding="utf-8").splitlines()[1:] if line)
    out = []
    for name, rec in (
            ("chimera duplicate key", f'{{"paper_id": "{pid}", "relations": {{}}, "relations": {{}}}}'),
            ("chimera span of zero-width characters",
             json.dumps({"paper_id": pid, "relations": {"combination": [{"comb-element": ["\u200b\u200d", "x"]}]}})),
            ("chimera span of a BOM and a word joiner",
             json.dumps({"paper_id": pid, "relations": {"combination": [{"comb-element": ["\ufeff\u2060", "x"]}]}}))):
        p = _jsonl(work / "rec" / f"{len(out)}.jsonl", [rec])
        out.append(Case2(group, name, ["score", "chimera", "--db", "{db}", "--gold", str(GOLD), "--pred", str(p),
                                       "--judge", "exact"], watch=[p]))
    ideas = _jsonl(work / "rec" / "ideas-dup.jsonl", [
        '{"question_id": "q1", "question": "Q?", "system": "a", "system": "b", "idea": "A"}'])
    out.append(Case2(group, "ideation duplicate key", ["score", "ideation", "--db", "{db}", "--ideas", str(ideas)],
                     watch=[ideas]))
    ideas = _jsonl(work / "rec" / "ideas-zw.jsonl", [{"question_id": "q1", "question": "Q?", "system": "\u200b",
                                                       "idea": "A"}])
    out.append(Case2(group, "ideation system name of a zero-width space", ["score", "ideation", "--db", "{db}",
                                                                           "--ideas", str(ideas)], watch=[ideas]))
    return out


def _run_stored(name: str) -> Callable[[Path, Path, str], str | None]:
    def check(work: Path, db: Path, stderr: str) -> str | None:  # noqa: ARG001
        with sqlite3.connect(db) as c:
            found = c.execute("SELECT COUNT(*) FROM runs WHERE name = ?", [name]).fetchone()[0]
        c.close()
        return None if found == 1 else f"run {name!r} was not stored"
    return check


def _nothing_matches_cases(work: Path) -> list[Case2]:
    group = "inputs: nothing matches"
    out = []
    f = _Folders(work, "empty-pred")
    (f.pred / "p1.json").unlink()
    out.append(Case2(group, "litxbench empty prediction folder", f.argv(), watch=[f.base]))
    f = _Folders(work, "upper-case")
    (f.pred / "p1.json").rename(f.pred / "P1.json")
    out.append(Case2(group, "litxbench upper-case prediction file names", f.argv(), watch=[f.base]))
    f = _Folders(work, "other-run")
    (f.pred / "p1.json").rename(f.pred / "paper-of-another-gold-set.json")
    out.append(Case2(group, "litxbench prediction folder of another run", f.argv(), watch=[f.base]))
    f = _Folders(work, "wrong-folder")
    out.append(Case2(group, "litxbench text folder given as predictions",
                     ["score", "litxbench", "--db", "{db}", "--gold", str(f.gold), "--pred", str(f.text),
                      "--judge", "official"], watch=[f.base]))
    f = _Folders(work, "allow-empty")
    (f.pred / "p1.json").unlink()
    out.append(Case2(group, "litxbench empty prediction folder with --allow-empty",
                     f.argv("--run", "empty-on-purpose", "--allow-empty"), expect="ok",
                     check=_run_stored("empty-on-purpose")))
    empty = work / "match" / "empty.jsonl"
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.write_text("\n\n")
    out.append(Case2(group, "chimera empty prediction file", ["score", "chimera", "--db", "{db}", "--gold", str(GOLD),
                                                              "--pred", str(empty), "--judge", "exact"],
                     watch=[empty]))
    gold_ids = [line.split(",")[0] for line in GOLD.read_text(encoding="utf-8").splitlines()[1:4]]
    other = _jsonl(work / "match" / "other-pred.jsonl", [
        {"paper_id": p, "relations": {"combination": [{"comb-element": [f"alpha {i}", f"beta {i}"]}]}}
        for i, p in enumerate(gold_ids)])
    out.append(Case2(group, "chimera replay log of another prediction file",
                     ["score", "chimera", "--db", "{db}", "--gold", str(GOLD), "--pred", str(other), "--judge",
                      f"replay:{LOG}"], watch=[other]))
    ideas = IDEATION / "demo_ideas.jsonl"
    for flag in ("absolute", "pairwise"):
        out.append(Case2(group, f"ideation empty --{flag} file",
                         ["score", "ideation", "--db", "{db}", "--ideas", str(ideas), f"--{flag}", str(empty)],
                         watch=[empty]))
    return out


def _orientation_cases(work: Path) -> list[Case2]:
    rows = [json.loads(x) for x in (IDEATION / "demo_pairwise.jsonl").read_text(encoding="utf-8").splitlines()
            if x.strip()]
    swapped = _jsonl(work / "orient" / "swapped.jsonl", [{**r, "first": r["second"], "second": r["first"]}
                                                          for r in rows])
    same = _jsonl(work / "orient" / "same.jsonl", rows)
    argv = ["score", "ideation", "--db", "{db}", "--ideas", str(IDEATION / "demo_ideas.jsonl"), "--pairwise",
            str(IDEATION / "demo_pairwise.jsonl"), "--judge"]
    return [Case2("inputs: ideation orientation", "judge log with first/second swapped",
                  [*argv, f"replay:{swapped}"], watch=[swapped]),
            Case2("inputs: ideation orientation", "judge log as written (the same calls)",
                  [*argv, f"replay:{same}", "--run", "same-log"], expect="ok", check=_run_stored("same-log"))]


def _count_runs(db: Path) -> int:
    with sqlite3.connect(db) as c:
        n = c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    c.close()
    return n


def _form(task: str, field: str, path: Path, env: dict[str, str] | None = None,
          judge: str = "exact") -> Callable[[Path, Path], tuple[int, str]]:
    """The new-run form (AppTest on app.py) scoring `path` as `field`: (2, `error: ...`) for a message on the page
    and no exception, (1, the exception) for a traceback, (0, "") when it scored.

    The dashboard opens its database for writing (WAL, first-start checks), so the form gets a copy of the case's
    database of its own, and the case's copy is compared for what the form stored."""
    def call(work: Path, db: Path) -> tuple[int, str]:
        before = 0
        from streamlit.runtime.pages_manager import PagesManager
        from streamlit.testing.v1 import AppTest

        own = work / "form-dbs" / f"{path.stem}-{judge}.db"
        own.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(db, own)
        saved, cwd, init = dict(os.environ), os.getcwd(), PagesManager.__init__

        def through_app(self, *args, **kwargs):  # noqa: ANN001, ANN202 - as tests/app/conftest.py does
            init(self, *args, **kwargs)
            PagesManager.uses_pages_directory = False

        os.environ.update({"REJUDGE_DB": str(own), **(env or {})})
        os.chdir(ROOT)
        PagesManager.__init__ = through_app  # type: ignore[method-assign]
        try:
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
            before = _count_runs(own)  # after the first start (which may score demo runs)
            at.selectbox(key="newrun.task").set_value(task).run()
            at.selectbox(key=f"newrun.{task}.{field}.choice").set_value("A path on this machine…").run()
            at.text_input(key=f"newrun.{task}.{field}.path").set_value(str(path)).run()
            box = at.selectbox(key=f"newrun.{task}.judge")
            box.set_value(next(o for o in box.options if o.startswith(judge))).run()
            if not at.exception and judge == "exact":
                at.button(key="newrun.score").click().run()
        finally:
            PagesManager.__init__ = init  # type: ignore[method-assign]
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(saved)
        stored = _count_runs(own)
        # The runner's read-only snapshot leaves the case copy's -wal/-shm behind when no read-write connection
        # closes it (the CLI's always does): close one here, as the dashboard would, so only a change shows.
        tidy = sqlite3.connect(db)
        tidy.execute("SELECT COUNT(*) FROM runs").fetchone()
        tidy.close()
        if at.exception:
            return 1, "Traceback (most recent call last): " + " ".join(str(e.value) for e in at.exception)
        if stored != before:
            return 0, "the form stored a run"
        if at.error:
            return 2, "error: " + " ".join(str(e.value) for e in at.error)
        return 0, ""
    return call


def _form_cases(work: Path) -> list[Case2]:
    group = "inputs: new-run form"
    deep = _jsonl(work / "form" / "deep.jsonl", ['{"paper_id": "x", "relations": ' + "[" * 100_000 + "]" * 100_000
                                                 + "}"])
    latin = work / "form" / "latin1.jsonl"
    latin.write_bytes(b'{"paper_id": "caf\xe9", "relations": {}}\n')
    prices = work / "form" / "prices.json"
    prices.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    return [Case2(group, "prediction nested 100,000 deep", None, call=_form("chimera", "pred", deep), watch=[deep]),
            Case2(group, "prediction with a Latin-1 byte", None, call=_form("chimera", "pred", latin), watch=[latin]),
            Case2(group, "price file nested 100,000 deep", None,
                  call=_form("chimera", "pred", PRED, {"REJUDGE_PRICES": str(prices)}, judge="openai-json"),
                  watch=[prices])]


def cases(work: Path, base_db: Path) -> list[Case2]:  # noqa: ARG001 (every case copies the base itself)
    return [*_litx_cases(work), *_number_cases(work), *_record_cases(work), *_nothing_matches_cases(work),
            *_orientation_cases(work), *_form_cases(work)]
