"""Task families: what the shared shell (store, review pages, agreement, export) needs from a benchmark.

A family turns input files into documents, asks its judge for decisions, and turns per-document counts into
metrics. Counts are nested dicts of numbers so the shell can sum them without knowing the benchmark.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Protocol

from scoring.decisions import Decision
from scoring.judges.answer import JudgeStats
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import AnswerCache, Judge, Progress
from scoring.nouns import Noun  # noqa: F401 (re-exported: a family declares its `doc_noun` with it)

Labels = Mapping[tuple[str, str, str, str], str]
"""Effective label per (kind, type, left, right) within one document."""


@dataclass
class Loaded:
    """Validated inputs of one run, ready for `decide`."""

    docs: list[Any]
    """Task-specific document objects, in input order."""
    warnings: list[str] = field(default_factory=list)
    """Things the user should know (e.g. gold papers with no prediction), shown with the run."""
    notes: list[str] = field(default_factory=list)
    """Normalisations applied while loading."""
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LabelScheme:
    """The labels of one decision kind, and how agreement reads them."""

    scale: Literal["binary", "ordinal", "categorical"]
    labels: tuple[str, ...]
    """Labels a reviewer may give, in scale order for ordinal kinds (e.g. `1`..`5`)."""
    positive: str | None = None
    """Binary kinds: the label that counts as a hit (e.g. `match`)."""
    judge_only: tuple[str, ...] = ()
    """Labels only the judge produces besides `invalid` (e.g. ideation's `split`)."""
    invalid: str = "invalid"
    """The judge's label for an answer that could not be read or is missing."""
    titles: Mapping[str, str] = field(default_factory=dict)
    """Button / legend text per label (defaults to the label)."""
    keys: Mapping[str, str] = field(default_factory=dict)
    """Keyboard shortcut per label for the review queue."""
    symmetric: bool = False
    """`left`/`right` are an unordered pair: (x, y) and (y, x) name the same decision (CHIMERA span pairs)."""
    pairing: bool = False
    """The kind decides whether two items are paired by a matching (LitXBench's Hungarian levels): a positive
    effective label the judge did not give forces a pairing, the other way round forbids one."""
    mirror: Mapping[str, str] = field(default_factory=dict)
    """Symmetric kinds whose labels name a side: the same verdict's label with left and right swapped (ideation:
    `a` <-> `b`); a label not in it means the same either way (CHIMERA's `match`)."""

    def swapped(self, label: str) -> str:
        """The label of the same verdict on the decision keyed (right, left)."""
        return self.mirror.get(label, label)

    @property
    def judge_labels(self) -> tuple[str, ...]:
        return (*self.labels, *self.judge_only, self.invalid)

    def title(self, label: str) -> str:
        return self.titles.get(label, label)


@dataclass(frozen=True)
class InputSpec:
    """One input a family's run takes (a CLI flag `--NAME`, a field of the new-run form)."""

    name: str
    """Key in the inputs mapping and CLI flag name, e.g. `gold`, `pred`, `text`, `ideas`."""
    title: str
    help: str
    """What the file holds and its format, shown beside the form field and in `--help`."""
    required: bool = True
    folder: bool = False
    """A folder of files (LitXBench: one JSON file per paper) rather than one file."""
    suffixes: tuple[str, ...] = ()
    """File suffixes the upload widget accepts (empty: any)."""


@dataclass(frozen=True)
class OptionSpec:
    """A scoring option with a fixed set of choices (first = default), e.g. retrieval's `--ties`."""

    name: str
    choices: tuple[str, ...]
    help: str


@dataclass(frozen=True)
class DemoRun:
    """A run the dashboard scores into a fresh database from the bundled data."""

    name: str
    inputs: Mapping[str, str]
    judge: str
    note: str = ""
    reviews: str | None = None
    """A file of human reviews (the `export-reviews` format) imported into the run after scoring, e.g. a
    study's human ratings as a worked example."""
    improvement: str | None = None
    """An `improve-judge` result file stored with the run after scoring (`judge_improvements`), so the Improve the
    judge page shows it without the judge's server."""
    judge_derived: tuple[str, ...] = ()
    """Parts of `note` (exact substrings) that come from the judge's labels, e.g. the official F1: hidden from a
    blind reviewer (`note_for`)."""
    board: str | None = None
    """The demo board (`audit.board`) this run is a system of: the demo creates one board of every run naming it,
    so they must share a family, a gold and a judge spec."""

    def note_for(self, *, blind: bool) -> str:
        """The note as a reviewer sees it: in blind review every judge-derived part is replaced by a placeholder."""
        note = self.note
        if blind:
            for part in self.judge_derived:
                note = note.replace(part, "judge-derived score hidden in blind review")
        return note


NOT_REVIEWABLE = "exact: no review can change it (no judge decision behind it)"
"""What every surface (the sampled estimate's note, the Scores page, the report) says of a headline number that is not
`MetricCell.reviewable`: its value is exact at any sample size."""


@dataclass(frozen=True)
class MetricCell:
    """One number of the metrics JSON, named for people: cards, the scores table, LaTeX."""

    path: tuple[str, ...]
    """Keys into the metrics JSON, e.g. (`entities`, `avg`, `f1`)."""
    label: str
    """e.g. `entity F1 (macro avg)`."""
    section: str = ""
    """Group heading, e.g. `entities`."""
    higher_is_better: bool = True
    unit: Literal["score", "count", "rank", "share"] = "score"
    """How the number reads: a score (4 decimals), a count (an integer), a rank (an integer, or one decimal for a
    median between two ranks), a share of items (a percentage)."""
    reviewable: bool = True
    """Whether reviews can move the number (CHIMERA's classification F1 takes no judge: no review changes it). The
    sample queue targets the first reviewable headline cell unless told another."""

    def value(self, metrics: Mapping) -> float | None:
        v: Any = metrics
        for k in self.path:
            if not isinstance(v, Mapping) or k not in v:
                return None
            v = v[k]
        return v if isinstance(v, int | float) and not isinstance(v, bool) else None


SampledBy = Literal["totals", "median"]
"""How a sampled (partial) audit estimates one metric cell (`TaskFamily.sampled_by`):

- `totals`: the cell is a function of the counts summed over documents, `cell.value(metrics(Σ counts))` (a mean
  over items, a rate, a ratio such as F1): each document contributes its count vector, and the stratified
  difference estimator applies to the totals (`scoring.stats.difference`);
- `median`: the cell is the median over documents of a per-document value whose distribution the family gives
  (`document_distribution`): a difference-estimated distribution function (PPI for quantiles) with a stratified
  bootstrap interval (`scoring.stats.quantile`).
"""


Certainty = Literal["agreed", "contradicted"]


def certainty(task: TaskFamily, decision: Mapping) -> Certainty | None:
    """The one rule for certain decisions (issue 40.1), for the queue, agreement and every family: a decision is
    certain (`agreed`: skipping it loses nothing) only where the judge gave the answer the family's `certain_label`
    says it must have; where the judge answered otherwise (`contradicted`) it is the judge's plainest error and is
    served first. None: the decision's answer is not certain.

    >>> from scoring.families.chimera.family import ChimeraTask
    >>> pair = {"kind": "span_pair", "type": "task", "left": "x", "right": "x"}
    >>> certainty(ChimeraTask(), {**pair, "judge": "match"}), certainty(ChimeraTask(), {**pair, "judge": "no-match"})
    ('agreed', 'contradicted')
    """
    answer = task.certain_label(decision)
    if answer is None:
        return None
    return "agreed" if decision.get("judge") == answer else "contradicted"


class TaskFamily(Protocol):
    """What the shell (store, re-scoring, pages, agreement, export, CLI) needs from a benchmark family.

    A family turns its input files into documents, asks its judge for decisions (`decide`), and turns
    per-document counts under effective labels into metrics (`counts`, `metrics`). Every member below is used by
    the shell; `tests/families/test_contract.py` checks that every registered family provides them and
    behaves as the shell assumes. `FamilyBase` holds the members most families share.
    """

    name: str
    """Registry key and CLI task name, e.g. `chimera`."""
    title: str
    """Human name, e.g. `CHIMERA recombination extraction`."""
    label_schemes: Mapping[str, LabelScheme]
    """Decision kinds this family makes, with their label schemes."""
    outcomes: tuple[str, ...]
    """Document outcomes used to filter the document list (e.g. `perfect`, `partial`)."""
    outcomes_hidden_first: tuple[str, ...] = ()
    """Outcomes the document list leaves out until asked (CHIMERA's `true negative`: nothing predicted, nothing to
    review); every other outcome is shown. (The list left out each family's last outcome: retrieval's `below 100`
    and the verdicts' `incorrect`, the documents most worth a look.)"""
    inputs: tuple[InputSpec, ...]
    """The run's input files, in form order."""
    options: tuple[OptionSpec, ...]
    """Scoring options (CLI `--NAME`, stored with the run, passed to `metrics`)."""
    judge_specs: tuple[str, ...]
    """Judge specs offered in the new-run form (first = default). `replay:PATH` is always accepted too."""
    headline: tuple[MetricCell, ...]
    """The few numbers on the overview cards and in the LaTeX table, first = the headline metric."""
    needs_doc_counts: bool
    """True when `metrics` needs every document's counts (bootstrap intervals, medians), not only their sum."""
    doc_noun: Noun
    """What one document is called for people, with its plural and article (`FamilyBase`: `document`)."""
    certain_decisions: str
    """Which decisions `trivial` calls certain, in words; empty when none ever is."""
    unanswered_counts_as: str
    """What a decision whose judge answer is missing counts as in the scores, in words (`not matched`; retrieval:
    `not acceptable`): the warnings of a run scored without some answers say it."""
    replays_judge_logs: bool
    """True when `--judge replay:PATH` (a judge log, `describe_judge_log`) and `improved:ID` can judge a run; False
    for a family whose judge is a fixed algorithm (LitXBench's official matching), whose log is a record only."""
    sampling_own_error_sizes: bool
    """True when a review's effect on a `totals` cell differs by orders of magnitude between documents, so a sampled
    stratum's variance rests on its own documents that differ from the judge (`scoring.stats.estimators.
    stratum_df`): its degrees of freedom count them, and a stratum with none gives no interval yet."""
    sampling_unseen_moves: bool
    """True when the sample estimators give a count that no sampled document moved, but that a review can move, a
    Jeffreys rate of unit moves (`scoring.stats.difference.unseen_moves`; which counts a review can move is found by
    recounting documents under each label, `audit.review.movable`). False for a family whose recount is too dear to
    do on each estimate (LitXBench re-solves a paper's pairing: 57 ms a paper)."""

    def kind_title(self, kind: str) -> str:
        """A decision kind named for people (pages, report, agreement groups)."""
        ...

    def demo_runs(self, data_dir: Path) -> list[DemoRun]:
        """Runs scored from the bundled data (`data/`) on a fresh database."""
        ...

    def load(self, inputs: Mapping[str, str]) -> Loaded:
        """Validate and normalise the input files (paths by `InputSpec.name`).

        Raises:
            InputError: naming file, line (or JSON path) and reason. Nothing is stored when it is raised.
        """
        ...

    def make_judge(self, spec: str, options: JudgeOptions | None = None) -> Judge:
        """The judge transport for a spec, able to answer this family's questions (bound to them, so an LLM
        judge's identity names its prompt before it asks), reached and run with the user's `options`. Every
        judge is built here: the CLI, the new-run form, stability checks and judge-batch alike."""
        ...

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None, progress: Progress | None,
               stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
        """Ask the judge (through the cache) and return one decision per judge question."""
        ...

    def nothing_to_score(self, loaded: Loaded, judge: Judge) -> str | None:
        """Why these inputs, with this judge, give no decision at all (a run of nothing, refused unless stored on
        purpose), or None."""
        ...

    def doc_id(self, doc: Any) -> str: ...

    def payload(self, doc: Any) -> dict:
        """JSON-able form of one document (gold and prediction), stored once per run."""
        ...

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        """Per-document counts (nested dicts of numbers) under the given effective labels."""
        ...

    def redecide(self, payload: Mapping, labels: Labels) -> list[Decision]:
        """Decisions this document needs under these labels that scoring did not make (LitXBench: the item pairs
        of a material pair a reviewer forced). The shell stores the new ones; most families return []."""
        ...

    def moot(self, payload: Mapping, labels: Labels) -> set[tuple[str, str, str, str]]:
        """Decision keys that do not count under these labels (shown, not counted; reviews kept)."""
        ...

    def outcome(self, payload: Mapping, counts: Mapping) -> str: ...

    def metrics(self, total: Mapping, per_doc: Sequence[Mapping] | None = None,
                options: Mapping[str, str] | None = None) -> dict:
        """The family's metrics JSON from counts summed over documents (and each document's, if needed), under the
        run's options (e.g. retrieval's tie policy)."""
        ...

    def metric_rows(self, metrics: Mapping) -> list[dict]:
        """The scores table: one row per section and type, plain column names, numbers only."""
        ...

    def judge_log(self, decisions: Sequence[Any]) -> list[dict]:
        """Replay-format lines for decisions or stored decision rows (one per answered question and order)."""
        ...

    def describe_judge_log(self) -> str:
        """One line on the judge-log format, for `--help` and the docs."""
        ...

    def sampling_stratum(self, decisions: Sequence[Mapping]) -> str:
        """The stratum of one block (a document's decisions) for a partial-audit sampling plan, from judge-side
        information only (kind, type, left, right, judge label, detail; never a human label)."""
        ...

    def sampling_counts(self, counts: Mapping) -> Mapping:
        """One document's (or a sum's) counts as the sample estimators read them: a map that commutes with summing
        and keeps the value of every `totals` headline cell (`metrics` of the mapped sum equals `metrics` of the
        sum). The identity for most families; LitXBench sums its per-paper counts into one paper, so the
        estimators' count vector, its gradient and its covariance have 36 entries, not 36 per paper (#38)."""
        ...

    def gold_key(self, payload: Mapping) -> str:
        """A content hash of one document's gold side: runs of the family share a review only on documents whose
        gold keys agree (a review settles a question, not a run; two runs on different gold never share)."""
        ...

    def question_key(self, payload: Mapping, decision: Mapping) -> str:
        """A content hash of the judge question one decision asks inside its document, the same in every run that
        asks it (CHIMERA: entity type and the unordered span pair; LitXBench: the paired items' content, not their
        paths): within a gold document, runs share the reviews of decisions with the same key."""
        ...

    def question_keys(self, payload: Mapping, decisions: Sequence[Mapping]) -> list[str]:
        """`question_key` of each decision of one document, in order: the same keys, computed once per document
        (a family whose keys hash large shared content reuses it across the document's decisions)."""
        ...

    def sampling_take_all(self, strata: Collection[str]) -> set[str]:
        """Which of a plan's strata the plan reviews whole before sampling (`build_plan(take_all=...)`; the sample
        queue serves them first): a subset of `strata`, from their names only."""
        ...

    def judge_votes(self, decision: Mapping) -> list[str]:
        """The label each judge call of a decision gave, for human-vs-judge agreement: one vote for most kinds (the
        judge label); ideation comparisons vote once per order asked, so a human verdict meets each call."""
        ...

    def certain_label(self, decision: Mapping) -> str | None:
        """The label a decision is certain to have by construction (CHIMERA: two identical strings are a `match`);
        None when its answer is not certain. Read through `certainty`, never alone."""
        ...

    def trivial(self, decision: Mapping) -> bool:
        """A certain decision the judge answered as certain (`certainty(...) == "agreed"`): agreement reports it
        apart and the review queue may skip it; one where the judge contradicted the certain answer is not."""
        ...

    def questions_for(self, payload: Mapping, decision: Mapping) -> list:
        """The judge questions (`scoring.judges.question.Question`, every order asked) behind one stored decision, so
        a stability check can re-ask them; [] for families whose judge is not an LLM."""
        ...

    answer_examples: Mapping[str, Sequence[tuple[tuple[str, ...], str | None]]]
    """Per kind asked of an LLM: answer tuples (in `questions_for`'s order) and the label the paper's rule gives
    them, written apart from `label_from_answers` so the contract battery can hold one against the other."""

    def label_from_answers(self, decision: Mapping, answers: Sequence[str]) -> str | None:
        """The decision label that answers to `questions_for` (in that order) give, comparable with the judge
        label; None when the family has no rule for them (a stability check then shows the answers, joined)."""
        ...

    def sampled_by(self, cell: MetricCell) -> SampledBy | None:
        """How a partial audit estimates this headline cell from a sample of documents (`SampledBy`); None when no
        sampled estimate exists for it. The one declaration the plan, the sample queue and `estimate` read."""
        ...

    def metric_bounds(self, cell: MetricCell) -> tuple[float, float] | None:
        """The range of a cell's value (an estimated interval is clipped to it); None: unbounded."""
        ...

    def document_distribution(self, cell: MetricCell, counts: Mapping,
                              options: Mapping[str, str] | None = None) -> tuple[list[float], list[float]] | None:
        """For a `median` cell: one document's value as (values, probabilities) from its counts (several values
        when the value is random, e.g. a rank inside a tie block), or None when the document is not in the cell's
        population (another subset)."""
        ...

    def median_of_documents(self, cell: MetricCell, dists: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float:
        """For a `median` cell: the cell's value of documents whose values are independent draws from `dists`
        (`document_distribution`'s), by the family's own rule (retrieval: the expected median over tie orders), so
        a sampled estimate targets the number the scorer reports (`scoring.stats.quantile`)."""
        ...

    def board_systems(self, metrics: Mapping) -> list[str]:
        """The systems compared inside one run, read from its metrics (ideation: the systems whose ideas it rates);
        [] for a family where a run is one system (a board then compares runs)."""
        ...

    def board_cells(self, metrics: Mapping) -> tuple[MetricCell, ...]:
        """The metrics a board shows per system: the headline for a run-per-system family; for in-run systems,
        cells read from `system_metrics` (the first is the board's primary metric)."""
        ...

    def system_metrics(self, metrics: Mapping, system: str) -> Mapping:
        """The part of a run's metrics that `board_cells` read for one of its `board_systems`."""
        ...

    view_module: str
    """Import path of the family's dashboard view (`ui/families/__init__.py` lists what it provides)."""

    def aggregate(self, per_doc: Iterable[Mapping] | Callable[[], Iterable[Mapping]],
                  options: Mapping[str, str] | None = None, *, total: Mapping | None = None) -> dict:
        """The metrics of a run from its documents' counts in input order (`FamilyBase.aggregate`)."""
        ...


class FamilyBase:
    """The defaults of `TaskFamily` that most families share: a family inherits them and overrides what differs.

    Every member the shell reads exists here or in the family, so the shell never probes a family with `getattr`.
    """

    name: str
    options: tuple[OptionSpec, ...] = ()
    outcomes_hidden_first: tuple[str, ...] = ()
    needs_doc_counts = False
    doc_noun: Noun = Noun("document")
    """What one document is called on the pages (`abstract`, `paper`, `question`, `query`)."""
    certain_decisions: str = ""
    """In words, which decisions `trivial` calls certain (`two identical strings`); empty: none ever is, and the
    review queue offers no switch to skip them."""
    kind_titles: Mapping[str, str] = MappingProxyType({})
    """Decision kinds' names for people where the kind with spaces does not say it (`span pair (predicted ⇄ gold)`)."""
    answer_examples: Mapping[str, Sequence[tuple[tuple[str, ...], str | None]]] = MappingProxyType({})
    """None: no kind is asked of an LLM (see `TaskFamily.answer_examples`)."""
    replays_judge_logs = True
    """A judge log replays the judge (`TaskFamily.replays_judge_logs`)."""
    unanswered_counts_as = "not matched"
    """`TaskFamily.unanswered_counts_as`."""
    sampling_own_error_sizes = False
    """A sampled stratum with no differing document borrows the error sizes of the others (the Jeffreys hurdle)."""
    sampling_unseen_moves = True
    """Counts the sample never saw move get unit moves (`TaskFamily.sampling_unseen_moves`)."""

    def kind_title(self, kind: str) -> str:
        """A decision kind named for people: `kind_titles`, else the kind with spaces (`material pair`)."""
        return self.kind_titles.get(kind, kind.replace("_", " "))

    def sampling_counts(self, counts: Mapping) -> Mapping:
        """The counts themselves (see `TaskFamily.sampling_counts`)."""
        return counts

    def sampled_by(self, cell: MetricCell) -> SampledBy | None:  # noqa: ARG002 (default)
        """`totals` for every cell when `metrics` needs only the summed counts; else None (the family says which of
        its cells can be estimated)."""
        return None if self.needs_doc_counts else "totals"

    def metric_bounds(self, cell: MetricCell) -> tuple[float, float] | None:
        """The range a cell's value lies in, to which an estimated interval is clipped: [0, 1] for a higher-is-better
        score (F1, MRR, a rate), none for the others (a rank)."""
        return (0.0, 1.0) if cell.higher_is_better else None

    def gold_key(self, payload: Mapping) -> str:
        """The hash of the payload's `gold` (a family whose gold lives elsewhere overrides it)."""
        return content_hash(payload.get("gold"))

    def question_key(self, payload: Mapping, decision: Mapping) -> str:
        """Kind, type, left and right as stored (ids that mean the same in every run on the same gold); an
        unordered pair for a symmetric kind whose labels name no side: `question_keys` of the one decision."""
        return self.question_keys(payload, [decision])[0]

    def question_keys(self, payload: Mapping, decisions: Sequence[Mapping]) -> list[str]:  # noqa: ARG002 (default)
        """`question_key` of each decision (the default key's rule is written here once). The text of each distinct
        (kind, type, right) is spelled once: a retrieval query's 68 candidate decisions share kind, type and positive
        (678,000 decisions at 10,000 queries, #38); the same text as `content_hash` spells, so the same keys."""
        if type(self).question_key is not FamilyBase.question_key:  # a family's own key: asked per decision
            return [self.question_key(payload, d) for d in decisions]
        keys = []
        spelled: dict[tuple, tuple[str, str]] = {}
        for d in decisions:
            kind, type_, left, right = d["kind"], d["type"], d["left"], d["right"]
            scheme = self.label_schemes.get(kind)
            if scheme is not None and scheme.symmetric and not scheme.mirror:
                left, right = sorted([left, right])
            if type(kind) is not str or type(type_) is not str or type(left) is not str or type(right) is not str:
                keys.append(content_hash([kind, type_, left, right]))
                continue
            around = spelled.get((kind, type_, right))
            if around is None:
                around = spelled[(kind, type_, right)] = (
                    "[" + _json_string(kind) + "," + _json_string(type_) + ",", "," + _json_string(right) + "]")
            keys.append(hash_text(around[0] + _json_string(left) + around[1]))
        return keys

    def sampling_take_all(self, strata: Collection[str]) -> set[str]:  # noqa: ARG002 (default)
        """Of a plan's strata (names `sampling_stratum` gave), those to review whole before any is sampled: strata
        where one review can move a headline metric by a jump no sample variance foresees. Default: none."""
        return set()

    def board_systems(self, metrics: Mapping) -> list[str]:  # noqa: ARG002 (default)
        """A run is one system."""
        return []

    def board_cells(self, metrics: Mapping) -> tuple[MetricCell, ...]:  # noqa: ARG002 (default)
        """The headline."""
        return self.headline

    def system_metrics(self, metrics: Mapping, system: str) -> Mapping:
        raise NotImplementedError(f"{self.name} has no systems inside a run (asked for {system!r})")

    def document_distribution(self, cell: MetricCell, counts: Mapping,
                              options: Mapping[str, str] | None = None) -> tuple[list[float], list[float]] | None:
        raise NotImplementedError(f"{self.name} declares no median cell ({'/'.join(cell.path)})")

    def median_of_documents(self, cell: MetricCell, dists: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float:
        raise NotImplementedError(f"{self.name} declares no median cell ({'/'.join(cell.path)})")

    @property
    def view_module(self) -> str:
        """`ui.families.<name>` (a family kept elsewhere, e.g. a test's toy, names its own)."""
        return f"ui.families.{self.name}"

    def metrics(self, total: Mapping, per_doc: Sequence[Mapping] | None = None,
                options: Mapping[str, str] | None = None) -> dict:
        raise NotImplementedError

    def redecide(self, payload: Mapping, labels: Labels) -> list[Decision]:  # noqa: ARG002 (default)
        """[]: the decision set is fixed when the run is scored."""
        return []

    def moot(self, payload: Mapping, labels: Labels) -> set[tuple[str, str, str, str]]:  # noqa: ARG002 (default)
        """No decision stops counting under other labels."""
        return set()

    def judge_votes(self, decision: Mapping) -> list[str]:
        """One vote: the judge label."""
        return [decision["judge"]]

    def certain_label(self, decision: Mapping) -> str | None:  # noqa: ARG002 (default)
        """No decision is certain before it is asked."""
        return None

    def nothing_to_score(self, loaded: Loaded, judge: Judge) -> str | None:  # noqa: ARG002 (default)
        """Inputs that load give something to score."""
        return None

    def trivial(self, decision: Mapping) -> bool:
        """`certainty` says the judge gave the certain answer (families declare `certain_label`, not this)."""
        return certainty(self, decision) == "agreed"

    def questions_for(self, payload: Mapping, decision: Mapping) -> list:  # noqa: ARG002 (default)
        """[]: no LLM answers this family's decisions, so there is nothing to re-ask."""
        return []

    def label_from_answers(self, decision: Mapping, answers: Sequence[str]) -> str | None:  # noqa: ARG002
        """A decision asked once is labelled by its answer; for more questions the family needs its own rule.

        >>> FamilyBase().label_from_answers({}, ["3"]), FamilyBase().label_from_answers({}, ["yes", "no"])
        ('3', None)
        """
        return answers[0] if len(answers) == 1 else None

    def aggregate(self, per_doc: Iterable[Mapping] | Callable[[], Iterable[Mapping]],
                  options: Mapping[str, str] | None = None, *, total: Mapping | None = None) -> dict:
        """The run's metrics from its documents' counts in input order: `metrics` of their sum, given each
        document's counts too when the family `needs_doc_counts`. The one fold from counts to metrics: scoring,
        storing and the audit all call it.

        `total`: the sum, when the caller keeps it up to date (the audit adds and removes reviewed documents'
        counts); `per_doc` may then be a function returning the counts, called only when the family needs them.
        """
        if total is not None and not self.needs_doc_counts:
            return self.metrics(total, None, options)
        docs = list(per_doc() if callable(per_doc) else per_doc)
        if total is None:
            total = sum_nested(docs)
        return self.metrics(total, docs if self.needs_doc_counts else None, options)


_json_string = json.encoder.encode_basestring  # json.dumps's spelling of one string with ensure_ascii=False


def canonical_json(value: object) -> str:
    """JSON-able content spelled one way (sorted keys, no spaces, non-ASCII as is): what `content_hash` hashes.

    A list's text is "[" + its items' texts joined by "," + "]", so a caller may join texts it computed once."""
    if type(value) is list:
        # a list of strings as json.dumps spells it, without building an encoder per call: question keys hash two
        # such lists per decision (1.4M calls at 10,000 retrieval queries, #38)
        try:
            return "[" + ",".join(map(_json_string, value)) + "]"
        except TypeError:  # an item that is not a string
            pass
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def json_list(item_texts: Iterable[str]) -> str:
    """`canonical_json` of a list, from its items' canonical texts."""
    return "[" + ",".join(item_texts) + "]"


def hash_text(text: str) -> str:
    """`content_hash` of the content whose `canonical_json` is `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


RESERVED_KEYS = frozenset({"n", "p", "c", "r"})
"""Keys no label may take: the review queue keeps n (next) and p (back) for itself, and Streamlit refuses c and r as
button shortcuts (the classic card would raise)."""


def content_hash(value: object) -> str:
    """A stable hash of JSON-able content (key order and non-ASCII spelled one way): question and gold keys."""
    return hash_text(canonical_json(value))


def decision_qkeys(fam: TaskFamily, payload: Mapping, decisions: Sequence[Mapping],
                   gold_key: str | None = None) -> list[str]:
    """The keys under which runs share the reviews of one document's decisions: the family, the document's gold
    key and the family's question key (`gold_key`: the document's, when the caller has it already)."""
    gold = gold_key if gold_key is not None else fam.gold_key(payload)
    if type(fam.name) is str and type(gold) is str:  # the text of [name, gold, ...] spelled once per document
        head = "[" + _json_string(fam.name) + "," + _json_string(gold) + ","
        return [hash_text(head + _json_string(q) + "]") if type(q) is str else content_hash([fam.name, gold, q])
                for q in fam.question_keys(payload, decisions)]
    return [content_hash([fam.name, gold, q]) for q in fam.question_keys(payload, decisions)]


def decision_qkey(fam: TaskFamily, payload: Mapping, decision: Mapping, gold_key: str | None = None) -> str:
    """`decision_qkeys` of one decision."""
    return decision_qkeys(fam, payload, [decision], gold_key)[0]


def add_nested(total: dict, part: Mapping, sign: int = 1) -> dict:
    """total += sign * part, for nested dicts of numbers (in place; returns total)."""
    for k, v in part.items():
        kind = type(v)
        # exact-type checks first: the Mapping ABC's isinstance is slow, and a run sums ~20 dicts per document
        if kind is int or kind is float:
            total[k] = total.get(k, 0) + sign * v
        elif kind is dict or isinstance(v, Mapping):
            sub = total.get(k)
            if sub is None:
                sub = total[k] = {}
            add_nested(sub, v, sign)
        else:
            total[k] = total.get(k, 0) + sign * v
    return total


def sum_nested(parts: Iterable[Mapping]) -> dict:
    total: dict = {}
    for p in parts:
        add_nested(total, p)
    return total
