"""Import direction is the architecture, read from the code's structure (its AST), not from substrings.

- Layers and what they may import (first-party allow-lists, relative imports resolved): pages -> audit, ui;
  app.py -> audit, ui; ui -> audit, ui, scoring but no family's internals (ui/families/<f>.py: its own family's);
  audit -> audit, scoring but no family's internals, and migrations import no application code; a family ->
  scoring but no other family; judges -> no family; stats -> neither families nor judges; scoring -> no audit, ui,
  pages, Streamlit or SQLite; audit -> no Streamlit, ui or pages, but for the CLI (the composition root) reaching the
  view registry `ui.families` to hand the report its family section.
- Modules are named statically: `importlib` and `__import__` only in the registries that load families and judges
  by name.
- SQL only in audit/: outside it no `execute`/`executemany`/`executescript`/`query` call and no string that is an
  SQL statement (any case).
- The shell (audit/, ui/ outside ui/families/, pages/, app.py) names no family, kind or label.
- Inside audit/ the rooms stand on floors (`AUDIT_ROOMS`): store/ imports nothing of audit but `audit.errors`;
  the rescoring core (effective, rescoring, views, runs, stale, learning) the store; review/ the core and store;
  outputs/ review, core and store; cli and demo everything. pages/ and ui/ import no store internals (migrations,
  schema check, plans).
- No import circle among first-party modules, imports inside functions included (`import_cycles`).
- tests/ and bench/ share code through devtools/ only: bench imports no `tests`, tests no `bench`, devtools
  neither (`support_violations`; imports inside functions, relative ones and `import_module("...")` included).

Each check is a function of (path, source), so `test_planted_violations_are_caught` can prove that every kind of
violation fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

PRODUCT = ("app.py", "audit", "scoring", "ui", "pages")
FIRST_PARTY = ("audit", "scoring", "ui", "pages", "app", "tests", "bench", "devtools")
SUPPORT = ("tests", "bench", "devtools")
SUPPORT_MAY_NOT_IMPORT = {"tests": ("bench",), "bench": ("tests",), "devtools": ("tests", "bench")}
"""tests/ and bench/ share code through devtools/ only, so neither runs on the other's internals."""
COMPOSITION_ROOTS = {"audit/cli.py"}
"""audit/ files that may import the view registry `ui.families` (nothing else of ui): the CLI hands the report the
family's section (`report_panel`) as the Report page does, so audit/outputs/ names no family and imports no view."""
DYNAMIC_IMPORT_ALLOWED = {"scoring/families/__init__.py", "scoring/judges/registry.py", "ui/families/__init__.py",
                          "audit/_light_imports.py"}
"""The registries import families and views by name; `audit/_light_imports.py` is an import hook (it refuses pandas
and numpy to sqlite_utils' optional imports, #38), so it reads `sys.modules` by design."""
SQL_CALLS = {"execute", "executemany", "executescript", "query"}
# sqlite-utils' table API: `db["t"].insert(...)`, `db.table("t").delete_where(...)`
# (`get` and `update` are left out: on a subscript they are far more often a dict's)
TABLE_CALLS = {"insert", "insert_all", "upsert", "upsert_all", "delete", "delete_where", "create", "drop",
               "transform", "add_column", "add_foreign_key", "create_index", "rows_where", "lookup", "count_where",
               "enable_fts", "disable_fts", "search", "pks_and_rows_where", "create_view", "create_table"}
SQLITE_MODULES = ("sqlite3", "sqlite_utils", "apsw")
SQL_TEXT = re.compile(r"^\s*(with\s+(recursive\s+)?\w+(\s*\([^)]*\))?\s+as\s*\(|"
                      r"select\s.+\sfrom\s|insert\s+(or\s+\w+\s+)?into\s|update\s+\w+\s+set\s|delete\s+from\s|"
                      r"create\s+(unique\s+)?(table|index|view|trigger)\s|drop\s+(table|index)\s|alter\s+table\s|"
                      r"pragma\s)", re.I | re.S)


