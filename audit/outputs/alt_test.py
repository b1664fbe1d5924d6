"""The alternative annotator test on a run's reviews: per decision kind, the judge against every human reviewer.

Items are decisions; each human's label is their latest review of it in the reviews agreement uses (blind ones
whenever the run has any: `audit.outputs.review_sets`; adjudications are not a human annotator's own label and
are left out); the judge's label is the decision's judge label (decisions whose judge answer was
unreadable are left out). The alignment score follows the kind's label scheme: negative RMSE over the scale's
positions for ordinal kinds (ideation ratings), accuracy for binary and categorical ones. See docs/alt-test.md.
"""

from __future__ import annotations

from sqlite_utils import Database

from audit.effective import current_labels
from audit.outputs.review_sets import review_set, reviews_in
from audit.views import RunRef, as_view
from scoring.decisions import INVALID_LABEL
from scoring.stats.alt_test import EPSILON, MIN_ITEMS_PER_HUMAN, alt_test
from scoring.stats.alt_test import MIN_HUMANS as MIN_HUMANS  # the test's rule, for the pages' wording
from scoring.stats.alt_test import RECOMMENDED_HUMANS as RECOMMENDED_HUMANS


def alt_test_of_run(db: Database, run: RunRef, *, reviews: str = "auto", epsilon: float = EPSILON,
                    min_items_per_human: int = MIN_ITEMS_PER_HUMAN) -> dict[str, dict]:
    """{kind: the test's JSON (`AltTestResult.to_json`)} for every kind with reviewed decisions, over the review set
    `reviews` (`audit.outputs.review_sets`)."""
    view = as_view(db, run)
    used = review_set(view, reviews)
    schemes = view.task.label_schemes
    judge: dict[str, dict[int, object]] = {}
    humans: dict[str, dict[str, dict[int, object]]] = {}
    for dec_id, revs in view.reviews.items():
        d = view.reviewed.rows[dec_id]
        kind, lab = d["kind"], d["judge_label"]
        scheme = schemes.get(kind)
        if scheme is None or lab == INVALID_LABEL or lab not in scheme.labels:
            continue
        position = {x: i for i, x in enumerate(scheme.labels)} if scheme.scale == "ordinal" else None
        def value(x: str, position: dict | None = position) -> object:
            return position[x] if position is not None else x
        own, _ = current_labels(reviews_in(revs, used))
        own = {r: x for r, x in own.items() if x in scheme.labels}
        if not own:
            continue
        judge.setdefault(kind, {})[dec_id] = value(lab)
        for reviewer, x in own.items():
            humans.setdefault(kind, {}).setdefault(reviewer, {})[dec_id] = value(x)
    out = {}
    for kind, j in judge.items():
        scoring = "neg_rmse" if schemes[kind].scale == "ordinal" else "accuracy"
        out[kind] = alt_test(j, humans[kind], scoring=scoring, epsilon=epsilon,
                             min_items_per_human=min_items_per_human).to_json()
    return out
