"""Agreement of a run's reviews: human vs judge on every reviewed decision, and human vs human.

Units and choices (documented in the README):
- Human vs judge: ONE unit per decision and judge call (the family's `judge_votes`: one for most kinds, both orders
  for an ideation comparison), the effective human label under the run view's policy (`audit.effective`:
  adjudicated, else the unanimous — or majority — human label) against the call's label; conflicted decisions
  (humans disagree, nobody adjudicated) are left out and counted.
  Decisions whose judge answer was unreadable are left out and counted.
- Which reviews: blind reviews only whenever the run has any (sighted reviews are anchored on the judge's answer);
  `reviews="all"` or `"sighted"` to choose.
- Trivial decisions (the family's `trivial`, e.g. CHIMERA's identical strings, always a match) are reported apart
  from the non-trivial ones (groups prefixed `non-trivial`), so they cannot inflate agreement.
- Intervals resample documents (cluster bootstrap); every group reports n and the number of documents.
- Human vs human: Krippendorff's alpha over all reviewers, one per decision kind, and for an ordinal kind one per
  criterion (type) at the ordinal level (ideation: novelty, feasibility, effectiveness apart); each says its
  `level`. The pooled `alpha` is the only group's when there is one, else undefined with a reason (labels on
  different scales do not pool). Cohen's kappa per reviewer pair beside it, never one kappa pooled over pairs.
- Every kappa goes through `audit.outputs.agreement_rule`: the family's label scheme picks the headline statistic
  (quadratic-weighted for ordinal groups), a kappa that says nothing (one label only) is null with a reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import combinations

from sqlite_utils import Database

from audit.learning import learnt_decisions
from audit.outputs.agreement_rule import apply_kappa_rule, minimums, mixed_labels_reason
from audit.outputs.alt_test import alt_test_of_run
from audit.outputs.item_agreement import per_item_agreement
from audit.outputs.review_sets import review_set, reviews_in
from audit.review.assigned_review import double_coded_plan
from audit.store.database import query_in
from audit.store.shared_reviews import SAME_QUESTION
from audit.views import RunRef, RunView, as_view
from scoring.decisions import INVALID_LABEL
from scoring.families.base import TaskFamily
from scoring.stats.agreement import group_stats, multi_rater_stats, pair_stats
from scoring.stats.alt_test import EPSILON

UNIT_PER_DECISION = "one unit per decision: the effective human label vs the judge's label"
UNIT_PER_CALL = ("one unit per judge call (a decision the judge was asked in both orders counts once per order): the "
                 "effective human label vs each call's label")


def agreement_rows(db: Database, run: RunRef, *, reviews: str = "auto", policy: str | None = None) -> dict:
    """Rows for human vs judge (one per decision: the effective human label), human vs human (one per reviewer
    pair and decision), the multi-rater table {decision: {reviewer: label}} and what was left out."""
    view = as_view(db, run, policy)
    task = view.task
    used = review_set(view, reviews)
    hvj, hvh, ratings = [], [], {}
    groups: dict[str, tuple[str, str]] = {}
    skipped_invalid = skipped_conflicted = calls_per_decision = 0
    for dec_id, revs in view.reviews.items():
        revs = reviews_in(revs, used)
        d = view.reviewed.rows[dec_id]
        e = view.effective_of(d["judge_label"], revs)
        humans = e.human_labels
        decision = {"kind": d["kind"], "type": d["type"], "left": d["left"], "right": d["right"],
                    "judge": d["judge_label"]}
        base = {"decision": dec_id, "kind": d["kind"], "type": d["type"], "doc": d["doc_id"], "left": d["left"],
                "right": d["right"], "trivial": task.trivial(decision)}
        if humans:
            ratings[str(dec_id)] = humans
            groups[str(dec_id)] = (d["kind"], d["type"])
        if e.reviewed:
            votes = [v for v in task.judge_votes(decision | {"detail": json.loads(d["detail"])}) if v != INVALID_LABEL]
            if not votes:
                skipped_invalid += 1
            elif not e.settled_by_humans:
                skipped_conflicted += 1
            else:
                calls_per_decision = max(calls_per_decision, len(votes))
                for vote in votes:  # one vote for most kinds; ideation comparisons: each order asked
                    hvj.append(base | {"reviewer": ", ".join(sorted(humans)) or "adjudicator", "human": e.label,
                                       "judge": vote})
        for (a, la), (b, lb) in combinations(sorted(humans.items()), 2):
            hvh.append(base | {"reviewer": f"{a} vs {b}", "pair": f"{a} vs {b}", "human": la, "judge": lb})
    return {"hvj": hvj, "hvh": hvh, "ratings": ratings, "rating_groups": groups,
            "excluded_judge_invalid": skipped_invalid,
            "excluded_conflicted": skipped_conflicted, "reviews_used": used,
            "unit": UNIT_PER_CALL if calls_per_decision > 1 else UNIT_PER_DECISION}


def raw_agreement_interval(stats: Mapping) -> tuple[list[float] | None, str]:
    """The raw-agreement interval every surface shows, and how it was made: the bootstrap resampling documents (a
    document's decisions are not independent; the Wilson interval assumes they are and under-covers under
    clustering), the Wilson one only where no document bootstrap exists (one document), said so."""
    if stats.get("raw_agreement_cluster_ci") is not None:
        return list(stats["raw_agreement_cluster_ci"]), "bootstrap resampling documents"
    if stats.get("raw_agreement_ci") is not None:
        return list(stats["raw_agreement_ci"]), "Wilson, decisions independent: no document bootstrap"
    return None, ""


def agreement(db: Database, run: RunRef, *, n_resamples: int = 2000, seed: int = 0, reviews: str = "auto",
              policy: str | None = None, epsilon: float = EPSILON) -> dict:
    """`{"human_vs_judge": {group: stats}, "human_vs_human": {"alpha": {...}, "pairs": {pair: stats}},
    "alt_test": {kind: ...}, ...}`.

    `alt_test`: can the judge replace a human annotator (`audit.outputs.alt_test`, docs/alt-test.md), with `epsilon`.

    Groups are `all`, `non-trivial` (when the family has trivial decisions), each decision kind and `kind/type`;
    every group's stats carry n, n_clusters (documents), kappa with a document-bootstrap interval, raw agreement
    with a clustered interval, and `degenerate` when one side used a single label.
    """
    view = as_view(db, run, policy)
    rows = agreement_rows(db, view, reviews=reviews)
    schemes = view.task.label_schemes
    ordinal = {k: list(s.labels) for k, s in schemes.items() if s.scale == "ordinal"}
    positive = {k: s.positive for k, s in schemes.items() if s.positive is not None}
    opts = {"ordinal_kinds": ordinal, "positive": positive, "n_resamples": n_resamples, "seed": seed}
    hvj = group_stats(rows["hvj"], **opts) if rows["hvj"] else {"all": _nothing_settled(rows)}
    non_trivial = [r for r in rows["hvj"] if not r["trivial"]]
    if hvj and len(non_trivial) < len(rows["hvj"]):
        nt = group_stats(non_trivial, **opts)["all"] if non_trivial else pair_stats([], [])
        hvj = {"all": hvj["all"], "non-trivial": nt,
               "trivial": group_stats([r for r in rows["hvj"] if r["trivial"]], **opts)["all"],
               **{k: v for k, v in hvj.items() if k != "all"}}
    pooled = {"all": rows["hvj"], "non-trivial": non_trivial, "trivial": [r for r in rows["hvj"] if r["trivial"]]}
    for name, stats in hvj.items():
        if name in pooled and stats and (why := mixed_labels_reason((r["kind"] for r in pooled[name]), view.task)):
            stats["mixed_labels"] = why
        apply_kappa_rule(stats, ordinal=_group_is_ordinal(name, rows["hvj"], ordinal))
    hvh = human_vs_human(rows["hvh"], rows["ratings"], rows["rating_groups"], opts, view.task)
    return {
        "human_vs_judge": hvj,
        "human_vs_human": hvh,
        "multi_rater": hvh["alpha"],
        "excluded_judge_invalid": rows["excluded_judge_invalid"],
        "excluded_conflicted": rows["excluded_conflicted"],
        "reviews_used": rows["reviews_used"],
        "unit": rows["unit"],
        "effective_label_policy": view.policy,
        "minimums": minimums(),
        "reviewers": sorted({w for h in rows["ratings"].values() for w in h}),
        "two_labels_all_reviews": sum(len(e.human_labels) >= 2 for e in view.effective.values()),
        "alt_test": alt_test_of_run(db, view, reviews=rows["reviews_used"], epsilon=epsilon),
        "planned_overlap": planned_overlap(view, rows, opts),
        "per_item": per_item_agreement(view, rows),  # ideation.md §6: judge vs the mean human rating, per item
        "learnt_in_sample": learnt_in_sample(view, rows["hvj"]),
    }


def learnt_in_sample(view: RunView, hvj: list[dict]) -> dict | None:
    """When the run's judge was improved on reviews (`learnt_from`): the human-vs-judge rows in documents holding a
    question the judge learnt (a re-scored run asks them again and inherits their reviews), where agreement is
    in-sample, flattering the judge; improve-judge's cross-fitted Δκ is the out-of-sample figure. None otherwise."""
    learnt = (view.row.get("judge_identity") or {}).get("learnt_from")
    if not isinstance(learnt, dict):
        return None
    decisions = learnt_decisions(view.db, learnt)
    if not decisions:
        return None
    docs = {r["doc_id"] for r in query_in(
        view.db, f"SELECT DISTINCT d2.doc_id FROM decisions d1 CROSS JOIN decisions d2 WHERE d1.id IN ({{marks}}) "
                 f"AND d2.run_id = {int(view.id)} AND {SAME_QUESTION}", decisions)}
    n = sum(r["doc"] in docs for r in hvj)
    if not n:
        return None
    return {"rows": n, "of": len(hvj), "documents": len({r["doc"] for r in hvj if r["doc"] in docs}),
            "text": f"{n:,} of the {len(hvj):,} human-vs-judge {'row is' if n == 1 else 'rows are'} in documents "
                    f"this run's judge learnt from (improve-judge fitted it on their reviews in run "
                    f"{learnt.get('run')!r}): agreement there is in-sample and flatters the judge; improve-judge's "
                    "cross-fitted κ is the out-of-sample figure"}


