"""The one rule for agreement statistics that can be undefined, applied on every surface (Agreement and Compare
pages, their charts, the report, the LaTeX caption, the JSON export and the CLI).

- Which statistic: the family's label scheme decides. A group of ordinal decisions (ideation ratings) is summarised
  by quadratic-weighted κ, any other group by Cohen's κ; the statistic's name travels with its value.
- Undefined: κ is undefined when one side used a single label (it is then 0 or 0/0 by construction, so it says
  nothing about agreement) or nothing was reviewed. An undefined value is `None` with a reason in plain words:
  said in words on a page, `null` plus `undefined` in JSON, left out of charts, never printed or drawn as 0.
  An interval is undefined (also in words) when the reviews sit in one document or most resamples had no κ.
- Few reviews: below `MIN_DECISIONS` decisions or `MIN_DOCUMENTS` documents a defined value carries a warning.
  Where the minimums come from: the intervals resample documents, and the partial-audit simulations
  (`bench/partial_audit.py`, written up in the partial-audit design) measured a 95% percentile bootstrap covering
  0.80 at 10 documents, 0.90 at 20 and 0.92 at 40; the partial audit shows no interval below 30 reviewed blocks
  (`scoring.stats.estimators.MIN_REVIEWS`), the same floor used here for decisions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from scoring.families.base import TaskFamily
from scoring.stats.estimators import MIN_REVIEWS

MIN_DECISIONS = MIN_REVIEWS
MIN_DOCUMENTS = 20
MINIMUM_SOURCE = ("a 95% bootstrap interval that resamples documents covered 0.80 of the time at 10 documents and "
                  f"0.90 at {MIN_DOCUMENTS} in Rejudge's partial-audit simulations; {MIN_DECISIONS} decisions is the "
                  "partial audit's own floor")
NAMES = {"kappa": "Cohen's κ", "weighted_kappa": "quadratic-weighted κ", "alpha": "Krippendorff's α"}
UNDEFINED_TEXT = "undefined"


@dataclass(frozen=True)
class Statistic:
    """One agreement figure as every surface shows it."""

    key: str
    """`kappa`, `weighted_kappa` or `alpha`: the key of the value in the statistics dict."""
    name: str
    """For people, e.g. `quadratic-weighted κ`."""
    value: float | None
    ci: tuple[float, float] | None
    undefined: str | None
    """Why `value` is None, in plain words."""
    ci_undefined: str | None
    """Why there is no interval although `value` is defined."""
    warning: str | None
    """Set when the value rests on fewer reviews than the minimums."""
    n: int = 0
    n_documents: int = 0

    @property
    def defined(self) -> bool:
        return self.value is not None

    def text(self, digits: int = 3) -> str:
        """`0.140 [0.027, 0.262]`, or `undefined: <why>`; never a 0 standing in for nothing."""
        if self.value is None:
            return f"{UNDEFINED_TEXT}: {self.undefined}" if self.undefined else UNDEFINED_TEXT
        out = f"{self.value:.{digits}f}"
        if self.ci is not None:
            out += f" [{self.ci[0]:.{digits}f}, {self.ci[1]:.{digits}f}]"
        return out

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci) if self.ci is not None else None
        return out


def _one_label_sides(confusion: Mapping, row_name: str, col_name: str) -> list[str]:
    counts, labels = confusion.get("counts") or [], confusion.get("labels") or []
    if not counts:
        return []
    rows = [sum(r) for r in counts]
    cols = [sum(c) for c in zip(*counts, strict=True)]
    out = []
    for who, marg in ((row_name, rows), (col_name, cols)):
        used = [labels[i] for i, m in enumerate(marg) if m > 0]
        if len(used) == 1:
            out.append(f"{who} said only “{used[0]}”")
    return out


CHANCE_CORRECTED = ("kappa", "kappa_ci", "weighted_kappa", "weighted_kappa_ci", "pabak", "ac1")
"""The statistics that read the labels as one scale (chance agreement over the pooled labels): undefined when a
group pools kinds whose labels differ (`mixed_labels_reason`); raw agreement stays."""


def mixed_labels_reason(kinds: Iterable[str], task: TaskFamily) -> str | None:
    """Why a group of these decision kinds has no κ, or None: kinds with different label sets (ideation's ratings
    1–5 and comparisons a / b / tie, LitXBench's pairs and numbers) are not one scale, so a κ over their pooled
    labels counts the kind itself as agreement.

    >>> from scoring.families import TASKS
    >>> mixed_labels_reason(["rating", "comparison"], TASKS["ideation"])[:60]
    'it pools decisions whose labels differ (rating: 1 / 2 / 3 / '
    >>> mixed_labels_reason(["material_pair", "item_pair"], TASKS["litxbench"]) is None
    True
    """
    labels = {k: tuple(task.label_schemes[k].labels) for k in dict.fromkeys(kinds) if k in task.label_schemes}
    if len(set(labels.values())) <= 1:
        return None
    said = "; ".join(f"{k}: {' / '.join(v)}" for k, v in labels.items())
    return f"it pools decisions whose labels differ ({said}), which one κ cannot read as one scale: see each kind"


def kappa_undefined_reason(stats: Mapping, *, row_name: str = "the human", col_name: str = "the judge") -> str | None:
    """Why κ says nothing for these statistics (plain words), or None when it is meaningful."""
    if not stats or not stats.get("n"):
        return (stats or {}).get("undefined_because") or "no decisions reviewed yet"
    if stats.get("mixed_labels"):
        return stats["mixed_labels"]
    sides = _one_label_sides(stats.get("confusion") or {}, row_name, col_name)
    if sides:
        return (" and ".join(sides) + ", so κ cannot tell agreement from chance (review decisions with another "
                "answer)")
    if stats.get("degenerate"):
        return "one side gave a single label, so κ cannot tell agreement from chance"
    if stats.get("kappa") is None:
        return "κ is undefined for these labels"
    return None


def any_settled(human_vs_judge: Mapping) -> bool:
    """Whether any reviewed decision counts in human vs judge (its `all` group has n > 0); before that the group is
    there with κ null and the reason."""
    return bool((human_vs_judge.get("all") or {}).get("n"))


def _ci_reason(stats: Mapping, key: str) -> str | None:
    if stats.get(f"{key}_ci") is not None:
        return None
    if (stats.get("n_clusters") or 0) < 2:
        return "no interval: every reviewed decision is in one document (the interval resamples documents)"
    if stats.get("kappa_ci_skipped") is not None and stats.get("kappa_ci") is None:
        return "no interval: κ was undefined in too many resampled sets of documents"
    return "no interval was computed"


def few_reviews_warning(n: int, n_documents: int | None) -> str | None:
    """A short warning when a figure rests on fewer decisions or documents than the minimums (`minimums()` says
    where they come from); `n_documents` None: not counted (α)."""
    short = []
    if n < MIN_DECISIONS:
        short.append(f"{n} decisions (fewer than {MIN_DECISIONS})")
    if n_documents is not None and n_documents < MIN_DOCUMENTS:
        short.append(f"{n_documents} documents (fewer than {MIN_DOCUMENTS})")
    return f"few reviews: {' in '.join(short)}" if short else None


def minimums() -> dict[str, Any]:
    """The minimums behind `few_reviews_warning` and where they come from (the agreement JSON's `minimums`)."""
    return {"decisions": MIN_DECISIONS, "documents": MIN_DOCUMENTS, "why": MINIMUM_SOURCE}


def kappa_statistic(stats: Mapping, *, ordinal: bool, row_name: str = "the human",
                    col_name: str = "the judge") -> Statistic:
    """The group's headline κ under the rule (weighted for an ordinal group)."""
    key = "weighted_kappa" if ordinal else "kappa"
    n, docs = int(stats.get("n") or 0), int(stats.get("n_clusters") or 0)
    why = kappa_undefined_reason(stats, row_name=row_name, col_name=col_name)
    if why is None and stats.get(key) is None:
        why = f"{NAMES[key]} is undefined for these labels"
    if why is not None:
        return Statistic(key, NAMES[key], None, None, why, None, None, n, docs)
    ci = stats.get(f"{key}_ci")
    return Statistic(key, NAMES[key], float(stats[key]), tuple(ci) if ci else None, None, _ci_reason(stats, key),
                     few_reviews_warning(n, docs), n, docs)


def apply_kappa_rule(stats: dict, *, ordinal: bool, row_name: str = "the human",
                     col_name: str = "the judge") -> dict:
    """The statistics dict as JSON carries it: κ values that say nothing become null (with `undefined` saying
    why), and `headline` names the group's statistic. Changes and returns `stats`."""
    if not stats:
        return stats
    why = kappa_undefined_reason(stats, row_name=row_name, col_name=col_name)
    if why is not None:
        for k in CHANCE_CORRECTED if stats.get("mixed_labels") else ("kappa", "kappa_ci", "weighted_kappa",
                                                                      "weighted_kappa_ci"):
            stats[k] = None
        stats["kappa_undefined"] = why
    stats["headline"] = kappa_statistic(stats, ordinal=ordinal, row_name=row_name, col_name=col_name).as_json()
    return stats


def statistic_of(stats: Mapping, *, ordinal: bool | None = None) -> Statistic:
    """The `Statistic` of a statistics dict: its stored `headline` when it has one (the agreement JSON), else
    computed now (`ordinal` None: from whether a weighted κ was computed)."""
    stored = stats.get("headline") if stats else None
    if stored:
        return Statistic(**{**stored, "ci": tuple(stored["ci"]) if stored.get("ci") else None})
    if ordinal is None:
        ordinal = bool(stats) and stats.get("judge_higher") is not None
    return kappa_statistic(stats or {}, ordinal=ordinal)


def alpha_statistic(alpha: Mapping) -> Statistic:
    """Krippendorff's α of one group (`scoring.stats.agreement.multi_rater_stats` plus its `level`)."""
    n = int(alpha.get("n_pairable_units") or 0)
    level = alpha.get("level")
    name = NAMES["alpha"] + (f" ({level})" if level else "")
    if alpha.get("alpha") is None:
        why = _alpha_reason(alpha.get("reason"))
        return Statistic("alpha", name, None, None, why, None, None, n, 0)
    return Statistic("alpha", name, float(alpha["alpha"]), None, None, "no interval is computed for α",
                     few_reviews_warning(n, None), n, 0)


def _alpha_reason(reason: str | None) -> str:
    if not reason:
        return "no decision has labels from two reviewers yet"
    if "two or more raters" in reason:
        return "no decision has labels from two reviewers yet"
    if "same value" in reason:
        return "every reviewer gave every decision the same label, so α cannot tell agreement from chance"
    return reason


def group_title(task: TaskFamily, group: str) -> str:
    """An agreement group named for people, on the page's tables and charts and in the report: `all`,
    `trivial` / `non-trivial`, a decision kind, or `kind/type` (the type first: a narrow column cuts the end).

    >>> from scoring.families import TASKS
    >>> [group_title(TASKS["chimera"], g) for g in ("all", "trivial", "entity_pair", "entity_pair/comb-element")]
    ['all decisions', 'trivial decisions', 'span pair (predicted ⇄ gold)', 'comb-element (span pair)']
    """
    if group == "all":
        return "all decisions"
    if group in ("trivial", "non-trivial"):
        return f"{group} decisions"
    kind, _, typ = group.partition("/")
    if not typ:
        return task.kind_title(kind)
    return f"{typ} ({task.kind_title(kind).split(' (')[0]})"
