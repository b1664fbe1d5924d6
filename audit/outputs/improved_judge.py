"""An improved judge as `score` takes it (issue #37: "a judge like any other"): from a stored `improve-judge` result
(`--judge improved:ID`, the id `improve-judge` prints) or from its result file (`--judge SPEC --learnt-from FILE`).

A threshold judge is its spec alone (`fuzzy:72`). A few-shot or rules judge is the run's LLM spec asked with the
learnt prompt (`scoring.improve.llm.ImprovedJudge`: the reviewed examples before each question, or the rules
after it): a new prompt hash, answers cached under it like any other. Either way the run records what the judge
learnt from (run, seed, folds and their documents, review ids) in its judge identity, so `audit.learning` can mark
it stale when one of those reviews is withdrawn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from audit.errors import AuditError
from scoring.families.base import TaskFamily
from scoring.judges.transport import Judge

PREFIX = "improved:"
LLM_STRATEGIES = ("few-shot", "rules")


@dataclass(frozen=True)
class Improved:
    """The judge an `improve-judge` result keeps: its base spec, what it learnt from, and for few-shot / rules the
    model its prompts are built from."""

    spec: str
    learnt_from: dict
    model: dict | None = None
    fold_models: tuple[dict, ...] = ()
    """For few-shot / rules: each fold's model as `improve-judge` fitted it without that fold's documents (the
    result's `fold_judges`), which a run sharing those documents is also asked with (`audit.outputs.fold_labels`)."""


def from_result(result: object, where: str, *, improvement_id: int | None = None) -> Improved:
    """The judge to keep of an `improve-judge` result (`where` names it in errors).

    Raises:
        AuditError: not such a result, or a judge `score` cannot take (a calibration map).
    """
    after = result.get("judge_after") if isinstance(result, dict) else None
    if not isinstance(after, dict) or not isinstance(after.get("learnt_from"), dict) or not after.get("spec"):
        raise AuditError(f"{where}: not an improve-judge result (no judge_after.spec / judge_after.learnt_from)")
    strategy = after.get("strategy")
    if strategy == "calibrate":
        raise AuditError(f"{where}: a calibrated judge maps the ratings of a stored run; `score` does not take one "
                         "(it has no spec of its own)")
    model = None
    folds: tuple[dict, ...] = ()
    if strategy in LLM_STRATEGIES:
        model = after.get("model")
        if not isinstance(model, dict) or model.get("strategy") != strategy:
            raise AuditError(f"{where}: a {strategy} result without its model (judge_after.model)")
        stored = result.get("fold_judges") or []  # type: ignore[union-attr]
        if all(isinstance(f, dict) and isinstance(f.get("model"), dict) for f in stored):
            folds = tuple(f["model"] for f in stored)
    learnt = dict(after["learnt_from"]) | {"improved": bool(result.get("improved")),  # type: ignore[union-attr]
                                           "split": result.get("folds")}  # type: ignore[union-attr]
    if improvement_id is not None:
        learnt["improvement_id"] = improvement_id
    return Improved(str(after["spec"]), learnt, model, folds)


def from_file(path: str, spec: str) -> Improved:
    """`--learnt-from FILE` with `--judge SPEC`: the file's judge when its spec is `spec`.

    Raises:
        AuditError: the file is not such a result, or its judge is another spec (the file and the reason named).
    """
    try:
        result = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise AuditError(f"{path}: --learnt-from must be a file written by improve-judge ({e})") from None
    imp = from_result(result, f"{path} (--learnt-from)")
    if imp.spec != spec:
        raise AuditError(f"{path}: it improved the judge to {imp.spec!r}, not {spec!r}; score with "
                         f"--judge {imp.spec}")
    return imp


def from_store(db: Database, ref: str) -> Improved:
    """`--judge improved:ID`: the stored result with this id (`judge_improvements`).

    Raises:
        AuditError: not a number, or no such result in this database.
    """
    raw = ref[len(PREFIX):].strip()
    if not raw.isdigit():
        raise AuditError(f"--judge {ref}: give the number improve-judge printed ('folds stored as result N'), "
                         "e.g. improved:3")
    rows = list(db.query("SELECT result FROM judge_improvements WHERE id = ?", [int(raw)]))
    if not rows:
        raise AuditError(f"--judge {ref}: no improve-judge result {raw} in this database")
    return from_result(json.loads(rows[0]["result"]), f"--judge {ref}", improvement_id=int(raw))


def resolve(db: Database, judge: str, learnt_from: str | None) -> tuple[str, Improved | None]:
    """The judge spec to build and the improvement to apply (None for an ordinary judge).

    Raises:
        AuditError: a bad reference, or `improved:ID` together with `--learnt-from`.
    """
    if judge.startswith(PREFIX):
        if learnt_from:
            raise AuditError(f"--judge {judge} names what the judge learnt from already; drop --learnt-from")
        imp = from_store(db, judge)
        return imp.spec, imp
    if learnt_from:
        return judge, from_file(learnt_from, judge)
    return judge, None


def improved_judge(task: TaskFamily, judge: Judge, imp: Improved) -> Judge:
    """The family's judge asked with the improvement's prompts (few-shot, rules); a threshold judge as it is.

    Raises:
        AuditError: the family or the judge is not one a few-shot / rules judge applies to.
    """
    if imp.model is None:
        return judge
    from audit.outputs.improve_llm import LLM_PREFIXES, decision_of
    from scoring.improve.llm import ImprovedJudge

    if not judge.spec.startswith(LLM_PREFIXES):
        raise AuditError(f"a {imp.model['strategy']} judge asks an LLM; {judge.spec} is not one")
    schemes = [s for s in task.label_schemes.values() if s.scale == "binary" and s.positive is not None]
    if len(schemes) != 1 or not schemes[0].symmetric:
        raise AuditError(f"a {imp.model['strategy']} judge is built for families whose decision is one symmetric "
                         f"yes/no question; not {task.name}")
    embed = None
    if imp.model["strategy"] == "few-shot":
        from scoring.judges.embed import EmbedJudge

        embed = EmbedJudge().embed
    out = ImprovedJudge(judge, imp.model, positive=schemes[0].positive or "", decision_of=decision_of, embed=embed)
    return out.bind(judge.bound) if judge.bound is not None else out


def identity_extra(imp: Improved | None) -> Mapping | None:
    """What the run records beside its judge's identity: what the judge learnt from (None for an ordinary one)."""
    return None if imp is None else imp.learnt_from
