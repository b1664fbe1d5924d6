"""Improve a run's judge from its reviews and prove it on documents the improvement never saw (issue #37).

One function, `improve_judge`, for every surface (the CLI's `improve-judge`, the page): pre-flight (human-human
agreement, enough documents), K-fold cross-fitting by document (`scoring.improve.crossfit`), the strategy's fit
(`scoring.improve.threshold`, `scoring.improve.calibrate`), the out-of-sample report (`scoring.improve.evaluate`) and
the judge to keep (fitted on every reviewed document) with what it learnt from. Which reviews and which effective
labels are used follows the agreement page (`audit.outputs.agreement.agreement_rows`): blind reviews only when the
run has any, decisions settled by humans, judge answers that could be read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlite_utils import Database

from audit.errors import AuditError
from audit.outputs.agreement import agreement_rows, alpha_groups
from audit.outputs.improve_llm import Asker, few_shot_fit, llm_applicability, llm_items, llm_spec, rules_fit
from audit.outputs.review_sets import reviews_in
from audit.review.sampling import target_cell
from audit.store.database import query_in
from audit.store.improvements import save_improvement
from audit.store.limits import check_seed
from audit.views import RunRef, RunView, as_view
from scoring.families.base import LabelScheme
from scoring.improve.calibrate import apply_calibration, fit_calibration
from scoring.improve.crossfit import Apply, Fit, Item
from scoring.improve.evaluate import cross_fitted_report, headline_gap
from scoring.improve.llm import DEFAULT_K, improvement_identity
from scoring.improve.preflight import DEFAULT_MIN_ALPHA, LLM_STRATEGIES, MIN_DOCUMENTS, STRATEGIES, preflight
from scoring.improve.threshold import apply_threshold, fit_threshold, labels_at, scored_from_answers
from scoring.judges.thresholds import threshold_of
from scoring.stats.agreement import alpha_interval

DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class Plan:
    """What a strategy learns from on this run, and how."""

    items: list[Item]
    labels: tuple[str, ...]
    scheme: LabelScheme
    fit: Fit
    apply: Apply
    judge_after: Callable[[dict], dict]
    """The full model as the judge to keep (its spec when it has one)."""
    refit: bool = True
    """Δκ's interval re-runs the fit in every resample (False: the fit asks an LLM)."""
    asker: Asker | None = None
    """The LLM and its cost (few-shot, rules)."""


def applicability(view: RunView, strategy: str) -> str | None:
    """Why `strategy` does not apply to this run's judge and family (one line), or None when it does."""
    spec = view.row["judge_spec"]
    if strategy in LLM_STRATEGIES:
        return llm_applicability(view, strategy)
    if strategy == "threshold":
        if threshold_of(spec) is None:
            return (f"threshold: applies to judges that compare a similarity score to a threshold (fuzzy, embed); "
                    f"this run's judge is {spec}")
        if not _kinds(view, "binary"):
            return "threshold: applies to yes/no decisions; this run's family has none"
        return None
    if strategy == "calibrate":
        if not _kinds(view, "ordinal"):
            return "calibrate: applies to ordinal ratings (a scale such as 1-5); this run's family has none"
        return None
    raise AuditError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")


def _kinds(view: RunView, scale: str) -> list[str]:
    return [k for k, s in view.task.label_schemes.items() if s.scale == scale]


def _reviewed(rows: list[dict], kinds: Sequence[str]) -> list[dict]:
    """One row per reviewed decision of these kinds (agreement's rows repeat a decision per judge call)."""
    out: dict[int, dict] = {}
    for r in rows:
        if r["kind"] in kinds:
            out.setdefault(r["decision"], r)
    return [out[i] for i in sorted(out)]


