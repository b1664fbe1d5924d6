"""The family contract as library code, in the spirit of scikit-learn's `check_estimator`: a family author runs
`check_family(fam, docs)` on their family and a few documents; the tests run it on every registered family.

Each check recomputes what it compares from the family's own primitives (`counts`, `metrics`), never from what
`aggregate` or the store computed, so a family cannot pass by agreeing with itself. A failed check raises
`ContractError` naming the family, the check and what differs.

`docs` are `DocCase`s: a document's payload (`payload`) and its decisions as the shell holds them (kind, type, left,
right, judge label, detail). Pure: no SQL, no Streamlit.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scoring.families.base import Labels, TaskFamily

HUMAN_FIELDS = ("effective", "source", "human", "reviews", "reviewed", "label", "human_label", "effective_label")
"""Fields a shell decision may carry beside the judge-side ones; a stratum must not read any of them."""


class ContractError(AssertionError):
    """A family breaks its contract (an AssertionError, so test runners report it as a failed check)."""


@dataclass
class DocCase:
    """One document of a family run: its payload and its decisions (dicts with kind, type, left, right, judge,
    detail)."""

    doc: str
    payload: Mapping
    decisions: list[dict] = field(default_factory=list)

    def labels(self, choose=lambda d: d["judge"]) -> Labels:
        return {(d["kind"], d["type"], d["left"], d["right"]): choose(d) for d in self.decisions}


def _fail(fam: TaskFamily, check: str, message: str) -> ContractError:
    return ContractError(f"{fam.name}: {check}: {message}")


def _sum(parts: Sequence[Mapping]) -> dict:
    """Nested sum of count dicts, written apart from `scoring.families.base.sum_nested` on purpose."""
    out: dict = {}
    for part in parts:
        for k, v in part.items():
            if isinstance(v, Mapping):
                out[k] = _sum([out.get(k, {}), v])
            elif isinstance(v, bool) or not isinstance(v, int | float):
                raise TypeError(f"a count must be a number, got {k}={v!r}")
            else:
                out[k] = out.get(k, 0) + v
    return out


def close(a: object, b: object) -> bool:
    """Equal nested JSON values, floats to 1e-9 (a sum's last digits depend on its order); NaN equals NaN."""
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, int | float) and isinstance(b, int | float)):
            return False
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, Mapping):
        return isinstance(b, Mapping) and set(a) == set(b) and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def per_doc_counts(fam: TaskFamily, docs: Sequence[DocCase]) -> list[dict]:
    """Each document's counts under the judge's labels, from the family's `counts`."""
    return [fam.counts(d.payload, d.labels()) for d in docs]


def _metrics(fam: TaskFamily, per_doc: Sequence[Mapping], options: Mapping[str, str] | None) -> dict:
    return fam.metrics(_sum(per_doc), list(per_doc) if fam.needs_doc_counts else None, options)


