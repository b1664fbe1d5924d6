"""The fold judges of an LLM-improved judge, asked on a run `score --judge improved:N` scores (issue #37 §2).

When the run shares documents with the reviews the judge learnt from, its estimate must be cross-fitted: each
reviewed document judged by the fold judge that never saw it, the others by the folds' average
(`audit.review.crossfit_estimate`). A few-shot or rules fold judge asks an LLM, which `estimate` cannot do, so
`score` asks each fold's judge (the fold's model exactly as `improve-judge` fitted and stored it: no second fit)
the run's questions and stores the family's label per decision and fold (`fold_labels`, m021). It costs K times
the run's questions; every answer goes through the answer cache under its prompt's hash, so a re-run asks nothing.
"""

from __future__ import annotations

import json

from sqlite_utils import Database

from audit.outputs.improve_llm import Asker
from audit.outputs.improved_judge import Improved
from audit.store.fold_labels import save_fold_labels
from audit.views import RunView


def shares_reviewed_documents(view: RunView, imp: Improved | None) -> bool:
    """True when `imp` is an LLM-improved judge with stored fold models and this run holds a document it learnt
    from (then the run's estimate may count those reviews, and needs the fold judges' answers)."""
    if imp is None or imp.model is None or not imp.fold_models:
        return False
    learnt = set(imp.learnt_from.get("documents") or [])
    return any(d in learnt for d in view.document_ids())


def _questions(view: RunView) -> list[tuple[dict, list]]:
    task, out = view.task, []
    for doc in view.document_ids():
        payload = view.document(doc)["payload"]
        for d in view.decisions(doc):
            qs = task.questions_for(payload, d)
            if qs:
                out.append((d, qs))
    return out


def fold_cost_text(view: RunView, imp: Improved) -> str:
    """What asking the fold judges costs, said before asking."""
    n = sum(len(qs) for _, qs in _questions(view))
    k = len(imp.fold_models)
    return (f"this run shares documents with the reviews its judge learnt from, so its estimate is cross-fitted: "
            f"asking the {k} fold judges too ({k} × {n} questions = at most {k * n} requests; answers are cached by "
            "prompt hash, so a re-run asks nothing; skip with --no-fold-answers, and the estimate then says its "
            "interval is too narrow)")


def ask_fold_labels(db: Database, view: RunView, imp: Improved) -> dict:
    """Ask every fold judge the run's questions and store each decision's label per fold, all or nothing.
    Returns the cost (requests, cached answers, tokens).

    Raises:
        AuditError: the server failed (nothing is stored).
    """
    task = view.task
    scheme = next(s for s in task.label_schemes.values() if s.scale == "binary" and s.positive is not None)
    asker = Asker(db, view, imp.spec)
    asked = _questions(view)
    rows = []
    for k, model in enumerate(imp.fold_models):
        answers = asker.ask(asker.improved(model, scheme), [q for _, qs in asked for q in qs])
        at = 0
        for d, qs in asked:
            values = [a.value for a in answers[at:at + len(qs)]]
            at += len(qs)
            label = task.label_from_answers(d, values) or d["judge"]
            rows.append((k, d["id"], label, json.dumps(values)))
    save_fold_labels(db, view.id, rows)
    return asker.cost()