def _nothing_settled(rows: Mapping) -> dict:
    """The `all` group when no reviewed decision counts: n 0, and (through the rule) κ null with the reason."""
    stats = pair_stats([], [])
    left_out = {"conflicted (reviewers disagree, nobody adjudicated)": rows["excluded_conflicted"],
                "with an unreadable judge answer": rows["excluded_judge_invalid"]}
    if any(left_out.values()):
        stats["undefined_because"] = "every reviewed decision is left out: " + ", ".join(
            f"{n} {why}" for why, n in left_out.items() if n)
    return stats


def human_vs_human(hvh_rows: list[dict], ratings: dict[str, dict[str, str]], rating_groups: dict[str, tuple[str, str]],
                   opts: dict, task: TaskFamily) -> dict:
    """`{"alpha", "alpha_by_group", "pairs"}` over these rows of `agreement_rows` (Cohen's kappa per reviewer pair
    under `audit.outputs.agreement_rule`, Krippendorff's alpha per kind and criterion, the pooled one)."""
    ordinal = opts["ordinal_kinds"]
    pairs: dict[str, dict] = {}
    for pair in sorted({r["pair"] for r in hvh_rows}):
        part = [r for r in hvh_rows if r["pair"] == pair]
        first, _, second = pair.partition(" vs ")
        stats = group_stats(part, **opts)["all"]
        if why := mixed_labels_reason((r["kind"] for r in part), task):
            stats["mixed_labels"] = why
        pairs[pair] = apply_kappa_rule(stats, ordinal=_group_is_ordinal("all", part, ordinal), row_name=first,
                                       col_name=second)
    by_group = alpha_groups(ratings, rating_groups, ordinal)
    return {"alpha": _pooled_alpha(ratings, by_group), "alpha_by_group": by_group, "pairs": pairs}