def check_aggregate_is_a_fold(fam: TaskFamily, docs: Sequence[DocCase], options: Mapping[str, str] | None = None,
                              seed: int = 0) -> None:
    """`aggregate(per_doc)` is `metrics` of the documents' summed counts (and nothing else): in any order, through
    `total=`, and from a fresh instance of the family after other calls (no state kept outside the counts)."""
    per_doc = per_doc_counts(fam, docs)
    want = _metrics(fam, per_doc, options)
    rng = random.Random(seed)
    got = {"aggregate": fam.aggregate(per_doc, options),
           "aggregate of shuffled documents": fam.aggregate(rng.sample(per_doc, len(per_doc)), options),
           "aggregate with total=": fam.aggregate(lambda: per_doc, options, total=_sum(per_doc))}
    half = per_doc[: max(1, len(per_doc) // 2)]
    # a family keeping state between calls carries one run's counts into the next: the same instance must give a
    # fresh instance's answer for another set of documents, and then the first answer again
    half_got = fam.aggregate(half, options)
    got["aggregate after another run's"] = fam.aggregate(copy.deepcopy(per_doc), options)
    got["a fresh instance's metrics"] = _metrics(type(fam)(), per_doc, options)
    for what, value in got.items():
        if not close(value, want):
            raise _fail(fam, "aggregate is a fold", f"{what} differs from metrics(sum of the documents' counts)")
    if not close(half_got, _metrics(type(fam)(), half, options)):
        raise _fail(fam, "aggregate is a fold", "half of the documents, after the whole run, differ from a fresh "
                    "instance's metrics of that half (state kept outside the counts)")


def check_totals_cells_need_only_totals(fam: TaskFamily, docs: Sequence[DocCase],
                                        options: Mapping[str, str] | None = None) -> None:
    """A headline cell the family estimates from `totals` is a function of the summed counts alone, as the
    difference estimator computes it (`metrics(total, None)`): the same value as the run's metrics with every
    document's counts, and the same from the sums of two halves of the documents."""
    per_doc = per_doc_counts(fam, docs)
    if len(per_doc) < 2:
        raise _fail(fam, "totals cells", "needs at least two documents")
    whole = _metrics(fam, per_doc, options)
    mid = len(per_doc) // 2
    totals_only = fam.metrics(_sum(per_doc), None, options)
    halves = fam.metrics(_sum([_sum(per_doc[:mid]), _sum(per_doc[mid:])]), None, options)
    for cell in fam.headline:
        if fam.sampled_by(cell) != "totals":
            continue
        name = "/".join(cell.path)
        for what, other in (("from the summed counts alone", totals_only), ("from two halves' sums", halves)):
            if not close(cell.value(other), cell.value(whole)):
                raise _fail(fam, "totals cells", f"{name} is {cell.value(whole)} from every document but "
                            f"{cell.value(other)} {what}: it reads more than the summed counts")


def check_reviews_can_move_the_score(fam: TaskFamily, docs: Sequence[DocCase]) -> None:
    """For every decision kind present, some decision given another allowed label changes its document's counts
    (else a review of that kind could never change the audited score)."""
    kinds = {d["kind"] for doc in docs for d in doc.decisions}
    moved: set[str] = set()
    for doc in docs:
        base = fam.counts(doc.payload, doc.labels())
        for d in doc.decisions:
            if d["kind"] in moved:
                continue
            scheme = fam.label_schemes[d["kind"]]
            for other in scheme.labels:
                if other == d["judge"]:
                    continue
                labels = doc.labels()
                labels[(d["kind"], d["type"], d["left"], d["right"])] = other
                if fam.counts(doc.payload, labels) != base:
                    moved.add(d["kind"])
                    break
    if kinds - moved:
        raise _fail(fam, "reviews move the score", f"no label change of kind {sorted(kinds - moved)} changes any "
                    "document's counts")


def check_label_from_answers(fam: TaskFamily, docs: Sequence[DocCase]) -> None:
    """`label_from_answers` gives the label the family's `answer_examples` (the paper's rule, written apart from
    the code) give for each tuple of answers; a family whose decisions have judge questions must declare them for
    every kind it asks about."""
    asked = {d["kind"] for doc in docs for d in doc.decisions if fam.questions_for(doc.payload, d)}
    table = fam.answer_examples
    missing = asked - set(table)
    if missing:
        raise _fail(fam, "label_from_answers", f"kinds {sorted(missing)} are asked of an LLM but declare no "
                    "answer_examples")
    for kind, rows in table.items():
        d = next((d for doc in docs for d in doc.decisions if d["kind"] == kind), {"kind": kind})
        for answers, want in rows:
            got = fam.label_from_answers(d, list(answers))
            if got != want:
                raise _fail(fam, "label_from_answers", f"{kind} answers {tuple(answers)} give {got!r}, the rule "
                            f"says {want!r}")


def check_trivial_is_certain(fam: TaskFamily, docs: Sequence[DocCase]) -> None:
    """A decision's certain answer (`certain_label`) is read from its question alone: the judge's label and detail
    do not change it, it is one of the kind's labels, and `trivial` is exactly "certain and the judge agreed"
    (`certainty`, issue 40.1). A `certain_label` for every decision of a kind is refused: nothing would be left
    that needs a judge."""
    by_kind: dict[str, list[bool]] = {}
    for doc in docs:
        for d in doc.decisions:
            answer = fam.certain_label(d)
            scheme = fam.label_schemes[d["kind"]]
            if answer is not None and answer not in scheme.labels:
                raise _fail(fam, "trivial", f"certain label {answer!r} of a {d['kind']} decision is no label of "
                            "its kind")
            for judge in scheme.judge_labels:
                other = {**d, "judge": judge, "detail": {}}
                if fam.certain_label(other) != answer:
                    raise _fail(fam, "trivial", f"decision {d['kind']} {d['left']!r}/{d['right']!r} is certain "
                                "or not depending on the judge's answer")
                if fam.trivial(other) != (answer is not None and judge == answer):
                    raise _fail(fam, "trivial", f"decision {d['kind']} {d['left']!r}/{d['right']!r}: trivial must "
                                "be 'certain, and the judge gave the certain answer'")
            by_kind.setdefault(d["kind"], []).append(answer is not None)
    for kind, calls in by_kind.items():
        if len(calls) > 1 and all(calls):
            raise _fail(fam, "trivial", f"every {kind} decision ({len(calls)}) is called certain")


def check_stratum_reads_judge_side_only(fam: TaskFamily, docs: Sequence[DocCase], seed: int = 0) -> None:
    """`sampling_stratum` of a document is the same whatever human or effective fields its decisions carry (a plan
    whose strata read the human labels loses its design-based validity)."""
    rng = random.Random(seed)
    for doc in docs:
        if not doc.decisions:
            continue
        want = fam.sampling_stratum([dict(d) for d in doc.decisions])
        for _ in range(3):
            noisy = []
            for d in doc.decisions:
                labels = fam.label_schemes[d["kind"]].labels
                lab = rng.choice(labels)
                noisy.append({**d, "effective": lab, "label": lab, "human_label": lab, "effective_label": lab,
                              "source": rng.choice(["judge", "reviewer", "adjudicator"]),
                              "human": {"r": lab}, "reviews": [{"label": lab}], "reviewed": True})
            got = fam.sampling_stratum(noisy)
            if got != want:
                raise _fail(fam, "sampling_stratum", f"document {doc.doc}: {want!r} becomes {got!r} when only "
                            "human fields change")


def check_question_keys(fam: TaskFamily, docs: Sequence[DocCase]) -> None:
    """One question key per decision of a document (two decisions never share a question), the same key for a
    symmetric decision keyed the other way round where its labels name no side (a mirrored kind, ideation's
    `a`/`b`, is a question in the order asked), and keys and gold keys read from content alone (a deep copy
    of the payload gives the same)."""
    for doc in docs:
        gk = fam.gold_key(doc.payload)
        if not isinstance(gk, str) or not gk or fam.gold_key(copy.deepcopy(doc.payload)) != gk:
            raise _fail(fam, "question keys", f"document {doc.doc}: gold_key is not a stable string")
        seen: dict[str, dict] = {}
        for d in doc.decisions:
            key = fam.question_key(doc.payload, d)
            if not isinstance(key, str) or not key:
                raise _fail(fam, "question keys", f"document {doc.doc}: a key must be a non-empty string")
            if key in seen:
                raise _fail(fam, "question keys", f"document {doc.doc}: two decisions share a question key "
                            f"({seen[key]['left']!r}/{seen[key]['right']!r} and {d['left']!r}/{d['right']!r})")
            seen[key] = d
            if fam.question_key(copy.deepcopy(doc.payload), dict(d)) != key:
                raise _fail(fam, "question keys", f"document {doc.doc}: the key is not read from content alone")
            scheme = fam.label_schemes[d["kind"]]
            swapped = {**d, "left": d["right"], "right": d["left"]}
            if scheme.symmetric and not scheme.mirror and fam.question_key(doc.payload, swapped) != key:
                raise _fail(fam, "question keys", f"document {doc.doc}: a symmetric {d['kind']} decision keyed "
                            "the other way round asks another question")


def check_board_cells(fam: TaskFamily, docs: Sequence[DocCase], options: Mapping[str, str] | None = None) -> None:
    """What a board reads per system (`board_systems`, `board_cells`, `system_metrics`): distinct systems, cells
    with distinct paths (a board keys a metric by its path), and every cell a number for some system (for a run
    that is one system: in its metrics), so no board column is empty by construction."""
    metrics = _metrics(fam, per_doc_counts(fam, docs), options)
    systems = fam.board_systems(metrics)
    cells = fam.board_cells(metrics)
    if not cells:
        raise _fail(fam, "board cells", "no cell to show per system")
    if len({c.path for c in cells}) != len(cells):
        raise _fail(fam, "board cells", "two cells share a path")
    if len(set(systems)) != len(systems) or not all(isinstance(x, str) and x for x in systems):
        raise _fail(fam, "board cells", f"systems must be distinct non-empty names, got {systems!r}")
    parts = [fam.system_metrics(metrics, x) for x in systems] if systems else [metrics]
    for cell in cells:
        values = [cell.value(p) for p in parts]
        if all(v is None for v in values):
            raise _fail(fam, "board cells", f"{'/'.join(cell.path)} ({cell.label}) is a number for no system")


CHECKS = (check_question_keys, check_aggregate_is_a_fold, check_totals_cells_need_only_totals, check_board_cells,
          check_reviews_can_move_the_score, check_label_from_answers, check_trivial_is_certain,
          check_stratum_reads_judge_side_only)


def check_family(fam: TaskFamily, docs: Sequence[DocCase], options: Mapping[str, str] | None = None) -> list[str]:
    """Run every check; the problems found, one line each (empty: the family keeps its contract on these
    documents)."""
    problems = []
    for check in CHECKS:
        try:
            if check in (check_aggregate_is_a_fold, check_totals_cells_need_only_totals, check_board_cells):
                check(fam, docs, options)
            else:
                check(fam, docs)
        except ContractError as e:
            problems.append(str(e))
    return problems