def py_files(*folders: str) -> list[Path]:
    out = []
    for folder in folders:
        p = ROOT / folder
        out += [p] if p.is_file() else sorted(f for f in p.rglob("*.py") if "__pycache__" not in f.parts)
    return out


def module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(rel: str, source: str) -> list[tuple[str, int]]:
    """Every module a file imports, absolute (relative imports resolved against the file's package), with its line.
    `from pkg import name` also yields `pkg.name` (it may be a submodule)."""
    package = module_name(rel).split(".")
    if not rel.endswith("__init__.py"):
        package = package[:-1]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join([*up, *([node.module] if node.module else [])])
            out.append((base, node.lineno))
            out += [(f"{base}.{a.name}", node.lineno) for a in node.names if _is_module(f"{base}.{a.name}")]
    return out


def _is_module(name: str) -> bool:
    """Whether a dotted name is a first-party module or package (`from pkg import x`: x a submodule, not a name)."""
    p = ROOT.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _family_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 3 and parts[:2] == ["scoring", "families"] and parts[2] not in ("base",):
        return parts[2]
    return None


def layer_violations(rel: str, source: str) -> list[str]:
    """Imports a layer may not make (see the module docstring)."""
    out = []
    first = rel.split("/")[0]
    for mod, line in imports(rel, source):
        top = mod.split(".")[0]
        why = None
        fam = _family_of(mod)
        if top in SUPPORT:
            why = "the product imports no test, bench or devtools code"
        elif first == "scoring":
            if top in ("streamlit", "sqlite3", "sqlite_utils", "audit", "ui", "pages"):
                why = "scoring/ is pure: no Streamlit, SQLite, audit, ui or pages"
            elif rel.startswith("scoring/judges/") and _under(mod, "scoring.families"):
                why = "judges know no family"
            elif rel.startswith("scoring/stats/") and any(_under(mod, f"scoring.{p}") for p in ("families", "judges")):
                why = "stats import neither families nor judges"
            elif rel.startswith("scoring/families/") and fam and fam != rel.split("/")[2]:
                why = "a family imports no other family"
        elif first == "audit":
            if top in ("streamlit", "ui", "pages") and not (rel in COMPOSITION_ROOTS and mod == "ui.families"):
                why = "audit/ imports no Streamlit, ui or pages"
            elif fam:
                why = "audit/ reaches families through the registry only"
            elif rel == "audit/store/migrations.py" and top in FIRST_PARTY:
                why = "migrations work on the schema and data they were written for: no application code"
        elif first == "ui":
            own = rel.split("/")[2].removesuffix(".py") if rel.startswith("ui/families/") else None
            if fam and fam != own:
                why = "ui/ reaches a family's internals only from ui/families/<that family>.py"
        elif first in ("pages", "app.py") and top in FIRST_PARTY and top not in ("audit", "ui"):
            why = "pages and app.py import audit/ and ui/ only"
        elif first in ("pages", "app.py") and _under(mod, "ui.families") and mod != "ui.families":
            why = "pages reach a family's view through the registry (ui.families), never its module"
        if why:
            out.append(f"{rel}:{line}: imports {mod}: {why}")
    return out


# audit/'s rooms, from the ground up: each may import its own room and those listed (plus audit.errors,
# audit.numbers and audit.output_paths, leaves that import nothing of audit but the errors).
_CORE = ("audit.effective", "audit.rescoring", "audit.views", "audit.runs", "audit.stale", "audit.learning")
AUDIT_ROOMS: dict[str, tuple[str, ...]] = {
    "audit.store": (),
    "audit.effective": (),
    "audit.rescoring": ("audit.store", "audit.effective"),
    "audit.views": ("audit.store", "audit.effective", "audit.rescoring"),
    "audit.runs": ("audit.store", "audit.effective", "audit.rescoring", "audit.views"),
    "audit.stale": ("audit.store", "audit.effective", "audit.rescoring"),
    "audit.learning": ("audit.store", "audit.effective", "audit.rescoring"),
    "audit.judge_batch": ("audit.store", "audit.runs", "audit.judge_batch_args"),
    "audit.review": ("audit.store", *_CORE),
    "audit.outputs": ("audit.store", *_CORE, "audit.review", "audit.board.report"),
    "audit.board": ("audit.store", *_CORE, "audit.review", "audit.outputs"),
}
AUDIT_LEAVES = ("audit.errors", "audit.numbers", "audit.output_paths")
STORE_INTERNALS = ("audit.store.migrations", "audit.store.schema_check", "audit.store.plans")