def planned_overlap(view: RunView, rows: dict, opts: dict) -> dict | None:
    """The assigned review's planned overlap (None: the run has no assignment): how many decisions were planned to
    be double-coded, how many carry at least `min_reviewers` human labels now (in the reviews used), and the
    human-human agreement on that planned subset alone (`human_vs_human`), not on accidental overlap."""

    plan = double_coded_plan(view.db, view.name)
    if plan is None:
        return None
    planned = {str(i) for i in plan["decisions"]}
    ratings = {u: h for u, h in rows["ratings"].items() if u in planned}
    effective = view.effective
    return {"planned_decisions": len(planned), "planned_documents": plan["documents"],
            "min_reviewers": plan["min_reviewers"],
            "double_coded": sum(len(h) >= plan["min_reviewers"] for h in ratings.values()),
            # whatever the reviews used: one reviewer blind by assignment made every sighted double-code vanish
            "double_coded_all_reviews": sum(len(e.human_labels) >= plan["min_reviewers"] for i in plan["decisions"]
                                            if (e := effective.get(int(i))) is not None),
            "with_two_or_more": sum(len(h) >= 2 for h in ratings.values()), "reviews_used": rows["reviews_used"],
            "human_vs_human": human_vs_human([r for r in rows["hvh"] if str(r["decision"]) in planned], ratings,
                                             {u: rows["rating_groups"][u] for u in ratings}, opts, view.task)}


