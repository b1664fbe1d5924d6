"""Ideation (absolute ratings and pairwise comparisons of research ideas) as a task family of the shell.

Documents are research questions; decisions and counts are in `decide.py`, the scores in `scores.py`
(docs: ideation.md; the target paper's prompts and numbers could not be obtained, so nothing here claims to
reproduce them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
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
from scoring.families.ideation import decide as dec
from scoring.families.ideation import scores
from scoring.families.ideation.bootstrap import N_RESAMPLES, SEED
from scoring.families.ideation.judge import FILE, LOG_FORMAT, LogJudge, ask_live, make_judge
from scoring.families.ideation.load import (
    check_orientation,
    load_absolute,
    load_ideas,
    load_judge_log,
    load_pairwise,
)
from scoring.families.ideation.model import (
    COMPARISON,
    RATING,
    SCORE_LABELS,
    SPLIT,
    WIN_A,
    WIN_B,
    WIN_TIE,
    pools_of,
)
from scoring.judges.answer import JudgeStats
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import AnswerCache, Judge, Progress

IDEAS_HELP = ('JSON lines, one idea per system and question: {"question_id", "question", "system", "idea"} '
              "(other fields are kept and shown).")
ABSOLUTE_HELP = ('JSON lines, the judge\'s 1-5 ratings: {"question_id", "system", "criterion", "score": 1-5 or null '
                 '(unreadable), "rationale", "raw"}.')
PAIRWISE_HELP = ('JSON lines, the judge\'s pairwise calls, each pair in both orders: {"question_id", "criterion", '
                 '"first", "second", "verdict": "first"|"second"|"tie"|"invalid", "rationale", "raw"}; first/second '
                 "are the systems in the order the judge saw them.")
BOUNDS_HELP = ("pairwise normalisation, S being the idea's wins minus losses over its calls: fixed = 3 + S/(N-1) with "
               "N the ideas of its question, invalid calls count 0 (pulls toward 3); valid = 3 + 2S/n over the "
               "idea's n valid calls")


def _options(options: Mapping[str, str] | None) -> str:
    bounds = (options or {}).get("bounds", "fixed")
    if bounds not in scores.BOUNDS:
        raise InputError("--bounds", None, f"bounds must be one of {', '.join(scores.BOUNDS)}, got {bounds!r}")
    return bounds


def _first(row: Mapping, key: str) -> Any:
    return row[key] if isinstance(row, Mapping) else getattr(row, key)


class IdeationTask(FamilyBase):
    """Research ideas rated 1-5 per criterion and compared pairwise in both orders (see decide.py, scores.py)."""

    name = "ideation"
    title = "Scientific ideation (absolute ratings and pairwise comparisons)"
    doc_noun = Noun("question")
    # a rating is its one answer; the two orders of a comparison have no joint label of their own (ideation.md:
    # both orders are votes, counted apart)
    answer_examples = MappingProxyType({RATING: ((("1",), "1"), (("5",), "5")), COMPARISON: ((("a", "b"), None),)})
    label_schemes = {
        RATING: LabelScheme("ordinal", SCORE_LABELS, titles={"1": "1 (worst)", "5": "5 (best)"},
                            keys={s: s for s in SCORE_LABELS}),
        COMPARISON: LabelScheme("categorical", (WIN_A, WIN_B, WIN_TIE), judge_only=(SPLIT,), symmetric=True,
                                mirror={WIN_A: WIN_B, WIN_B: WIN_A},
                                titles={WIN_A: "idea a better", WIN_B: "idea b better", WIN_TIE: "tie",
                                        SPLIT: "split (the order changed the verdict)"},
                                keys={WIN_A: "a", WIN_B: "b", WIN_TIE: "t"}),
    }
    outcomes = ("clean", "split", "invalid")
    unanswered_counts_as = "invalid: a rating left out of the mean, a call 0 under the fixed normalisation"
    inputs = (InputSpec("ideas", "Ideas", IDEAS_HELP, suffixes=("jsonl",)),
              InputSpec("absolute", "Absolute ratings", ABSOLUTE_HELP, required=False, suffixes=("jsonl",)),
              InputSpec("pairwise", "Pairwise verdicts", PAIRWISE_HELP, required=False, suffixes=("jsonl",)))
    options = (OptionSpec("bounds", scores.BOUNDS, BOUNDS_HELP),)
    judge_specs = (FILE,)
    headline = (
        MetricCell(("summary", "absolute", "novelty"), "novelty, absolute mean (first system)", "absolute"),
        MetricCell(("summary", "pairwise", "novelty"), "novelty, pairwise score (first system)", "pairwise"),
        MetricCell(("summary", "consistency_rate"), "pairwise consistency (both orders agree)", "position bias",
                   unit="share"),
        MetricCell(("summary", "rating_invalid_rate"), "invalid ratings", "absolute", higher_is_better=False,
                   unit="share"),
    )
    needs_doc_counts = True
    n_resamples = N_RESAMPLES
    seed = SEED

    # ------------------------------------------------------------------ inputs

    def demo_runs(self, data_dir: Path) -> list[DemoRun]:
        d = data_dir / "ideation"
        return [DemoRun(
            "demo-ideation-si2024-humans",
            {"ideas": str(d / "demo_ideas.jsonl"), "absolute": str(d / "demo_absolute.jsonl"),
             "pairwise": str(d / "demo_pairwise.jsonl")}, FILE,
            "NOT an LLM judge: Si et al. (2024) human review scores stand in for it. Ideas are titles only (texts "
            "not released); ratings = each idea's first reviewer, 1-10 mapped to 1-5 as ceil(s/2); pairwise calls "
            "derived from reviewer 1 (a shown first) and reviewer 2 (b shown first), so 'position bias' here "
            "measures reviewer disagreement. The other reviewers' ratings are imported as human reviews (blind), "
            "so agreement shows the human-human ceiling. See data/ideation/SOURCE.md.",
            reviews=str(d / "demo_human_reviews.jsonl"), board="demo-ideation")]

    def load(self, inputs: Mapping[str, str]) -> Loaded:
        questions = load_ideas(inputs["ideas"])
        pools = pools_of(questions)
        ratings = load_absolute(inputs["absolute"], pools) if inputs.get("absolute") else None
        verdicts = load_pairwise(inputs["pairwise"], pools) if inputs.get("pairwise") else None
        docs = dec.attach(questions, ratings, verdicts)
        loaded = Loaded(docs)  # type: ignore[arg-type]
        self._describe(loaded)
        return loaded

    def _describe(self, loaded: Loaded) -> None:
        docs: list[dec.IdeationDoc] = loaded.docs
        n_q = len(docs)
        single = sum(len(d.question.ideas) == 1 for d in docs)
        abs_c = docs[0].absolute_criteria if docs else ()
        pair_c = docs[0].pairwise_criteria if docs else ()
        missing_r = sum(len(d.question.ideas) * len(abs_c) - len(d.ratings) for d in docs)
        missing_c = sum(len(d.question.ideas) * (len(d.question.ideas) - 1) * len(pair_c) - len(d.calls) for d in docs)
        if missing_r:
            loaded.warnings.append(f"{Noun('rating').count(missing_r)} (question x idea x criterion) "
                                   f"{'is' if missing_r == 1 else 'are'} not in the absolute ratings and "
                                   f"{'counts' if missing_r == 1 else 'count'} as invalid")
        if missing_c:
            loaded.warnings.append(f"{Noun('pairwise call').count(missing_c)} (question x criterion x ordered pair) "
                                   f"{'is' if missing_c == 1 else 'are'} not in the pairwise verdicts and "
                                   f"{'counts' if missing_c == 1 else 'count'} as invalid")
        if single and pair_c:
            loaded.warnings.append(scores.single_idea_note(single))
        if not abs_c and not pair_c:
            loaded.warnings.append("no judge ratings given (absolute or pairwise): nothing to score")
        sizes = sorted({len(d.question.ideas) for d in docs})
        loaded.notes.append(f"{Noun('question').count(n_q)}, pool sizes {sizes}; absolute criteria {list(abs_c)}, "
                            f"pairwise criteria {list(pair_c)}")
        loaded.extra.update({"questions": n_q, "absolute_criteria": list(abs_c), "pairwise_criteria": list(pair_c),
                             "missing_ratings": missing_r, "missing_calls": missing_c})

    def make_judge(self, spec: str, options: JudgeOptions | None = None) -> Judge:
        return make_judge(spec, options)

    def nothing_to_score(self, loaded: Loaded, judge: Judge) -> str | None:
        """The file judge reads the ratings given with the ideas: with none given, there is nothing to score (a
        replayed log or a live LLM judge brings its own)."""
        if judge.spec == FILE and not loaded.extra.get("absolute_criteria") and not loaded.extra.get(
                "pairwise_criteria"):
            return "no judge ratings were given (neither absolute ratings nor pairwise verdicts, nor a judge to ask)"
        return None

    def decide(self, loaded: Loaded, judge: Judge, cache: AnswerCache | None, progress: Progress | None,
               stats: JudgeStats | None = None) -> tuple[list[Decision], JudgeStats]:
        """Decisions from the judge's recorded answers (input files, or a replayed log that replaces them).

        A `replay:PATH` judge re-attaches each document's ratings and calls from the log, in place.
        """
        stats = stats or JudgeStats()
        docs: list[dec.IdeationDoc] = loaded.docs
        if isinstance(judge, LogJudge):
            questions = [d.question for d in docs]
            ratings, verdicts = load_judge_log(judge.path, pools_of(questions))
            check_orientation(verdicts, [c for d in docs for c in d.calls.values()], judge.path)
            loaded.docs[:] = dec.attach(questions, ratings or None, verdicts or None)
            loaded.warnings.clear()
            self._describe(loaded)
            docs = loaded.docs
        live = judge.cacheable and not isinstance(judge, LogJudge)
        if isinstance(judge, LogJudge):
            pass
        elif live:  # a live LLM judge: our prompts, both orders, re-ask once
            questions = [d.question for d in docs]
            ratings, verdicts = ask_live(questions, judge, cache, stats, progress)
            loaded.docs[:] = dec.attach(questions, ratings or None, verdicts or None)
            loaded.warnings.clear()
            self._describe(loaded)
            docs = loaded.docs
        elif judge.spec != FILE:
            raise InputError(judge.spec, None,
                             "the ideation task reads its judge's answers from files, a replay log or openai:MODEL")
        out: list[Decision] = []
        for i, d in enumerate(docs, 1):
            out.extend(dec.decisions(d))
            if progress:
                progress(i, len(docs))
        ratings_n = sum(d.kind == RATING for d in out)
        calls = [c for d in out if d.kind == COMPARISON for c in d.detail["calls"]]
        if live:  # ask_with_cache counted the questions, invalid and missing answers as they came
            return out, stats
        stats.distinct_queries += ratings_n + len(calls)
        stats.paper_calls += ratings_n + len(calls)
        stats.invalid += sum(d.kind == RATING and d.detail["status"] == "invalid" for d in out)
        stats.invalid += sum(c["verdict"] == "invalid" for c in calls)
        stats.missing += sum(d.kind == RATING and d.detail["status"] == dec.MISSING for d in out)
        stats.missing += sum(c["verdict"] == dec.MISSING for c in calls)
        return out, stats

    def doc_id(self, doc: Any) -> str:
        return doc.question.question_id

    def payload(self, doc: Any) -> dict:
        return dec.to_payload(doc)

    # ------------------------------------------------------------------ scoring

    def counts(self, payload: Mapping, labels: Labels) -> dict:
        return dec.doc_counts(payload, self._stored_orientation(payload, labels))

    def _stored_orientation(self, payload: Mapping, labels: Labels) -> Labels:
        """Comparison labels keyed (b, a) moved to the pair's stored key (a, b), their side swapped (a <-> b)."""
        pairs = set(dec.unordered_pairs([i["system"] for i in payload["ideas"]]))
        scheme = self.label_schemes[COMPARISON]
        out = dict(labels)
        for (kind, c, left, right), label in labels.items():
            if kind == COMPARISON and (left, right) not in pairs and (right, left) in pairs:
                del out[(kind, c, left, right)]
                out.setdefault((kind, c, right, left), scheme.swapped(label))
        return out

    def outcome(self, payload: Mapping, counts: Mapping) -> str:  # noqa: ARG002 (protocol)
        return dec.doc_outcome(counts)

    def metrics(self, total: Mapping, per_doc: Sequence[Mapping] | None = None,
                options: Mapping[str, str] | None = None) -> dict:
        """The metrics JSON of `scores.ideation_scores`, rebuilt from per-question counts.

        Intervals need `per_doc` (questions are resampled); with only `total` they are None.
        """
        bounds = _options(options)
        n_res = self.n_resamples if per_doc is not None else 0
        docs = list(per_doc) if per_doc is not None else []
        out: dict = {"absolute": {}, "pairwise": {}, "position_bias": {}, "win_rates": {}, "bounds": bounds,
                     "notes": []}
        for system, row in total.get("absolute", {}).items():
            for c, t in row.items():
                cells = [d["absolute"][system][c] for d in docs if system in d.get("absolute", {})]
                if per_doc is None:
                    cells = [t]
                out["absolute"].setdefault(system, {})[c] = scores.absolute_cell(
                    [x["sum"] for x in cells], [x["n_valid"] for x in cells], t["n_invalid"],
                    n_resamples=n_res, seed=self.seed)
        for system, row in total.get("pairwise", {}).items():
            for c, t in row.items():
                if per_doc is None:
                    q = t[f"q_{bounds}"]
                    cell = scores.pairwise_cell([], t["n_invalid"])
                    cell.update(score=t.get(bounds, 0) / q if q else None, n_questions=q)
                else:
                    vals = [d["pairwise"][system][c].get(bounds) for d in docs if system in d.get("pairwise", {})]
                    cell = scores.pairwise_cell(vals, t["n_invalid"], n_resamples=n_res, seed=self.seed)
                out["pairwise"].setdefault(system, {})[c] = cell
        for c, t in total.get("position_bias", {}).items():
            out["position_bias"][c] = scores.bias_summary(t, tests=per_doc is not None)
        for c, by in total.get("wins", {}).items():
            out["win_rates"][c] = {me: {other: scores.win_rate_cell(t["wins"], t["losses"], t["ties"])
                                        for other, t in row.items()} for me, row in by.items()}
        if total.get("single_idea") and total.get("position_bias"):
            out["notes"].append(scores.single_idea_note(total["single_idea"]))
        out["summary"] = scores.summary(out)
        return out

    def sampled_by(self, cell: MetricCell) -> SampledBy | None:
        """Every figure but the bootstrap intervals is a function of the summed counts (`metrics(total)`): mean
        rating = Σ sum / Σ n_valid, pairwise score = Σ normalised score / Σ q, win rate, consistency and invalid
        rates = ratios of summed tallies. So a question contributes its count vector and the difference estimator
        applies."""
        return None if cell.path[-1] == "ci" else "totals"

    def metric_bounds(self, cell: MetricCell) -> tuple[float, float] | None:
        """Absolute means and pairwise scores lie on the 1-5 scale; rates in [0, 1]."""
        if any(part in ("absolute", "pairwise") for part in cell.path):
            return (1.0, 5.0)
        return (0.0, 1.0)

    def board_systems(self, metrics: Mapping) -> list[str]:
        """The systems whose ideas the run rates or compares, in the metrics' order."""
        return list(dict.fromkeys([*metrics.get("absolute", {}), *metrics.get("pairwise", {})]))

    def board_cells(self, metrics: Mapping) -> tuple[MetricCell, ...]:
        """Per criterion the mean absolute rating, then per criterion the pairwise score, read from
        `system_metrics` (the first criterion's mean rating is the board's primary metric, as in the headline)."""
        def criteria(section: str) -> list[str]:
            return list(dict.fromkeys(c for row in metrics.get(section, {}).values() for c in row))

        return (*(MetricCell(("absolute", c, "mean"), f"{c}, absolute mean", "absolute")
                  for c in criteria("absolute")),
                *(MetricCell(("pairwise", c, "score"), f"{c}, pairwise score", "pairwise")
                  for c in criteria("pairwise")))

    def system_metrics(self, metrics: Mapping, system: str) -> Mapping:
        """{"absolute": {criterion: cell}, "pairwise": {criterion: cell}} of one system."""
        return {"absolute": metrics.get("absolute", {}).get(system, {}),
                "pairwise": metrics.get("pairwise", {}).get(system, {})}

    def metric_rows(self, metrics: Mapping) -> list[dict]:
        """One row per system x criterion: absolute mean and interval, pairwise score and interval, counts."""
        rows = []
        absolute, pairwise = metrics.get("absolute", {}), metrics.get("pairwise", {})
        for system in dict.fromkeys([*absolute, *pairwise]):
            crits = dict.fromkeys([*absolute.get(system, {}), *pairwise.get(system, {})])
            for c in crits:
                a, p = absolute.get(system, {}).get(c, {}), pairwise.get(system, {}).get(c, {})
                a_ci, p_ci = a.get("ci") or [None, None], p.get("ci") or [None, None]
                # column names are what the Scores table, the change strip and the LaTeX export print
                rows.append({"section": system, "type": c, "absolute mean": a.get("mean"),
                             "absolute 95% low": a_ci[0], "absolute 95% high": a_ci[1],
                             "valid ratings": a.get("n_valid"), "invalid ratings": a.get("n_invalid"),
                             "pairwise score": p.get("score"),
                             "pairwise 95% low": p_ci[0], "pairwise 95% high": p_ci[1],
                             "questions": p.get("n_questions"), "invalid calls": p.get("n_invalid_calls")})
        return rows

    # ------------------------------------------------------------------ judge log

    def judge_log(self, decisions: Sequence[Any]) -> list[dict]:
        """Replay-format lines (`LOG_FORMAT`): one per answered rating and per answered call (missing ones left
        out), from decisions or stored decision rows (`doc`/`doc_id`, kind, type, left, detail)."""
        lines = []
        for d in decisions:
            kind, detail = _first(d, "kind"), _first(d, "detail")
            if isinstance(detail, str):
                detail = json.loads(detail)
            doc = d.get("doc", d.get("doc_id")) if isinstance(d, Mapping) else d.doc
            if kind == RATING and detail.get("status") != dec.MISSING:
                lines.append({"question_id": doc, "system": _first(d, "left"), "criterion": _first(d, "type"),
                              "score": detail.get("score"), "rationale": detail.get("rationale"),
                              "raw": detail.get("raw")})
            elif kind == COMPARISON:
                for call in detail.get("calls", []):
                    if call["verdict"] == dec.MISSING:
                        continue
                    lines.append({"question_id": doc, "criterion": _first(d, "type"), "first": call["first"],
                                  "second": call["second"], "verdict": call["verdict"],
                                  "rationale": call.get("rationale"), "raw": call.get("raw")})
        return lines

    def gold_key(self, payload: Mapping) -> str:
        """The research question (the ideas are the systems' outputs, compared inside the run)."""
        return content_hash([payload["question_id"], payload["question"]])

    def question_key(self, payload: Mapping, decision: Mapping) -> str:
        """A rating: the system's idea (name and text) and the criterion; a comparison: both ideas in the order
        asked."""
        text = {i["system"]: i["idea"] for i in payload["ideas"]}
        ideas = [[decision["left"], text.get(decision["left"])]]
        if decision["right"]:
            ideas.append([decision["right"], text.get(decision["right"])])
        return content_hash([decision["kind"], decision["type"], ideas])

    def sampling_stratum(self, decisions: Sequence[Mapping]) -> str:
        """Questions by the share of their comparisons the judge split (the winner changed with the order): where
        reviews most often move the pairwise scores. `consistent` (none split), `some split` (under half),
        `mostly split` (half or more)."""
        comparisons = [d for d in decisions if d["kind"] == COMPARISON]
        splits = sum(d["judge"] == SPLIT for d in comparisons)
        if not splits:
            return "consistent"
        return "mostly split" if 2 * splits >= len(comparisons) else "some split"

    def judge_votes(self, decision: Mapping) -> list[str]:
        """Ratings: the judge's score. Comparisons: the winner of each valid call (a shown first, b shown first)."""
        if decision["kind"] != COMPARISON:
            return [decision["judge"]]
        calls = (decision.get("detail") or {}).get("calls") or []
        votes = [c["winner"] for c in calls if c.get("winner") in (WIN_A, WIN_B, WIN_TIE)]
        return votes or [decision["judge"]]

    def describe_judge_log(self) -> str:
        return LOG_FORMAT

    def questions_for(self, payload: Mapping, decision: Mapping) -> list:
        """The judge questions behind one stored decision, rebuilt from the payload as `judge.questions` builds
        them: a rating is one question; a comparison two, idea a shown first then idea b first (the order of
        `detail.calls`). Pairwise prompts allow ties (the comparison labels include `tie`).

        Raises:
            KeyError: the criterion has no definition in `prompts.CRITERIA`.
        """
        from functools import partial

        from scoring.families.ideation import prompts
        from scoring.families.ideation.judge import questions
        from scoring.families.ideation.model import Idea
        from scoring.families.ideation.model import Question as IdeaQuestion
        from scoring.judges.question import PromptQuestion

        qid, kind, c = payload["question_id"], decision["kind"], decision["type"]
        ideas = tuple(Idea(qid, i["system"], i["idea"], 0) for i in payload["ideas"])
        if kind == RATING:
            wanted = [(RATING, qid, decision["left"], c)]
            parser = prompts.parse_absolute_score
        else:
            a, b = decision["left"], decision["right"]
            wanted = [(COMPARISON, qid, c, a, b), (COMPARISON, qid, c, b, a)]
            parser = partial(prompts.parse_pairwise_winner, allow_tie=True)
        built = questions([IdeaQuestion(qid, payload["question"], ideas)], (c,) if kind == RATING else (),
                          (c,) if kind == COMPARISON else ())
        by_key = {key: (template, fields) for key, template, fields, _ in built}
        return [PromptQuestion(k, by_key[k][0], tuple(by_key[k][1].items()), parser) for k in wanted if k in by_key]