def _threshold_plan(view: RunView, rows: list[dict]) -> Plan:
    task = view.task
    form, original = threshold_of(view.row["judge_spec"])  # type: ignore[misc]
    kinds = _kinds(view, "binary")
    if len(kinds) != 1:
        raise AuditError(f"threshold: this family has {len(kinds)} yes/no decision kinds; tuning one threshold "
                         "for several is not built yet")
    scheme = task.label_schemes[kinds[0]]
    judge = task.make_judge(form.spec(original))
    payloads: dict[str, Mapping] = {}
    items = []
    for r in _reviewed(rows, kinds):
        d = view.reviewed.rows[r["decision"]]
        payload = payloads.setdefault(d["doc_id"], view.document(d["doc_id"])["payload"])
        decision = {"kind": d["kind"], "type": d["type"], "left": d["left"], "right": d["right"],
                    "judge": d["judge_label"]}
        answers = judge.ask_many(task.questions_for(payload, decision))
        features = scored_from_answers(answers, lambda a, dec=decision: task.label_from_answers(dec, a), form.scale)
        item = Item(r["decision"], d["doc_id"], r["human"], d["judge_label"], features)
        again = labels_at([item], [original])[0][0]
        if again != d["judge_label"]:
            raise AuditError(f"decision {r['decision']}: {form.spec(original)} now says {again!r} where the run "
                             f"stored {d['judge_label']!r}: the run's answers do not come from this judge, so its "
                             "threshold cannot be tuned on them")
        items.append(item)
    labels = tuple(scheme.labels)

    def judge_after(model: dict) -> dict:
        return {"spec": form.spec(model["threshold"]), "strategy": "threshold", "threshold": model["threshold"],
                "kappa_fit": model["kappa_fit"], "curve": model["curve"]}

    return Plan(items, labels, scheme, lambda part: fit_threshold(part, form.grid, labels, original),
                apply_threshold, judge_after)


def _calibrate_plan(view: RunView, rows: list[dict]) -> Plan:
    kinds = _kinds(view, "ordinal")
    schemes = {view.task.label_schemes[k].labels for k in kinds}
    if len(schemes) != 1:
        raise AuditError("calibrate: this family's ordinal kinds use different scales; calibrating them together "
                         "is not built yet")
    scheme = view.task.label_schemes[kinds[0]]
    labels = tuple(scheme.labels)
    items = [Item(r["decision"], r["doc"], r["human"], r["judge"], r["type"])  # one map per criterion (type)
             for r in _reviewed(rows, kinds) if r["judge"] in labels and r["human"] in labels]

    def judge_after(model: dict) -> dict:
        return {"spec": view.row["judge_spec"], "strategy": "calibrate", "calibration": model["maps"],
                "note": "the judge's ratings mapped through `calibration`; `score` does not take a calibrated judge "
                        "yet"}

    return Plan(items, labels, scheme, lambda part: fit_calibration(part, labels), apply_calibration, judge_after)


def _llm_plan(db: Database, view: RunView, rows: list[dict], strategy: str, *, k: int, reviews_used: str) -> Plan:
    kind = next(k for k, s in view.task.label_schemes.items() if s.scale == "binary" and s.positive is not None)
    scheme = view.task.label_schemes[kind]
    spec = llm_spec(view.row)
    asker = Asker(db, view, spec)  # type: ignore[arg-type]
    items = llm_items(view, rows, kind, _reviewed, reviews_used)
    labels = tuple(scheme.labels)
    fit = few_shot_fit(k) if strategy == "few-shot" else rules_fit(asker)

    def apply(model: dict, part: Sequence[Item]) -> list[str]:
        return asker.apply(model, part, scheme)

    def judge_after(model: dict) -> dict:
        out = {"spec": spec, "strategy": strategy, "model": model, "improved": improvement_identity(model)}
        if strategy == "rules":
            out["rules"] = model["rules"]
        return out

    return Plan(items, labels, scheme, fit, apply, judge_after, refit=False, asker=asker)


def _group_name(group: tuple[str, str], ordinal: Mapping) -> str:
    """`alpha_groups`' name of a unit's group (a kind, or kind/criterion for an ordinal kind)."""
    kind, typ = group
    return f"{kind}/{typ}" if kind in ordinal and typ else kind


