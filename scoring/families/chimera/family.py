"""CHIMERA recombination extraction as a task family of the shell (see scoring/families/base.py)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from scoring.decisions import Decision
from scoring.families.base import (
    DemoRun,
    FamilyBase,
    InputSpec,
    Labels,
    LabelScheme,
    Loaded,
    MetricCell,
    Noun,
    content_hash,
)
from scoring.families.chimera import sampling as chimera_sampling
from scoring.families.chimera import scorer as chimera
from scoring.families.chimera import strict
from scoring.families.chimera.questions import bind_judge, read_log_line, span_question
from scoring.judges.answer import JudgeStats
from scoring.judges.registry import JudgeOptions, parse_judge_spec
from scoring.judges.transport import AnswerCache, Judge, Progress

GOLD_HELP = ("CHIMERA CSV with `paper_id`, `text`, `readable_relations` (and `entities` offsets for highlighting, "
             "`document_class`).")
PRED_HELP = ('JSON lines, one per abstract: `{"paper_id": "2105.13065", "relations": {"combination": '
             '[{"comb-element": ["span A", "span B"]}]}}`; `{}` = no recombination. Or a CSV with '
             '`paper_id`, `readable_relations`.')
BOARD_SYSTEMS = (
    ("mixed", "sample predictions (missed recombinations, dropped or replaced spans, swapped types, false alarms)"),
    ("verbose", "a simulated verbose extractor (spans widened or shortened to content words, extra elements, false "
                "alarms; scripts/build_chimera_systems.py)"),
    ("terse", "a simulated terse extractor (spans cut to their first words, missed entities and recombinations, "
              "wrong relation types; scripts/build_chimera_systems.py)"))
"""The demo board's systems: (prediction file `pred_<name>.jsonl`, what it is)."""
SECTION_TITLES = {"classification": "classification", "entities": "entities", "relations": "relations"}


