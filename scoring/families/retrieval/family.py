"""CHIMERA recombination prediction (retrieval) as a task family of the shell (see scoring/families/base.py).

Documents are queries; the single input is the ranking results file (`pred`). No judge is asked: the benchmark
assumes that only the gold answer is correct (`gold-only`), and a reviewer may accept candidates ranked above the
gold as correct too, which removes them from the ranking (filtered setting). Metrics: chimera.md §5.4 under a tie
policy (`mean` by default; all three policies are reported under `tie_policies`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from scoring.decisions import Decision
from scoring.errors import InputError
from scoring.families.base import (
    DemoRun,
    FamilyBase,
    InputSpec,
    Labels,
    LabelScheme,
    Loaded,
    MetricCell,
    Noun,
    OptionSpec,
    SampledBy,
    content_hash,
)
from scoring.families.retrieval import review
from scoring.families.retrieval.judge import GOLD_ONLY, LOG_FORMAT, make_judge
from scoring.families.retrieval.load import load_rankings
from scoring.families.retrieval.metrics import expected_median
from scoring.families.retrieval.model import (
    ACCEPTABLE,
    DEFAULT_POLICY,
    KIND,
    NOT_ACCEPTABLE,
    TIE_POLICIES,
    TiePolicy,
)
from scoring.judges.answer import JudgeStats
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import AnswerCache, Judge, Progress

GOLD_FIELDS = ("id", "query", "context", "anchor_id", "anchor_text", "relation", "positive_id", "positive")

DEMO_FILE = Path("retrieval") / "demo_rankings.jsonl"
"""The bundled demo run, relative to the data folder (built by scripts/build_retrieval_demo.py)."""
BM25_FILE = "demo_rankings_bm25.jsonl"
"""The demo board's second ranker, beside `DEMO_FILE` (built by scripts/build_retrieval_bm25.py)."""
TAIL_STRATA = ("20-49 above", "50+ above")
"""Queries with 20 or more candidates above the gold: the strata a plan samples (`sampling_take_all`)."""
HIGH_LEVERAGE_STRATA = ("1-2 above", "3-9 above", "10-19 above")
"""The strata a plan reviews whole (`sampling_take_all`); with `TAIL_STRATA`, every stratum of a query with
decisions (`sampling_stratum`)."""


def metrics_with_policy(per_doc: Sequence[Mapping], policy: TiePolicy = DEFAULT_POLICY) -> dict:
    """`{subset: {"n", "mr", "mrr", "hits@K", "median_rank"}}` under one tie policy (`mean`, `optimistic`,
    `pessimistic`) from every query's counts (the top level of `RetrievalTask.metrics` under `--ties POLICY`)."""
    return review.metrics_with_policy(per_doc, policy)