def _audit_room(module: str) -> str | None:
    return next((room for room in AUDIT_ROOMS if _under(module, room)), None)


def audit_room_violations(rel: str, source: str) -> list[str]:
    """Arrows against audit/'s floors, and pages/ui reaching into the store's internals."""
    me = module_name(rel)
    room = _audit_room(me)
    out = []
    for mod, line in imports(rel, source):
        if not _under(mod, "audit") or mod == "audit":
            continue
        why = None
        if room is not None:
            allowed = (room, *AUDIT_ROOMS[room])
            if not any(_under(mod, leaf) for leaf in AUDIT_LEAVES) and not any(_under(mod, a) for a in allowed):
                why = f"{room} may import only {', '.join(allowed)} and {', '.join(AUDIT_LEAVES)}"
        elif me.split(".")[0] in ("pages", "ui", "app") and any(_under(mod, s) for s in STORE_INTERNALS):
            why = "pages and ui use the store through audit.store.database, never its internals"
        elif any(_under(me, leaf) for leaf in AUDIT_LEAVES) and not _under(mod, "audit.errors"):
            why = "audit.errors, audit.numbers and audit.output_paths are leaves: they import nothing of audit"
        if why:
            out.append(f"{rel}:{line}: imports {mod}: {why}")
    return out


def support_violations(rel: str, source: str) -> list[str]:
    """An import across tests/, bench/ and devtools/ against `SUPPORT_MAY_NOT_IMPORT`, also one made by name
    (`importlib.import_module("tests.x")`, `__import__("bench.x")`)."""
    first = rel.split("/")[0]
    banned = SUPPORT_MAY_NOT_IMPORT.get(first, ())
    named = [(node.args[0].value, node.lineno) for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
             and isinstance(node.args[0].value, str)
             and (isinstance(node.func, ast.Attribute) and node.func.attr in ("import_module", "__import__")
                  or isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))]
    return [f"{rel}:{line}: imports {mod}: {first}/ may not import {', '.join(banned)} (shared code lives in "
            "devtools/)" for mod, line in [*imports(rel, source), *named] if mod.split(".")[0] in banned]


def import_graph(sources: list[tuple[str, str]]) -> dict[str, set[str]]:
    """Module -> first-party modules it imports anywhere in its text (inside functions too)."""
    known = {module_name(rel) for rel, _ in sources}
    graph: dict[str, set[str]] = {}
    for rel, src in sources:
        me = module_name(rel)
        graph[me] = {m for m, _ in imports(rel, src) if m in known and m != me}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def dynamic_imports(rel: str, source: str) -> list[str]:
    if rel in DYNAMIC_IMPORT_ALLOWED:
        return []
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "__import__":
            out.append(f"{rel}:{node.lineno}: __import__")
        elif isinstance(node, ast.Attribute) and node.attr in ("__import__", "import_module"):
            out.append(f"{rel}:{node.lineno}: .{node.attr}")
        elif (isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name)
              and node.value.id == "sys"):
            out.append(f"{rel}:{node.lineno}: sys.modules (a module reached by name)")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if any(n and _under(n, "importlib") for n in names):
                out.append(f"{rel}:{node.lineno}: importlib")
    return out


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for stmt in body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    ids.add(id(stmt.value))
    return ids


def _is_table(node: ast.AST) -> bool:
    """`x["name"]` or `x.table(...)` / `x.view(...)`: a sqlite-utils Table (or View)."""
    return ((isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
             and isinstance(node.slice.value, str))
            or (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("table", "view")))