class ChimeraTask(FamilyBase):
    """CHIMERA recombination extraction (see scoring/families/chimera/scorer.py)."""

    name = "chimera"
    title = "CHIMERA recombination extraction"
    doc_noun = Noun("abstract", article="an")
    certain_decisions = "two identical strings"
    # the paper's rule (chimera.md): a span pair matches iff the judge says yes in both span orders
    answer_examples = MappingProxyType({chimera.KIND: (
        (("yes", "yes"), "match"), (("yes", "no"), "no-match"), (("no", "yes"), "no-match"),
        (("no", "no"), "no-match"), (("yes", "invalid"), "invalid"), (("invalid", "no"), "no-match"),
        (("missing", "yes"), "invalid"))})
    kind_titles = MappingProxyType({chimera.KIND: "span pair (predicted ⇄ gold)"})
    label_schemes = {chimera.KIND: LabelScheme(
        "binary", ("match", "no-match"), positive="match", symmetric=True,
        titles={"match": "match", "no-match": "no match"}, keys={"match": "a", "no-match": "o"})}
    outcomes = chimera.OUTCOMES
    outcomes_hidden_first = ("true negative",)
    inputs = (InputSpec("gold", "Gold file", GOLD_HELP, suffixes=("csv",)),
              InputSpec("pred", "Prediction file", PRED_HELP, suffixes=("jsonl", "json", "csv")))
    judge_specs = ("exact", "fuzzy", "embed", "openai:gpt-4o-mini", "openai-json:gpt-4o-mini")
    headline = (MetricCell(("classification", "avg", "f1"), "classification F1 (macro avg)", "classification",
                           reviewable=False),
                MetricCell(("entities", "avg", "f1"), "entity F1 (macro avg)", "entities"),
                MetricCell(("relations", "avg", "f1"), "relation F1 (macro avg)", "relations"))

    def demo_runs(self, data_dir: Path) -> list[DemoRun]:
        d = data_dir / "chimera"
        return [DemoRun("demo-chimera-mixed", {"gold": str(d / "eval.csv"), "pred": str(d / "pred_mixed.jsonl")},
                        f"replay:{d / 'judge_mixed.jsonl'}",
                        "sample predictions judged by a SYNTHETIC judge log (its answers to unequal spans are random)"),
                DemoRun("demo-chimera-smollm2", {"gold": str(d / "eval.csv"), "pred": str(d / "pred_mixed.jsonl")},
                        f"replay:{d / 'judge_smollm2_structured.jsonl'}",
                        "sample predictions judged by a real but very weak LLM: SmolLM2-135M-Instruct, structured "
                        "answers (openai-json:smollm2-135m, prompt chimera-span-comparison-json 13bd4d51dfa0)"),
                DemoRun("demo-chimera-smollm2-few-shot",
                        {"gold": str(d / "eval.csv"), "pred": str(d / "pred_smollm2_reviewed.jsonl")},
                        f"replay:{d / 'judge_smollm2_few-shot.jsonl'}",
                        "the same SmolLM2 judge improved by few-shot examples from reviews (improve-judge, on the "
                        "6 reviewed abstracts it lists; the rest have no prediction): each abstract answered by the "
                        "judge fitted without it; the Improve the judge page shows the result, measured on the real "
                        "server", improvement=str(d / "improve_smollm2_few-shot.json")),
                *(DemoRun(f"demo-chimera-fuzzy-{system}", {"gold": str(d / "eval.csv"),
                                                           "pred": str(d / f"pred_{system}.jsonl")},
                          "fuzzy", f"{what}; judged by the offline fuzzy judge (RapidFuzz ratio >= 85), the one judge "
                          "of the demo board's three systems (see data/chimera/SOURCE.md)", board="demo-chimera")
                  for system, what in BOARD_SYSTEMS)]

    def load(self, inputs: Mapping[str, str]) -> Loaded:
        gold, pred = inputs["gold"], inputs["pred"]
        docs = chimera.load_gold(gold)
        lp = chimera.load_predictions(pred, [d.paper_id for d in docs])
        warnings = []
        if lp.missing:
            shown = ", ".join(lp.missing[:5]) + (" …" if len(lp.missing) > 5 else "")
            one = len(lp.missing) == 1
            warnings.append(f"{Noun('gold paper').count(len(lp.missing))} {'has' if one else 'have'} no prediction in "
                            f"{Path(pred).name} and {'counts' if one else 'count'} as 'no recombination': {shown}")
        return Loaded([(d, lp.predictions[d.paper_id]) for d in docs], warnings, lp.notes,
                      {"missing_predictions": lp.missing})

    def make_judge(self, spec: str, options: JudgeOptions | None = None) -> Judge:
        """Any transport kind (`scoring.judges.registry.KINDS`), bound to CHIMERA's span question; a replay log
        is read in CHIMERA's span-line format."""
        return bind_judge(parse_judge_spec(spec, read_log_line=read_log_line, options=options))

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None, progress: Progress | None,
               stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
        docs = [d for d, _ in loaded.docs]
        preds = {d.paper_id: p for d, p in loaded.docs}
        return chimera.decide(docs, preds, judge, cache, progress, stats)

    def judge_log(self, decisions: Sequence[Any]) -> list[dict]:
        return chimera.judge_log_records(decisions)

    def describe_judge_log(self) -> str:
        return ('JSON lines: {"paper_id", "entity_type", "span1", "span2", "answer": "yes"|"no"} — one per span '
                'order asked')

    def doc_id(self, doc: Any) -> str:
        return doc[0].paper_id

    def payload(self, doc: Any) -> dict:
        return chimera.doc_to_json(*doc)

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        d, p = chimera.doc_from_json(payload)
        by_pair = {(t, left, right): lab for (_, t, left, right), lab in labels.items()}
        return chimera.doc_counts(d, p, chimera.match_fn_from_labels(by_pair))

    def gold_key(self, payload: Mapping) -> str:
        """The abstract, its class and its gold entities and relations."""
        return content_hash([payload["paper_id"], payload["text"], payload.get("document_class"), payload["gold"]])

    def question_key(self, payload: Mapping, decision: Mapping) -> str:
        """Entity type and the unordered span pair: (x, y) and (y, x) are one question."""
        return content_hash([decision["kind"], decision["type"], sorted([decision["left"], decision["right"]])])

    def sampling_stratum(self, decisions: Sequence[Mapping]) -> str:
        return chimera_sampling.stratum(decisions)

    def sampling_take_all(self, strata: Collection[str]) -> set[str]:
        """The rare-type strata (`inspiration/…`, documents with `RARE_TYPES` entities): one wrong decision there
        moves macro entity F1 4-5× an ordinary one (0.014 on the demo), and a plan that samples them under-covers
        when the judge errs there (the `no take-all` rows of bench/results/smoothing-coverage.md); reviewing them
        whole first repairs it (its `stratified` rows)."""
        return {h for h in strata if h.startswith("inspiration/")}

    def certain_label(self, decision: Mapping) -> str | None:
        """Two identical strings are a match."""
        return "match" if chimera_sampling.trivial(decision) else None

    def outcome(self, payload: Mapping, counts: Mapping) -> str:
        d, p = chimera.doc_from_json(payload)
        return chimera.outcome(d, p, counts)  # type: ignore[arg-type]

    def metrics(self, total: Mapping, per_doc: Sequence[Mapping] | None = None,
                options: Mapping[str, str] | None = None) -> dict:
        full = chimera.sum_counts([total]) if total else chimera.empty_counts()
        return chimera.metrics_from_counts(full)

    def metric_rows(self, metrics: Mapping) -> list[dict]:
        """Paper-code rows per section and type, then the strict 1-to-1 variant's rows (sections `entities (strict
        1-to-1)`, `relations (strict 1-to-1)`) when the metrics have them: beside the paper's, never instead."""
        rows = []
        parts = [(section, metrics.get(section, {})) for section in chimera.SECTIONS]
        parts += [(strict.SECTION_TITLES[s], metrics.get(strict.STRICT, {}).get(s, {})) for s in strict.STRICT_SECTIONS]
        for section, per_type in parts:
            for t, v in per_type.items():
                rows.append({"section": section, "type": "macro average" if t == "avg" else t,
                             "precision": v["precision"], "recall": v["recall"], "f1": v["f1"],
                             "tp": v.get("tp"), "fp": v.get("fp"), "fn": v.get("fn")})
        return rows

    def questions_for(self, payload: Mapping, decision: Mapping) -> list:
        """The two span questions of a span-pair decision, left span first then right span first (the order
        of `detail.pred_gold` / `detail.gold_pred`), rendered with the paper's prompt over the stored abstract."""
        doc_id, text = payload["paper_id"], payload["text"]
        t, left, right = decision["type"], decision["left"], decision["right"]
        return [span_question(doc_id, text, t, left, right), span_question(doc_id, text, t, right, left)]

    def label_from_answers(self, decision: Mapping, answers: Sequence[str]) -> str:  # noqa: ARG002 (protocol)
        """The decision label the answers to `questions_for` (in that order) give: match iff both are yes."""
        return chimera.label_from_answers(*answers)