class RetrievalTask(FamilyBase):
    """CHIMERA recombination prediction: ranking metrics of a bi-encoder run, with candidate review."""

    name = "retrieval"
    title = "CHIMERA recombination prediction (ranking)"
    doc_noun = Noun("query", "queries")
    label_schemes = {KIND: LabelScheme(
        "binary", (ACCEPTABLE, NOT_ACCEPTABLE), positive=ACCEPTABLE,
        titles={ACCEPTABLE: "acceptable answer too", NOT_ACCEPTABLE: "not acceptable"})}
    outcomes = review.OUTCOMES
    unanswered_counts_as = "not acceptable"
    inputs = (InputSpec(
        "pred", "Rankings",
        "JSON lines, one ranked query each, as the CHIMERA bi-encoder writes results.json: id, query, context, "
        "anchor_text, relation, positive, positive_id, candidates (ranked ids), candidates_text, positive_index "
        "(0-based), is_cross_domain; optional scores (one per candidate, descending) to see ties, n_candidates and "
        "gold_block for a list cut to its top K.", suffixes=(".jsonl", ".json")),)
    options = (OptionSpec(
        "ties", TIE_POLICIES,
        "rank of a gold that shares its score with other candidates: mean (default: every figure is its expected "
        "value over a uniformly random order within the ties, computed exactly), optimistic (its best rank) or "
        "pessimistic (its worst); all three are reported under tie_policies"),)
    judge_specs = (GOLD_ONLY,)
    headline = (
        MetricCell(("all", "mrr"), "MRR (all)", "all"),
        MetricCell(("all", "hits@10"), "Hits@10 (all)", "all"),
        MetricCell(("all", "median_rank"), "median rank (all)", "all", higher_is_better=False, unit="rank"),
    )
    needs_doc_counts = True
    """The median rank needs every query's rank; the other figures are sums (`sampled_by`)."""
    sampling_own_error_sizes = True
    """An accepted candidate moves a query's 1/rank by about 1/(r(r − 1)) for a gold at rank r: 100× more at rank 25
    than at rank 250, so the tail strata's changes are heavy-tailed and one stratum's errors do not size another's
    (`scoring.stats.estimators.stratum_df`; MRR covered 0.85 at 60 queries without it: bench/README.md as of
    a32f770, "Issue 39" point 4; the coverage now: bench/results/retrieval-partial-audit.md)."""

    def demo_runs(self, data_dir: Path) -> list[DemoRun]:
        path = Path(data_dir) / DEMO_FILE
        if not path.is_file():
            return []
        runs = [DemoRun("demo-retrieval-wordllama", {"pred": str(path)}, GOLD_ONLY,
                        "wordllama zero-shot ranking of CHIMERA's annotated entities (see data/retrieval/SOURCE.md); "
                        "not a system of the paper", board="demo-retrieval")]
        bm25 = path.with_name(BM25_FILE)
        if bm25.is_file():
            runs.append(DemoRun("demo-retrieval-bm25", {"pred": str(bm25)}, GOLD_ONLY,
                                "lexical BM25 ranking (bm25s) of the same queries and candidates (see "
                                "data/retrieval/SOURCE.md); not a system of the paper", board="demo-retrieval"))
        return runs

    def load(self, inputs: Mapping[str, str]) -> Loaded:
        extra = sorted(set(inputs) - {"pred"})
        if extra:
            raise InputError(str(inputs[extra[0]]), None, f"the retrieval task takes only --pred, not --{extra[0]}")
        if not inputs.get("pred"):
            raise InputError("pred", None, "the retrieval task needs --pred (ranking results, JSON lines)")
        lr = load_rankings(inputs["pred"])
        return Loaded(list(lr.queries), lr.warnings, lr.notes)

    def make_judge(self, spec: str, options: JudgeOptions | None = None) -> Judge:
        return make_judge(spec, options)

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None, progress: Progress | None,
               stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
        return review.decide(loaded.docs, judge, cache, progress, stats)

    def gold_key(self, payload: Mapping) -> str:
        """The query's gold side: its id, text and context, the anchor, the relation and the positive (what two
        rankers of the same query share; their candidates and scores are the systems' own). Without it every query
        had one key, so a board's plan drew the whole run as one block and a review settled a candidate's question
        in every query with the same positive."""
        return content_hash([payload.get(k) for k in GOLD_FIELDS])

    def doc_id(self, doc: Any) -> str:
        return doc.id

    def payload(self, doc: Any) -> dict:
        return review.query_to_json(doc)

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        return review.query_counts(review.query_from_json(payload), review.accepted_from_labels(labels))

    def outcome(self, payload: Mapping, counts: Mapping) -> str:  # noqa: ARG002 (protocol)
        return review.outcome(counts)

    def metrics(self, total: Mapping, per_doc: Sequence[Mapping] | None = None,
                options: Mapping[str, str] | None = None) -> dict:
        """Metrics under the run's `ties` option (default `mean`) at the top level, all policies beside them."""
        policy = (options or {}).get("ties") or DEFAULT_POLICY
        if policy not in TIE_POLICIES:
            raise InputError("--ties", None, f"tie policy must be one of {', '.join(TIE_POLICIES)}, got {policy!r}")
        return review.metrics_from_counts(total, per_doc, policy)  # type: ignore[arg-type]

    def metric_rows(self, metrics: Mapping) -> list[dict]:
        return review.metric_rows(metrics)

    def sampled_by(self, cell: MetricCell) -> SampledBy | None:
        """MR, MRR and Hits@K are means over queries of a per-query figure the counts sum (`rank`, `rr`,
        `hits@K` over `n`): `totals`. The median rank needs every query's rank: `median`."""
        return "median" if cell.path[-1] == "median_rank" else "totals"

    def document_distribution(self, cell: MetricCell, counts: Mapping,
                              options: Mapping[str, str] | None = None) -> tuple[list[float], list[float]] | None:
        """The gold's rank in one query under the cell's tie policy (`tie_policies/POLICY/...`, else the run's):
        uniform over its tie block under `mean`, one rank otherwise; None for a query outside the cell's subset."""
        path = cell.path
        policy = path[1] if path[0] == "tie_policies" else (options or {}).get("ties") or DEFAULT_POLICY
        subset = path[-2]
        if subset not in counts:
            return None
        lo, hi = review.rank_span(counts[subset], policy)  # type: ignore[arg-type]
        return [float(r) for r in range(lo, hi + 1)], [1 / (hi - lo + 1)] * (hi - lo + 1)

    def median_of_documents(self, cell: MetricCell, dists: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float:
        """`expected_median` of the queries' rank ranges (a `document_distribution` is uniform over one)."""
        return expected_median([(int(v[0]), int(v[-1])) for v, _ in dists])

    def judge_log(self, decisions: Sequence[Any]) -> list[dict]:
        return review.judge_log_records(decisions)

    def sampling_stratum(self, decisions: Sequence[Mapping]) -> str:
        """Queries by how many candidates sit above the gold (or tie with it): the review burden and the leverage of
        a review. `1-2 above`: an accepted candidate moves 1/rank most; `10-19 above`: where it can move Hits@10;
        `20-49` and `50+ above`: many decisions, little change to MRR or Hits@10. The tail is split because its
        MRR change is skewed towards the shallower queries (demo: 21 of 191 tail queries carry two thirds of it);
        one `20+ above` stratum drew too few of them: MRR covered 0.64 at 60 documents, 0.79-0.89 split
        (bench/README.md as of a32f770, "Sampled estimates for every family")."""
        n = len(decisions)
        if n == 0:
            return "none above"
        few, some, near = HIGH_LEVERAGE_STRATA
        shallow, deep = TAIL_STRATA
        return few if n < 3 else some if n < 10 else near if n < 20 else shallow if n < 50 else deep

    def sampling_take_all(self, strata: Collection[str]) -> set[str]:
        """`HIGH_LEVERAGE_STRATA`: every stratum of a query with decisions but `TAIL_STRATA`, the ones where one
        review can move MRR or Hits@10 by a large, rare jump. An accepted candidate above a gold at rank r lifts its
        1/r by 1/(r(r−1)) (0.5 at rank 2, 0.011 at rank 10, under 0.003 past 20), and a gold 11th-20th can cross
        into the top 10 (Hits@10 moves by a whole query). Sampled, their few draws miss the jumps: with a
        proportional allocation MRR covered 0.67 and Hits@10 0.32-0.55 on the demo (bench/README.md as of a32f770,
        "Sampled estimates for every family"). They are cheap: 45 of 252 demo queries, 350 of 17,217 decisions; only
        the 20+ above strata are sampled, where a review moves MRR by little and Hits@10 almost never."""
        return set(HIGH_LEVERAGE_STRATA) & set(strata)

    def describe_judge_log(self) -> str:
        return LOG_FORMAT