def _human_agreement(view: RunView, rows: dict, kinds: Sequence[str]) -> tuple[dict | None, int, dict]:
    """The group with the lowest Krippendorff's alpha over the groups of these kinds (a kind, or an ordinal kind's
    criterion; its `alpha` and `alpha_ci`), the decisions two or more people labelled, and every group's alpha."""
    ordinal = {k: list(s.labels) for k, s in view.task.label_schemes.items() if s.scale == "ordinal"}
    ratings = {u: h for u, h in rows["ratings"].items() if rows["rating_groups"][u][0] in kinds}
    groups = alpha_groups(ratings, {u: rows["rating_groups"][u] for u in ratings}, ordinal)
    for name, g in groups.items():  # its interval: documents resampled (alpha_groups gives the value alone)
        if g.get("alpha") is not None:
            members = {u: h for u, h in ratings.items() if _group_name(rows["rating_groups"][u], ordinal) == name}
            kind = name.partition("/")[0]
            g["alpha_ci"] = alpha_interval(members, {u: view.reviewed.rows[int(u)]["doc_id"] for u in members},
                                           level=g["level"], labels=ordinal.get(kind))
    defined = [g for g in groups.values() if g.get("alpha") is not None]
    lowest = min(defined, key=lambda g: g["alpha"]) if defined else None
    n_double = sum(len(h) >= 2 for h in ratings.values())
    return lowest, n_double, {
        name: {"alpha": g.get("alpha"), "alpha_ci": g.get("alpha_ci"), "level": g["level"]}
        for name, g in groups.items()}


def _gaps(view: RunView, items: Sequence[Item], after: Mapping[int, str]) -> dict:
    """|judge-only − audited| of the headline metric over the reviewed documents, before and after. A decision
    nobody reviewed (or not learnt from) keeps the original judge's label on every side."""
    task = view.task
    cell = target_cell(task)
    by_doc: dict[str, list[Item]] = {}
    for i in items:
        by_doc.setdefault(i.doc, []).append(i)
    payloads, judged, fitted, human = [], [], [], []
    for doc, its in sorted(by_doc.items()):
        decisions = view.decisions(doc)
        key = {d["id"]: (d["kind"], d["type"], d["left"], d["right"]) for d in decisions}
        base = {key[d["id"]]: d["judge"] for d in decisions}
        payloads.append(view.document(doc)["payload"])
        judged.append(base)
        fitted.append(base | {key[i.decision]: after[i.decision] for i in its})
        human.append(base | {key[i.decision]: i.human for i in its})
    return {"metric": cell.label, "documents": len(payloads),
            "gap_before": headline_gap(task, cell, payloads, judged, human),
            "gap_after": headline_gap(task, cell, payloads, fitted, human)}


def review_uids(db: Database, ids: list[int]) -> list[str]:
    """The uids of review rows (what export-reviews / import-reviews keep across databases), sorted."""
    return sorted(r["uid"] for r in query_in(db, "SELECT uid FROM reviews WHERE id IN ({marks})", ids))