def _group_is_ordinal(group: str, rows: list[dict], ordinal: dict[str, list]) -> bool:
    """A kind's group is ordinal when its scheme is; `all` / `trivial` / `non-trivial` when every kind in it is."""
    kind = group.partition("/")[0]
    if group not in ("all", "trivial", "non-trivial"):
        return kind in ordinal
    kinds = {r["kind"] for r in rows}
    return bool(kinds) and kinds <= set(ordinal)


def alpha_groups(ratings: dict[str, dict[str, str]], groups: dict[str, tuple[str, str]],
                 ordinal: dict[str, list]) -> dict[str, dict]:
    """Krippendorff's alpha per decision kind, and per kind/type (criterion) for an ordinal kind at the ordinal
    level with the scheme's order; each result says its `level`. Only groups with a decision two reviewers
    labelled are listed."""
    members: dict[str, dict[str, dict[str, str]]] = {}
    for unit, labels in ratings.items():
        kind, typ = groups[unit]
        name = f"{kind}/{typ}" if kind in ordinal and typ else kind
        members.setdefault(name, {})[unit] = labels
    out = {}
    for name in sorted(members):
        kind = name.partition("/")[0]
        level = "ordinal" if kind in ordinal else "nominal"
        stats = multi_rater_stats(members[name], level=level, labels=ordinal.get(kind))
        if stats["n_pairable_units"]:
            out[name] = stats | {"level": level}
    return out


def _pooled_alpha(ratings: dict[str, dict[str, str]], by_group: dict[str, dict]) -> dict:
    """The headline alpha: the only group's when there is one; several groups (different scales or criteria) are
    not pooled into one nominal number."""
    if not ratings:
        return {}
    if len(by_group) <= 1:
        return next(iter(by_group.values()), None) or multi_rater_stats(ratings) | {"level": "nominal"}
    return {"n_units": len(ratings), "n_raters": len({w for h in ratings.values() for w in h}),
            "n_pairable_units": sum(g["n_pairable_units"] for g in by_group.values()), "alpha": None,
            "level": None, "reason": "one α per criterion and kind (different criteria and scales are not pooled): "
                                     + ", ".join(by_group)}