def sql_uses(rel: str, source: str) -> list[str]:
    """Outside audit/: no SQL statement text (CTEs included), no execute/query call, no sqlite-utils table API call
    and no import of an SQLite module (the type for hints comes from `audit.store.database`)."""
    if rel.startswith("audit/"):
        return []
    tree = ast.parse(source)
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
            out.append(f"{rel}:{node.lineno}: .{node.func.attr}(...) call")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TABLE_CALLS
              and _is_table(node.func.value)):
            out.append(f"{rel}:{node.lineno}: sqlite-utils table call .{node.func.attr}(...)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "table":
            out.append(f"{rel}:{node.lineno}: sqlite-utils .table(...)")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if any(n and any(_under(n, m) for m in SQLITE_MODULES) for n in names):
                out.append(f"{rel}:{node.lineno}: imports an SQLite module")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
              and SQL_TEXT.match(node.value)):
            out.append(f"{rel}:{node.lineno}: SQL text {node.value.strip()[:30]!r}")
    return out


def family_literals(rel: str, source: str, words: set[str]) -> list[str]:
    """A shell file naming a family, kind or label as a string literal (migrations are history and exempt)."""
    shell = rel == "app.py" or rel.startswith(("audit/", "pages/")) or (rel.startswith("ui/")
                                                                       and not rel.startswith("ui/families/"))
    if not shell or rel == "audit/store/migrations.py":
        return []
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [f"{rel}:{node.lineno}: names {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            and _names_a_word(node.value, words)]


def _names_a_word(text: str, words: set[str]) -> bool:
    """The text is a family's word, or spells a family's name in part: a prefix of 4+ letters (`"chim"`) or the name
    inside a longer string (`"demo-chimera-mixed"`, `"scoring.families.chimera"`)."""
    from scoring.families import TASKS

    low = text.strip().lower()
    if low in words:
        return True
    return any((len(low) >= 4 and name.startswith(low)) or name in low for name in TASKS if name in words)


def family_words() -> set[str]:
    """Family names, label scheme (kind) names, labels of three or more letters (`"1"`, `"a"` are too common to mean
    a family) and the demo runs' names."""
    from scoring.families import TASKS

    words = set(TASKS)
    for fam in TASKS.values():
        words |= set(fam.label_schemes)
        words |= {lab for scheme in fam.label_schemes.values() for lab in scheme.labels
                  if len(lab) >= 3 and not lab.isdigit()}
        words |= {d.name for d in fam.demo_runs(ROOT / "data")}
    return words


def product_sources() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in py_files(*PRODUCT)]


@pytest.mark.parametrize("check", [layer_violations, audit_room_violations, dynamic_imports, sql_uses],
                         ids=lambda f: f.__name__)
def test_product_code_keeps_the_boundaries(check) -> None:
    problems = [p for rel, src in product_sources() for p in check(rel, src)]
    assert not problems, "\n".join(problems)


def test_tests_and_bench_share_code_through_devtools_only() -> None:
    problems = [p for f in py_files(*SUPPORT) for p in support_violations(str(f.relative_to(ROOT)),
                                                                          f.read_text(encoding="utf-8"))]
    assert not problems, "\n".join(problems)


def test_no_import_circle() -> None:
    sources = product_sources()
    assert not import_cycles(import_graph(sources)), import_cycles(import_graph(sources))


def test_a_planted_circle_is_caught_even_inside_a_function() -> None:
    sources = [("audit/review/queue.py", "from audit.review.sampling import load_plan\n"),
               ("audit/review/sampling.py", "def f():\n    from audit.review.queue import queue_ids\n")]
    assert import_cycles(import_graph(sources)) == [["audit.review.queue", "audit.review.sampling"]]


def test_the_shell_names_no_family() -> None:
    words = family_words()
    problems = [p for rel, src in product_sources() for p in family_literals(rel, src, words)]
    assert not problems, "\n".join(problems)


def test_the_walk_is_recursive_and_reads_every_layer() -> None:
    rels = [rel for rel, _ in product_sources()]
    assert any(r.count("/") >= 3 for r in rels)  # e.g. scoring/families/chimera/scorer.py
    assert {r.split("/")[0] for r in rels} == {"app.py", "audit", "scoring", "ui", "pages"}


