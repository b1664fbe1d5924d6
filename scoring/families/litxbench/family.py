"""LitXBench (materials extraction from alloy papers) as a task family of the shell (see scoring/families/base.py).

The judge is the official algorithm (`official`): decisions are the pairings it chose (and near alternatives a
reviewer may force) and the hallucination check of every predicted number. `counts` re-solves a paper under the
effective labels, so the audited score is the official score of the paper with the reviewed pairs forced or
forbidden. Counts are `{"papers": {paper_id: {...}}}`, so their sum keeps every paper and `metrics` can report
per-paper numbers and the micro aggregate (sum each level's counts over papers, then score) from the sum alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scoring.decisions import Decision
from scoring.errors import InputError, JudgeSpecError
from scoring.families.base import (
    DemoRun,
    FamilyBase,
    InputSpec,
    Labels,
    LabelScheme,
    Loaded,
    MetricCell,
    Noun,
    canonical_json,
    content_hash,
    hash_text,
    json_list,
    sum_nested,
)
from scoring.families.litxbench import review
from scoring.families.litxbench.load import json_files, load_texts, parse_paper, read_json, unknown_steps
from scoring.families.litxbench.model import (
    FOUND,
    KIND_CONFIG,
    KIND_ITEM,
    KIND_MATERIAL,
    KIND_NUMBER,
    MATCH,
    NO_MATCH,
    NOT_FOUND,
    OUTCOMES,
)
from scoring.families.litxbench.score import (
    LEVELS,
    LITXBENCH_VERSION,
    SCORER,
    level_metrics,
    overall_report,
    paper_report,
    sum_levels,
)
from scoring.judges.answer import INVALID, Answer, JudgeStats
from scoring.judges.question import Question
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import AnswerCache, AnswerCallback, Judge, Progress

GOLD_HELP = "Folder of litx-json v1 files, one `<paper_id>.json` per paper (see data/litxbench/README.md)."
PRED_HELP = ("Folder of predicted litx-json v1 files with the gold file names; a gold paper without a file counts "
             "as an empty extraction. The paper's JSON prompt shape (group_measurements, lattice shorthand) is "
             "accepted.")
TEXT_HELP = "Folder of paper texts `<paper_id>.md` for the hallucination check (optional)."
ALL_PAPERS = "(all papers)"
"""The name of the one paper `sampling_counts` leaves (a name only: the summed counts hold no other paper)."""
CORRECTED_NOTE = "corrected variant (NOT official): relative tolerance 1e-3 instead of absolute 1e-6"
_PAIR = LabelScheme("binary", (MATCH, NO_MATCH), positive=MATCH, pairing=True,
                    titles={MATCH: "match", NO_MATCH: "no match"}, keys={MATCH: "a", NO_MATCH: "o"})


class OfficialJudge(Judge):
    """The `official` judge: the LitXBench algorithm itself. It is asked nothing (no model: no judge-batch path);
    `decide` runs the solver."""

    spec = "official"

    def identity(self) -> dict:
        return {"spec": self.spec, "scorer": SCORER, "litxbench_version": LITXBENCH_VERSION}

    def ask_many(self, queries: Sequence[Question], progress: Progress | None = None,  # noqa: ARG002
                 on_answer: AnswerCallback | None = None) -> list[Answer]:  # noqa: ARG002
        return [Answer(INVALID, rationale="the official LitXBench judge answers no questions") for _ in queries]


class LitXBenchTask(FamilyBase):
    """LitXBench / LitXAlloy: materials, process chains, measurements and configurations of alloy papers."""

    name = "litxbench"
    replays_judge_logs = False  # the official matching is the judge: its log records decisions, it is not replayed
    # a recount re-solves the paper's pairing under each label (57 ms a paper, 28 s at 500 papers against `queue
    # --next`'s goal of 1 s): its intervals keep the hurdle variance alone (docs/anytime.md)
    sampling_unseen_moves = False
    title = "LitXBench materials extraction"
    doc_noun = Noun("paper")
    certain_decisions = "identical compositions"
    label_schemes = {
        KIND_MATERIAL: _PAIR, KIND_ITEM: _PAIR, KIND_CONFIG: _PAIR,
        KIND_NUMBER: LabelScheme("binary", (FOUND, NOT_FOUND), positive=FOUND,
                                 titles={FOUND: "in the paper", NOT_FOUND: "not in the paper"},
                                 keys={FOUND: "a", NOT_FOUND: "o"}),
    }
    outcomes = OUTCOMES
    inputs = (InputSpec("gold", "Gold folder", GOLD_HELP, folder=True, suffixes=("json",)),
              InputSpec("pred", "Prediction folder", PRED_HELP, folder=True, suffixes=("json",)),
              InputSpec("text", "Paper texts", TEXT_HELP, required=False, folder=True, suffixes=("md", "txt")))
    judge_specs = ("official",)
    headline = (
        MetricCell(("multi_level", "overall_f1"), "overall F1 (weighted)", "multi-level"),
        MetricCell(("multi_level", "value_f1"), "value F1", "multi-level"),
        MetricCell(("multi_level", "measurement_f1"), "measurement F1", "multi-level"),
        MetricCell(("multi_level", "config_f1"), "configuration F1", "multi-level"),
        MetricCell(("multi_level", "process_f1"), "process F1", "multi-level"),
        MetricCell(("multi_level", "material_f1"), "material F1", "multi-level"),
        MetricCell(("hallucination_rate",), "hallucination rate", "hallucination", higher_is_better=False,
                   unit="share"),
    )

    def demo_runs(self, data_dir: Path) -> list[DemoRun]:
        d = data_dir / "litxbench"
        common = {"gold": str(d / "gold"), "text": str(d / "papers")}
        return [DemoRun("demo-litxbench-drop-meas30", {**common, "pred": str(d / "pred_drop_meas30")}, "official",
                        "gold with 30% of measurements removed per paper (official overall F1 0.9645)",
                        board="demo-litxbench", judge_derived=("official overall F1 0.9645",)),
                DemoRun("demo-litxbench-process-perturb", {**common, "pred": str(d / "pred_process_perturb")},
                        "official", "process steps swapped, dropped, substituted or inserted (official F1 0.9431)",
                        board="demo-litxbench", judge_derived=("official F1 0.9431",))]

    # ------------------------------------------------------------ load / decide

    def load(self, inputs: Mapping[str, str]) -> Loaded:
        gold_files = json_files(inputs["gold"])
        if not gold_files:
            raise InputError(inputs["gold"], None, "no <paper_id>.json files in the gold folder")
        pred_files = json_files(inputs["pred"])
        texts, no_text = load_texts(inputs.get("text") or None, list(gold_files))
        docs, warnings, missing, skipped = [], [], [], []
        for pid, gp in gold_files.items():
            graw = read_json(gp)
            gold_paper = parse_paper(graw, pid, str(gp))
            skipped += unknown_steps(gold_paper)
            if not gold_paper.materials:
                raise InputError(str(gp), None, "the gold paper has no output materials (a gold file lists what "
                                                "the paper reports; leave a paper with nothing out of the gold folder)")
            if not isinstance(graw, list) and isinstance(graw, Mapping):
                graw = graw.get("experiments", graw)
            praw: Any = []
            if pid in pred_files:
                praw = read_json(pred_files[pid])
                skipped += unknown_steps(parse_paper(praw, pid, str(pred_files[pid])))
                if isinstance(praw, Mapping):
                    praw = praw.get("experiments", praw)
            else:
                missing.append(pid)
            docs.append({"paper_id": pid, "gold": graw, "pred": praw, "text": texts.get(pid), "kind_mode": "enum",
                         "has_prediction": pid in pred_files})
        if missing:
            one = len(missing) == 1
            warnings.append(f"{Noun('gold paper').count(len(missing))} {'has' if one else 'have'} no prediction file "
                            f"and {'counts' if one else 'count'} as empty extractions: "
                            + ", ".join(missing[:5]) + (" …" if len(missing) > 5 else ""))
        extra_preds = sorted(set(pred_files) - set(gold_files))
        if extra_preds:
            one = len(extra_preds) == 1
            warnings.append(f"{Noun('prediction file').count(len(extra_preds))} {'names' if one else 'name'} no gold "
                            f"paper and {'is' if one else 'are'} ignored: "
                            + ", ".join(extra_preds[:5]))
        if skipped:
            warnings.append(f"{Noun('process step').count(len(skipped))} {'names' if len(skipped) == 1 else 'name'} "
                            "no synthesis group and, as in the official scorer, "
                            f"{'adds' if len(skipped) == 1 else 'add'} no process event: " + "; ".join(skipped[:5])
                            + (" …" if len(skipped) > 5 else ""))
        # the official scorer reads a missing text as "nothing hallucinated" (rate 0): say it wherever that happens
        if inputs.get("text") and no_text:
            one = len(no_text) == 1
            warnings.append(f"{Noun('paper').count(len(no_text))} {'has' if one else 'have'} no text; "
                            f"{'its numbers are' if one else 'their numbers are'} not checked and count as found "
                            "in the hallucination rate, as the official scorer counts them: "
                            + ", ".join(no_text[:5]))
        elif not inputs.get("text"):
            warnings.append("no paper texts (--text): no number is checked for hallucination, and the hallucination "
                            "rate reads 0, as the official scorer's does without a text")
        return Loaded(docs, warnings, [], {"missing_predictions": missing, "unknown_predictions": extra_preds})

    def make_judge(self, spec: str, options: JudgeOptions | None = None) -> Judge:  # noqa: ARG002 (none applies)
        if spec.strip() != "official":
            raise JudgeSpecError(f"litxbench is scored by its official algorithm (it asks no model); the only judge "
                                 f"spec is 'official' (got {spec!r})")
        return OfficialJudge()

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None, progress: Progress | None,
               stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
        stats = stats or JudgeStats()
        out: list[Decision] = []
        review.forget_ahead()
        for k, payload in enumerate(loaded.docs, 1):
            doc = review.doc_from_payload(payload)
            decisions = review.decisions(doc)
            review.count_ahead(payload, doc, decisions)
            out += decisions
            if progress:
                progress(k, len(loaded.docs))
        stats.distinct_queries += len(out)
        return out, stats

    def doc_id(self, doc: Any) -> str:
        return doc["paper_id"]

    def payload(self, doc: Any) -> dict:
        return dict(doc)

    # ------------------------------------------------------------ aggregate

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        return review.counts_of(payload, labels)

    def redecide(self, payload: Mapping, labels: Labels) -> list[Decision]:
        return review.redecide(review.doc_from_payload(payload), labels)

    def moot(self, payload: Mapping, labels: Labels) -> set[tuple[str, str, str, str]]:
        return review.moot(review.doc_from_payload(payload), labels)

    def certain_label(self, decision: Mapping) -> str | None:
        """A composition item pair whose gold and predicted compositions read the same: the official score of
        identical compositions is 1, so the match is certain.

        >>> LitXBenchTask().certain_label({"kind": "item_pair", "type": "composition",
        ...     "left": "e[0].m[1] composition Nb1 Ti1", "right": "e[0].m[2] composition Nb1 Ti1"})
        'match'
        """
        if decision["kind"] != KIND_ITEM or decision["type"] != "composition":
            return None
        what = [str(decision[side]).split(" ", 1)[1:] for side in ("left", "right")]
        return MATCH if bool(what[0]) and what[0] == what[1] else None

    def outcome(self, payload: Mapping, counts: Mapping) -> str:
        c = counts.get("papers", {}).get(payload["paper_id"], {})
        mat = c.get("material", {})
        if not mat.get("extracted"):
            return "empty prediction"
        if level_metrics(c)["overall"]["f1"] == 1.0:
            return "perfect"
        if mat.get("tp", 0) < mat.get("target", 0):
            return "materials missed"
        return "partial"

    def metrics(self, total: Mapping, per_doc: Sequence[Mapping] | None = None,
                options: Mapping[str, str] | None = None) -> dict:
        return metrics_from_total(total)

    def metric_rows(self, metrics: Mapping) -> list[dict]:
        rows = []
        for section, block in (("multi-level", metrics.get("overall", {}).get("multi_level", {})),
                               ("corrected (not official)", metrics.get("corrected", {}))):
            for lv in (*LEVELS, "overall"):
                v = block.get(lv)
                if not v:
                    continue
                row = {"section": section, "type": lv, "precision": v["precision"], "recall": v["recall"],
                       "f1": v["f1"]}
                if "tp" in v:
                    row.update({"tp": v["tp"], "fp": v["extracted"] - v["tp"], "fn": v["target"] - v["tp"],
                                "target": v["target"], "extracted": v["extracted"]})
                rows.append(row)
        h = metrics.get("overall", {}).get("hallucination")
        if h:
            rows.append({"section": "hallucination", "type": "numbers", "rate": h["hallucination_rate"],
                         "numbers checked": h["total_numbers"], "not in the paper": h["numbers_not_found"]})
        return rows

    def judge_log(self, decisions: Sequence[Any]) -> list[dict]:
        out = []
        for d in decisions:
            get = d.get if isinstance(d, Mapping) else lambda k, _d=d: getattr(_d, k, None)
            out.append({"doc": get("doc") or get("doc_id"), "kind": get("kind"), "type": get("type"),
                        "left": get("left"), "right": get("right"),
                        "label": get("judge") or get("judge_label")})
        return out

    def gold_key(self, payload: Mapping) -> str:
        """The paper and its gold experiments."""
        return content_hash([payload["paper_id"], payload["gold"]])

    def question_key(self, payload: Mapping, decision: Mapping) -> str:
        """A pairing: the content of the predicted and the gold thing (not their paths, which follow the
        prediction's order); a number: its source, its value and the predicted item holding it."""
        return self.question_keys(payload, [decision])[0]

    def question_keys(self, payload: Mapping, decisions: Sequence[Mapping]) -> list[str]:
        """The keys `content_hash` gives [kind, type, content_at(pred, left), content_at(gold, right)] (a number:
        [kind, type, right, content_at(pred, left)]), each content spelled once per document (`review.ContentTexts`:
        spelling it per decision was most of the CPU time of storing a run)."""
        pred, gold = review.ContentTexts(payload["pred"]), review.ContentTexts(payload["gold"])
        keys = []
        for d in decisions:
            head = [canonical_json(d["kind"]), canonical_json(d["type"])]
            if d["kind"] == KIND_NUMBER:  # the value, where the prediction holds it
                parts = [*head, canonical_json(d["right"]), pred.text(d["left"])]
            else:
                parts = [*head, pred.text(review.path_of(d["left"])), gold.text(review.path_of(d["right"]))]
            keys.append(hash_text(json_list(parts)))
        return keys

    def sampling_counts(self, counts: Mapping) -> Mapping:
        """Every paper's counts summed into one (`ALL_PAPERS`): each headline cell is a micro sum over papers, so
        the sample estimators need 36 count paths, not 36 per paper (18,000 at 500 papers, #38)."""
        return {"papers": {ALL_PAPERS: sum_nested((counts.get("papers") or {}).values())}}

    def sampling_stratum(self, decisions: Sequence[Mapping]) -> str:
        """Papers whose solver left pairs unmatched or numbers not found apart from clean ones."""
        if any(d["judge"] in ("no-match", "not-found") for d in decisions):
            return "has-misses"
        return "all-matched"

    def describe_judge_log(self) -> str:
        return ('JSON lines: {"doc", "kind", "type", "left", "right", "label"} — the official algorithm\'s '
                "decisions (material/item/config pairs: match|no-match; numbers: found|not-found)")


def metrics_from_total(total: Mapping) -> dict:
    """The metrics JSON: the reference `expected_*.json` shape (`papers`, `overall`) plus design.md's flat keys."""
    pc: Mapping[str, Mapping] = total.get("papers", {}) if total else {}
    halluc = {pid: c.get("hallucination", {}) for pid, c in pc.items()}
    papers = {pid: paper_report(c, halluc[pid]) for pid, c in pc.items()}
    # each paper's levels computed once, for its report and the macro mean (twice was 8 ms of a 500-paper review, #38)
    overall = overall_report(pc, halluc, levels={pid: r["multi_level"] for pid, r in papers.items()})
    ml = overall["multi_level"]
    out = {"scorer": SCORER, "litxbench_version": LITXBENCH_VERSION, "kind_mode": "enum",
           **{k: overall["measurement_level"][k] for k in ("precision", "recall", "f1", "num_matched_items",
                                                          "num_total_target_items", "num_total_extracted_items")},
           "multi_level": {f"{lv}_f1": ml[lv]["f1"] for lv in LEVELS} | {"overall_f1": ml["overall"]["f1"]},
           "hallucination_rate": overall["hallucination"]["hallucination_rate"],
           "overall": overall, "papers": papers}
    corr = [c["corrected"] for c in pc.values() if "corrected" in c]
    if corr:
        out["corrected"] = {"note": CORRECTED_NOTE, **level_metrics(sum_levels(corr))}
    return out
