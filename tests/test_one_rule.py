"""One rule in one place (issue 35): the blind rule lives in ui/blind.py, a family view is read through the view
protocol (`ui.families.family_view`) only, both review cards undo, strip and note by one rule each
(`audit.review.reviews.undo_label` / `UNDO_NOTE` / `review_note`, `audit.review.queue.change_strip`), the plan has one
serving order (`scoring.stats.sampling.Plan.serving_order`) and a reviewer's current labels one reader
(`audit.review.reviews.reviewer_labels`). Each guard reads the code's structure (its AST) and is tested by plants
written the way the second copies used to be (a guard is tested by what it refuses)."""

from __future__ import annotations

import ast
import re

import pytest

from tests.test_boundaries import product_sources

BLIND_HOME = "ui/blind.py"
VIEW_HOME = "ui/families/__init__.py"
BLINDISH = ("blind", "hidden", "hide")


def _names(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _asks_who_labelled(node: ast.AST) -> bool:
    """`x["human"]` membership, `mine is None`, or `role == "reviewer"`: the parts the blind rule is made of."""
    for n in ast.walk(node):
        if isinstance(n, ast.Compare):
            parts = [n.left, *n.comparators]
            if any(isinstance(p, ast.Subscript) and isinstance(p.slice, ast.Constant) and p.slice.value == "human"
                   for p in parts) and any(isinstance(op, ast.In | ast.NotIn) for op in n.ops):
                return True
            if any(isinstance(p, ast.Constant) and p.value == "reviewer" for p in parts):
                return True
            if any(isinstance(op, ast.Is) for op in n.ops) and "mine" in _names(n.left):
                return True
    return False


def blind_rule_copies(rel: str, source: str) -> list[str]:
    """A second copy of the blind rule: `blind … and <who labelled / role reviewer>` outside ui/blind.py, its
    judge-derived field list redefined, or a family view deciding for itself from `ctx.blind` or `extra`."""
    if rel == BLIND_HOME or not rel.startswith(("ui/", "pages/", "app.py")):
        return []
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            blindish = any(any(b in name.lower() for b in BLINDISH) for v in node.values for name in _names(v)
                           if not isinstance(v, ast.Compare))
            if blindish and any(_asks_who_labelled(v) for v in node.values):
                out.append(f"{rel}:{node.lineno}: the blind rule restated (call ui.blind.is_blind)")
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "JUDGE_DERIVED"
                                                  for t in node.targets):
            out.append(f"{rel}:{node.lineno}: JUDGE_DERIVED redefined (ui.blind holds it)")
        elif rel.startswith("ui/families/") and rel not in (VIEW_HOME, "ui/families/checks.py"):
            if isinstance(node, ast.Attribute) and node.attr == "blind" and _names(node.value) & {"ctx"}:
                out.append(f"{rel}:{node.lineno}: a view reads ctx.blind (read ctx.hide_derived: the page's rule)")
            elif isinstance(node, ast.Constant) and node.value == "hide_derived":
                out.append(f"{rel}:{node.lineno}: a view reads extra['hide_derived'] (read ctx.hide_derived)")
    return out


def view_reads_beside_the_protocol(rel: str, source: str) -> list[str]:
    """The shell reading a family's view module itself (`getattr(view(task), …)`, `view(task).name`) instead of
    through `family_view`, which fills the protocol's defaults in one place."""
    if rel == VIEW_HOME or not rel.startswith(("ui/", "pages/", "app.py", "audit/")):
        return []
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "ui.families" and any(a.name == "view"
                                                                                     for a in node.names):
            out.append(f"{rel}:{node.lineno}: imports ui.families.view (use family_view)")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and node.args and isinstance(node.args[0], ast.Call) and isinstance(node.args[0].func, ast.Name)
              and node.args[0].func.id == "view"):
            out.append(f"{rel}:{node.lineno}: getattr on a view module (use family_view)")
    return out


RULE_TEXT = {"no label of yours": "audit/review/queue.py", "undo of the previous review": "audit/review/reviews.py"}
"""Words of a rule's output -> the one file that may write them (the change strip, the undo note)."""
LABELS_HOME = "audit/review/reviews.py"
LABELS_SQL = re.compile(r"from\s+(run_)?reviews\b.*\breviewer\s*=\s*\?", re.I | re.S)
SERVING_HOME = "scoring/stats/sampling.py"