PLANTED = [
    ("ui/metrics.py", "def f(db):\n    return db.execute('select * from runs')\n", sql_uses),
    ("ui/metrics.py", "Q = 'select name from runs where id = ?'\n", sql_uses),
    ("pages/scores.py", "rows = conn.query(q)\n", sql_uses),
    ("scoring/run.py", "import importlib\nm = importlib.import_module('x')\n", dynamic_imports),
    ("audit/outputs/export.py", "m = __import__('streamlit')\n", dynamic_imports),
    ("audit/outputs/export.py", "from scoring.families import chimera\n", layer_violations),
    ("audit/views.py", "from scoring.families.litxbench.model import Paper\n", layer_violations),
    ("scoring/judges/replay.py", "from ..families.chimera import questions\n", layer_violations),
    ("scoring/stats/sampling.py", "from scoring.judges.answer import Answer\n", layer_violations),
    ("scoring/families/ideation/scores.py", "from ..chimera.scorer import score\n", layer_violations),
    ("scoring/decisions.py", "def f():\n    import streamlit as st\n    return st\n", layer_violations),
    ("pages/queue.py", "from scoring.families import get_task\n", layer_violations),
    ("audit/store/migrations.py", "from audit.rescoring import rebuild\n", layer_violations),
    ("ui/families/chimera.py", "from scoring.families.litxbench.model import Paper\n", layer_violations),
    ("audit/review/queue.py", "from devtools.queue_oracle import queue\n", layer_violations),
    ("audit/review/queue.py", "def f():\n    from tests.conftest import ROOT\n", layer_violations),
    ("bench/score_chimera.py", "from tests.support import naive_chimera\n", support_violations),
    ("bench/hardening.py", "def f():\n    from tests.judge_server import JudgeServer\n", support_violations),
    ("bench/hardening.py", "from ..tests import conftest\n", support_violations),
    ("tests/app/test_scores_families.py", "from bench.family_partial_audit import truth_for\n", support_violations),
    ("tests/hardening/test_round2_store.py", "import bench.hardening as h\n", support_violations),
    ("tests/hardening/test_round3_bench.py", "import importlib\nm = importlib.import_module('bench.hardening')\n",
     support_violations),
    ("devtools/hardening_runner.py", "from bench.common import copy_db\n", support_violations),
    ("devtools/partial_audit.py", "def f():\n    return __import__('tests.conftest')\n", support_violations),
    ("audit/store/database.py", "from audit.views import as_view\n", audit_room_violations),
    ("audit/store/plans.py", "def f():\n    from audit.review.sampling import load_plan\n", audit_room_violations),
    ("audit/review/queue.py", "from audit.outputs.export import write_csv\n", audit_room_violations),
    ("audit/rescoring.py", "from audit.review.reviews import add_review\n", audit_room_violations),
    ("audit/errors.py", "from audit.store.database import now\n", audit_room_violations),
    ("pages/scores.py", "from audit.store.migrations import migrations\n", audit_room_violations),
    ("pages/queue.py", "conn['reviews'].insert(row)\n", sql_uses),
    ("pages/queue.py", "conn.table('runs').delete_where('id = ?', [1])\n", sql_uses),
    ("ui/metrics.py", "Q = 'WITH x AS (SELECT id FROM runs) SELECT * FROM x'\n", sql_uses),
    ("pages/queue.py", "import sqlite3\n", sql_uses),
    ("ui/decisions.py", "from sqlite_utils import Database\n", sql_uses),
    ("audit/outputs/export.py", "import builtins\nst = builtins.__import__('streamlit')\n", dynamic_imports),
    ("audit/outputs/export.py", "import sys\nst = sys.modules.get('streamlit')\n", dynamic_imports),
    ("pages/queue.py", "from ui.families import chimera\n", layer_violations),
    ("pages/document.py", "import ui.families.chimera\n", layer_violations),
    ("scoring/stats/estimators.py", "from scoring.families.chimera import scorer\n", layer_violations),
    ("audit/outputs/report.py", "from ui.families import report_panel\n", layer_violations),
    ("audit/cli.py", "from ui.families.chimera import report_panel\n", layer_violations),
    ("audit/cli.py", "def f():\n    import streamlit\n", layer_violations),
]