def improve_judge(db: Database, run: RunRef, strategy: str, *, seed: int = 0, folds: int = DEFAULT_FOLDS,
                  min_alpha: float = DEFAULT_MIN_ALPHA, min_documents: int = MIN_DOCUMENTS,
                  n_resamples: int = 1000, reviews: str = "auto", policy: str | None = None, k: int = DEFAULT_K,
                  rules: str | None = None, store: bool = True) -> dict:
    """The issue's JSON: `folds`, `judge_before`, `judge_after`, `evaluation` {method, kappa_before, kappa_after,
    delta_kappa, delta_kappa_ci, gap_before, gap_after, n_decisions, n_documents, ...}, `improved`, `reason`, and
    `preflight`, `learnt_from` (seed, folds, review ids, decisions, documents), `fold_judges`, and for the LLM
    strategies `cost` (requests, cached answers, tokens). `k`: few-shot examples per question; `rules`: the user's
    edited rules, taken by the judge to keep in place of the distilled ones (the folds still distil their own, so
    the evaluation is of the procedure, as the result says). The result is stored with its folds
    (`audit.store.improvements`; `stored_as` is its id) unless `store` is False or the database is read-only.

    Raises:
        AuditError: the strategy does not apply (one line saying why), the pre-flight refuses (too little
            human-human agreement, too few reviewed documents: the number needed), or bad arguments.
    """
    if strategy not in STRATEGIES:
        raise AuditError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if not 1 <= k <= 20:
        raise AuditError(f"--k must be between 1 and 20 examples, got {k}")
    if not 2 <= folds <= 50:
        raise AuditError(f"--folds must be between 2 and 50, got {folds}")
    check_seed(seed)
    if not -1 <= min_alpha <= 1:  # also refuses nan
        raise AuditError(f"--min-alpha is a Krippendorff's alpha, from -1 to 1, got {min_alpha}")
    if not 1 <= min_documents <= MIN_DOCUMENTS:
        raise AuditError(f"the minimum of reviewed documents must be between 1 and {MIN_DOCUMENTS}, "
                         f"got {min_documents}")
    view = as_view(db, run, policy)
    why = applicability(view, strategy)
    if why:
        raise AuditError(why)
    rows = agreement_rows(db, view, reviews=reviews)
    if rules is not None and strategy != "rules":
        raise AuditError("--rules goes with --strategy rules")
    if strategy in LLM_STRATEGIES:
        plan = _llm_plan(db, view, rows["hvj"], strategy, k=k, reviews_used=rows["reviews_used"])
    else:
        plan = (_threshold_plan if strategy == "threshold" else _calibrate_plan)(view, rows["hvj"])
    kinds = sorted({k for k, s in view.task.label_schemes.items() if s is plan.scheme})
    lowest, n_double, by_group = _human_agreement(view, rows, kinds)
    alpha, alpha_ci = (lowest["alpha"], lowest.get("alpha_ci")) if lowest else (None, None)
    n_documents = len({i.doc for i in plan.items})
    check = preflight(alpha, n_double, n_documents, folds=folds, min_alpha=min_alpha, min_documents=min_documents,
                      alpha_ci=alpha_ci)
    pre = {"human_alpha": alpha, "human_alpha_ci": alpha_ci, "human_alpha_by_group": by_group,
           "double_reviewed": n_double,
           "min_alpha": min_alpha, "reviewed_documents": n_documents, "min_documents": max(min_documents, 2 * folds),
           "documents_needed": check.documents_needed, "notes": check.notes, "reviews_used": rows["reviews_used"]}
    if check.refusal:
        raise AuditError(f"improve-judge refused: {check.refusal}")
    fitted, evaluation = cross_fitted_report(plan.items, plan.fit, plan.apply, plan.labels, k=folds, seed=seed,
                                             ordinal=plan.scheme.scale == "ordinal", positive=plan.scheme.positive,
                                             n_resamples=n_resamples, refit=plan.refit)
    evaluation |= _gaps(view, plan.items, fitted.after)
    learnt_rows = [r for i in plan.items for r in reviews_in(view.reviews.get(i.decision, []), rows["reviews_used"])]
    learnt = {"run": view.name, "strategy": strategy, "seed": seed, "folds": folds,
              "documents": sorted({i.doc for i in plan.items}), "decisions": [i.decision for i in plan.items],
              "review_ids": sorted(r["id"] for r in learnt_rows),
              "review_uids": review_uids(db, [r["id"] for r in learnt_rows]),
              "reviews_used": rows["reviews_used"], "effective_label_policy": view.policy}
    fold_specs = [plan.judge_after(m).get("spec") for m in fitted.fold_models]
    if strategy == "threshold":  # what `estimate` needs to cross-fit a run scored with the improved judge
        learnt["fold_judges"] = [{"spec": spec, "held_out_documents": f}
                                 for spec, f in zip(fold_specs, fitted.folds, strict=True)]
    full = fitted.full_model
    if rules is not None:  # the user's edit of the distilled rules is the judge to keep
        full = full | {"rules": rules.strip(), "edited": True, "distilled": full["rules"]}
        evaluation["note"] = ("the rules were edited by hand: the evaluation above is of the distilled rules each "
                              "fold made, not of the edited text")
    result = {"run": view.name, "strategy": strategy, "preflight": pre, "folds": fitted.folds,
              "judge_before": {"spec": view.row["judge_spec"], "identity": view.row["judge_identity"]},
              "judge_after": plan.judge_after(full) | {"learnt_from": learnt},
              "fold_judges": [plan.judge_after(m) | {"held_out_documents": f}
                              for m, f in zip(fitted.fold_models, fitted.folds, strict=True)],
              "evaluation": evaluation, "improved": evaluation["improved"], "reason": evaluation["reason"],
              **({"cost": plan.asker.cost()} if plan.asker else {})}
    if store and not getattr(db, "read_only", False):
        result["stored_as"] = save_improvement(db, view.id, result)
    return result