def _constants(node: ast.AST) -> list[ast.Constant]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def rule_copies(rel: str, source: str) -> list[str]:
    """A second copy of the strip, undo, labels-reader or serving-order rule."""
    if not rel.startswith(("ui/", "pages/", "app.py", "audit/", "scoring/")):
        return []
    tree = ast.parse(source)
    out = []
    for text, home in RULE_TEXT.items():
        if rel != home:
            out += [f"{rel}:{n.lineno}: writes {text!r} (the rule lives in {home})" for n in _constants(tree)
                    if text in n.value]
    if rel != LABELS_HOME:  # the query's pieces may be split over several strings of one function
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            if LABELS_SQL.search(" ".join(c.value for c in _constants(fn))):
                out.append(f"{rel}:{fn.lineno}: {fn.name} reads a reviewer's reviews itself "
                           "(audit.review.reviews.reviewer_labels)")
    for node in ast.walk(tree):
        if rel != SERVING_HOME and isinstance(node, ast.Lambda) and "take_all" in _names(node):
            out.append(f"{rel}:{node.lineno}: orders the plan's blocks itself (Plan.serving_order)")
        elif (rel.startswith(("ui/", "pages/")) and isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "current_labels"):
            out.append(f"{rel}:{node.lineno}: current_labels in the UI (undo_label / reviewer_labels)")
    return out


@pytest.mark.parametrize("check", [blind_rule_copies, view_reads_beside_the_protocol, rule_copies],
                         ids=lambda f: f.__name__)
def test_one_copy_of_each_rule(check) -> None:
    problems = [p for rel, src in product_sources() for p in check(rel, src)]
    assert not problems, "\n".join(problems)


PLANTED = [  # the second copies as they were before the rule had one home
    ("ui/decisions.py", 'hide = blind and mine is None and role == "reviewer"\n', blind_rule_copies),
    ("pages/queue.py", 'add_review(c, run, i, label, who, blind=hidden and who not in d["human"])\n',
     blind_rule_copies),
    ("pages/document.py", 'h = blind() and role() == "reviewer" and any(who not in d["human"] for d in decs)\n',
     blind_rule_copies),
    ("ui/review_card/store.py", 'x = add_review(blind=who.blind and who.name not in d["human"])\n',
     blind_rule_copies),
    ("ui/families/ideation.py", 'hide = bool(ctx.extra.get("hide_derived", False) or ctx.blind)\n',
     blind_rule_copies),
    ("ui/families/verdicts.py", 'hide = ctx.extra.get("hide_derived", ctx.blind)\n', blind_rule_copies),
    ("ui/review_card/buffer.py", 'JUDGE_DERIVED = frozenset({"judge"})\n', blind_rule_copies),
    ("ui/review_card/buffer.py", 'keys = getattr(view(task_name), "BLIND_DETAIL", ())\n',
     view_reads_beside_the_protocol),
    ("pages/overview.py", "from ui.families import doc_noun, view\n", view_reads_beside_the_protocol),
    ("pages/queue.py", 'def _change(v, t):\n    return f"{v} → {t or \'no label of yours\'}"\n', rule_copies),
    ("ui/review_card/store.py", 'label, note = prev, "undo of the previous review"\n', rule_copies),
    ("pages/queue.py", 'def prev(d):\n    humans, adjudicated = current_labels(d["reviews"])\n', rule_copies),
    ("audit/review/queue.py", 'def _reviews(db, run_id, reviewer):\n'
     '    q = "SELECT id, decision_id, label FROM run_reviews WHERE run_id = ?"\n    q += " AND reviewer = ?"\n',
     rule_copies),
    ("audit/review/assigned_review.py", 'def done(db):\n    return db.query("SELECT v.label FROM run_reviews v JOIN '
     'runs r ON r.id = v.run_id WHERE r.name = ? AND v.reviewer = ?")\n', rule_copies),
    ("audit/review/assigned_review.py",
     "blocks = sorted(plan.blocks, key=lambda b: (b.stratum not in plan.take_all, b.rank))\n", rule_copies),
]


@pytest.mark.parametrize(("rel", "source", "check"), PLANTED, ids=[f"{r}:{c.__name__}" for r, _, c in PLANTED])
def test_a_planted_second_copy_is_caught(rel: str, source: str, check) -> None:
    assert check(rel, source), f"{check.__name__} missed a copy planted in {rel}"


def test_the_rules_home_may_state_it() -> None:
    src = 'def is_blind(d, *, blind, role, who):\n    return blind and role == "reviewer" and who not in d["human"]\n'
    assert not blind_rule_copies(BLIND_HOME, src)
    assert blind_rule_copies("ui/state.py", src)