@pytest.mark.parametrize(("rel", "source", "check"), PLANTED, ids=[f"{r}:{c.__name__}" for r, _, c in PLANTED])
def test_planted_violations_are_caught(rel: str, source: str, check) -> None:
    assert check(rel, source), f"{check.__name__} missed a violation planted in {rel}"


def panel_keys() -> set[str]:
    """The export keys the family views choose their report section by (`if "KEY" not in data["original"]` in a
    view's `report_panel`): the words that would let the report pick a family's panel itself."""
    keys = set()
    for path in py_files("ui/families"):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(fn, ast.FunctionDef) and fn.name == "report_panel":
                keys |= {n.left.value for n in ast.walk(fn) if isinstance(n, ast.Compare)
                         and isinstance(n.left, ast.Constant) and isinstance(n.left.value, str)
                         and all(isinstance(op, ast.In | ast.NotIn) for op in n.ops)}
    return keys


def report_panel_literals(rel: str, source: str, keys: set[str]) -> list[str]:
    """audit/outputs/ choosing a family's section by the metrics it reports (the report composes what it is handed)."""
    if not rel.startswith("audit/outputs/"):
        return []
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [f"{rel}:{node.lineno}: names the family panel key {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            and node.value in keys]


def test_the_report_chooses_no_family_panel() -> None:
    keys = panel_keys()
    assert {"strict_1to1", "tie_policies"} <= keys  # the walk finds the views' keys
    problems = [p for rel, src in product_sources() for p in report_panel_literals(rel, src, keys)]
    assert not problems, "\n".join(problems)
    planted = 'PANELS = {"strict_1to1": ("strict 1-to-1", _panel_strict)}\n'
    assert report_panel_literals("audit/outputs/report.py", planted, keys)


def test_planted_family_literal_is_caught() -> None:
    words = family_words()
    for source in ("if task == 'chimera':\n    pass\n", "ok = name.startswith('chim')\n", "ok = label == 'match'\n",
                   "RUN = 'demo-chimera-mixed'\n", "ok = kind == 'entity_pair'\n"):
        assert family_literals("audit/outputs/export.py", source, words), source
    assert not family_literals("ui/families/chimera.py", "NAME = 'chimera'\n", {"chimera"})


@pytest.mark.parametrize(("rel", "source"), [
    ("bench/score_chimera.py", "from devtools import naive_chimera\nfrom bench.common import copy_db\n"),
    ("tests/hardening/test_round2_store.py", "from devtools.hardening_runner import run_case2\n"),
    ("devtools/hardening_runner.py", "import importlib\nimportlib.import_module('devtools.hardening_cases.store')\n"),
])
def test_allowed_support_imports_pass(rel: str, source: str) -> None:
    assert not support_violations(rel, source)


@pytest.mark.parametrize(("rel", "source"), [
    ("ui/families/chimera.py", "from scoring.families.chimera.scorer import score\n"),
    ("scoring/families/chimera/family.py", "from .scorer import score\nfrom scoring.stats.prf import prf\n"),
    ("ui/metrics.py", '"""Select the runs from the table."""\nX = "select a run"\n'),
    ("audit/views.py", "rows = db.execute('SELECT 1')\n"),
])
def test_allowed_code_passes_every_check(rel: str, source: str) -> None:
    assert not (layer_violations(rel, source) or dynamic_imports(rel, source) or sql_uses(rel, source))


def test_no_two_test_files_share_a_name():
    """The test folders are not packages, so pytest imports test files by their basename: two files of one name
    (tests/app/x.py, tests/e2e/x.py) make the second a collection error in the full run."""
    from collections import Counter

    names = Counter(p.name for p in (ROOT / "tests").rglob("test_*.py"))
    assert not [n for n, k in names.items() if k > 1]