def judge_after_text(result: Mapping) -> str:
    """The fitted judge in words: its spec, and for a calibration that the run's judge's ratings go through maps.

    >>> judge_after_text({"judge_after": {"spec": "file", "strategy": "calibrate"}})
    'file, its ratings mapped through the fitted calibration'
    """
    after = result["judge_after"]
    if after.get("strategy") == "calibrate":
        return f"{after['spec']}, its ratings mapped through the fitted calibration"
    return str(after["spec"])


def judge_to_use(result: Mapping, result_file: str | None = None) -> str:
    """What to score the family's next runs with, after `improve_judge`'s `result`, in words (the page and the CLI
    say it alike): the stored improved judge when the reviews improved it; else the run's own judge, with the
    fitted one named only as something to try, since no improvement was shown.

    >>> judge_to_use({"improved": True, "stored_as": 2, "judge_after": {"spec": "fuzzy:76"}})
    'score with --judge improved:2'
    >>> judge_to_use({"improved": False, "stored_as": 2, "judge_after": {"spec": "fuzzy:76"}})
    "keep the run's judge (the fitted one, stored as improved:2, showed no improvement)"
    >>> judge_to_use({"improved": True, "judge_after": {"spec": "fuzzy:76"}}, "out.json")
    'score with --judge fuzzy:76 --learnt-from out.json'
    >>> judge_to_use({"improved": True, "stored_as": 3, "judge_after": {"spec": "x", "model": {"edited": True}}})[:59]
    'score with --judge improved:3 to try your edited rules, whi'
    >>> judge_to_use({"improved": True, "stored_as": 4, "judge_after": {"spec": "file", "strategy": "calibrate"}})[:60]
    "map the run's ratings through the calibration (result 4's ca"
    """
    stored = result.get("stored_as")
    if result["judge_after"].get("strategy") == "calibrate":  # a map of the ratings, not a judge `score` takes
        maps = f"result {stored}'s calibration maps" if stored is not None else "the result's calibration maps"
        if not result.get("improved"):
            return f"keep the run's ratings as they are (the calibration fitted, {maps}, showed no improvement)"
        return f"map the run's ratings through the calibration ({maps}; `score` does not take a calibrated judge)"
    fitted = f"improved:{stored}" if stored is not None else result["judge_after"]["spec"]
    if not result.get("improved"):
        where = f", stored as {fitted}," if stored is not None else f" ({fitted})"
        return f"keep the run's judge (the fitted one{where} showed no improvement)"
    use = (f"score with --judge {fitted}" if stored is not None else
           f"score with --judge {fitted} --learnt-from {result_file or 'the result file'}")
    if (result["judge_after"].get("model") or {}).get("edited"):  # the improvement shown is the distilled rules'
        use += (" to try your edited rules, which no fold evaluated (the improvement shown is of the rules each fold "
                "distilled): review a sample of that run before relying on it")
    return use

