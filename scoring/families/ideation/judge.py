"""Where ideation's judge answers come from, and the questions a live judge would be asked.

- `file` (default): the ratings and verdicts are the run's `absolute` / `pairwise` input files.
- `replay:PATH`: a judge log (the family's `judge_log` format: rating lines with `score`, pairwise lines with
  `verdict`) replaces those files.
- A live judge (`openai:MODEL`, any transport that answers prompts): `questions` builds every prompt with its
  parser, `ask_live` asks them through the cache (re-asking once, with a format reminder, after an unreadable
  reply) and `records_from_answers` turns the parsed answers back into ratings and verdicts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from scoring.errors import InputError, JudgeSpecError
from scoring.families.ideation import prompts
from scoring.families.ideation.decide import unordered_pairs
from scoring.families.ideation.model import COMPARISON, INVALID, RATING, Question, Rating, Verdict
from scoring.judges.answer import MISSING, Answer, JudgeStats
from scoring.judges.asking import ask_with_cache
from scoring.judges.prompts import Parsed, PromptTemplate
from scoring.judges.question import PromptQuestion
from scoring.judges.question import Question as JudgeQuestion
from scoring.judges.registry import JudgeOptions, parse_judge_spec
from scoring.judges.transport import AnswerCache, Judge, LocalJudge, Progress

FILE = "file"
LOG_FORMAT = ('JSON lines: ratings {"question_id", "system", "criterion", "score": 1-5 | null, "rationale", "raw"} '
              'and pairwise calls {"question_id", "criterion", "first", "second", "verdict": '
              'first|second|tie|invalid, "rationale", "raw"} (first/second = systems in the order shown)')


class FileJudge(LocalJudge):
    """`file`: the judge already answered; its answers are the run's absolute / pairwise input files."""

    spec = FILE

    def identity(self) -> dict:
        return {"spec": self.spec, "source": "ratings and verdicts read from the run's input files"}

    def answer(self, query: JudgeQuestion) -> Answer:
        raise TypeError(f"the {FILE!r} judge answers no questions; its answers come from the input files "
                        f"(asked about {query.key!r})")


class LogJudge(LocalJudge):
    """`replay:PATH`: ratings and verdicts read from a judge log in `LOG_FORMAT` (replaces the input files)."""

    def __init__(self, path: str) -> None:
        p = Path(path)
        if not p.is_file():
            raise InputError(path, None, "judge log not found")
        self.path = path
        self.spec = f"replay:{path}"
        self.file_hash = hashlib.sha256(p.read_bytes()).hexdigest()

    def identity(self) -> dict:
        return {"spec": self.spec, "log_sha256": self.file_hash}

    def answer(self, query: JudgeQuestion) -> Answer:
        raise TypeError(f"a replayed ideation log is read whole, not asked (asked about {query.key!r})")


def make_judge(spec: str, options: JudgeOptions | None = None) -> Judge:
    """`file`, `replay:PATH` or `openai:MODEL` (asked our prompts; bound to them before it asks, so its identity
    and every cached answer name the prompt).

    Raises:
        JudgeSpecError: any other spec.
        InputError: the replay log does not exist.
    """
    name, _, arg = spec.strip().partition(":")
    if name == FILE and not arg:
        return FileJudge()
    if name == "replay" and arg:
        return LogJudge(arg)
    if name == "openai":
        judge = parse_judge_spec(spec, options=options)
        for template in (prompts.IDEATION_ABSOLUTE, prompts.IDEATION_PAIRWISE):
            judge.bind(PromptQuestion(("sample",), template, (), prompts.parse_absolute_score))
        return judge
    raise JudgeSpecError(f"the ideation task takes judge {FILE!r} (ratings from the input files), 'replay:PATH' or "
                         f"'openai:MODEL' (our prompts), got {spec!r}")


# ---------------------------------------------------------------------------------------------- live judge (to wire)

QuestionKey = tuple[str, ...]
"""(`rating`, question_id, system, criterion) or (`comparison`, question_id, criterion, first, second)."""
Parser = Callable[[str | None], Parsed]


def questions(docs: Sequence[Question], absolute_criteria: Sequence[str] = tuple(prompts.CRITERIA),
              pairwise_criteria: Sequence[str] = tuple(prompts.CRITERIA), *, allow_tie: bool = True,
              ) -> list[tuple[QuestionKey, PromptTemplate, dict[str, str], Parser]]:
    """Every judge question of a run: (key, template, fields to render it with, parser of the reply).

    One rating question per question x idea x absolute criterion; two pairwise questions (a first, b first)
    per question x unordered pair x pairwise criterion. The engine should re-ask once with
    `prompts.ABSOLUTE_FORMAT_REMINDER` / `prompts.PAIRWISE_FORMAT_REMINDER` after an unreadable reply
    (ideation.md section 2, R = 1) and record `invalid` after that.

    Raises:
        KeyError: a criterion has no definition in `prompts.CRITERIA`.
    """
    out: list[tuple[QuestionKey, PromptTemplate, dict[str, str], Parser]] = []
    template = prompts.IDEATION_PAIRWISE if allow_tie else prompts.IDEATION_PAIRWISE_NO_TIE

    def pair_parser(raw: str | None) -> Parsed:
        return prompts.parse_pairwise_winner(raw, allow_tie=allow_tie)

    for q in docs:
        ideas = {i.system: i.idea for i in q.ideas}
        for c in absolute_criteria:
            for i in q.ideas:
                fields = {"QUESTION": q.question, "IDEA": i.idea, "CRITERION": c,
                          "CRITERION_DEFINITION": prompts.CRITERIA[c]}
                out.append(((RATING, q.question_id, i.system, c), prompts.IDEATION_ABSOLUTE, fields,
                            prompts.parse_absolute_score))
        for c in pairwise_criteria:
            for a, b in unordered_pairs(q.systems):
                for first, second in ((a, b), (b, a)):
                    fields = {"QUESTION": q.question, "IDEA_FIRST": ideas[first], "IDEA_SECOND": ideas[second],
                              "CRITERION": c, "CRITERION_DEFINITION": prompts.CRITERIA[c]}
                    out.append(((COMPARISON, q.question_id, c, first, second), template, fields, pair_parser))
    return out


def records_from_answers(answers: Mapping[QuestionKey, tuple[Parsed, str | None]],
                         ) -> tuple[list[Rating], list[Verdict]]:
    """Ratings and verdicts from parsed replies {key: (parsed, raw reply)}, keys as in `questions`.

    An unreadable reply becomes score None / verdict `invalid`, with the parser's reason kept in `rationale`
    when the reply had none.
    """
    ratings, verdicts = [], []
    for key, (parsed, raw) in answers.items():
        why = parsed.rationale or (parsed.reason and f"unreadable: {parsed.reason}")
        if key[0] == RATING:
            _, qid, system, c = key
            ratings.append(Rating(qid, system, c, int(parsed.value) if parsed.ok else None, why, raw))
        else:
            _, qid, c, first, second = key
            verdicts.append(Verdict(qid, c, first, second, parsed.value if parsed.ok else INVALID, why, raw))
    return ratings, verdicts


def _with_truncated(parse: Parser) -> Callable[..., Parsed]:
    def parser(raw: str | None, *, truncated: bool = False) -> Parsed:  # noqa: ARG001 (the transport's signature)
        return parse(raw)
    return parser


def _reask_template(t: PromptTemplate) -> PromptTemplate:
    reminder = (prompts.ABSOLUTE_FORMAT_REMINDER if t is prompts.IDEATION_ABSOLUTE
                else prompts.PAIRWISE_FORMAT_REMINDER if t is prompts.IDEATION_PAIRWISE
                else prompts.PAIRWISE_NO_TIE_FORMAT_REMINDER)
    return PromptTemplate(f"{t.name}-reask", t.text + "\n\n" + reminder.replace("{", "{{").replace("}", "}}"),
                          t.answers)


def ask_live(docs: Sequence[Question], judge: Judge, cache: AnswerCache | None, stats: JudgeStats,
             progress: Progress | None = None) -> tuple[list[Rating], list[Verdict]]:
    """Ask a live judge every rating and both orders of every comparison (ideation.md §2-3), through the cache;
    an unreadable reply is asked once more with a format reminder (its own template and hash), then `invalid`."""
    qs = questions(docs)
    asked = [PromptQuestion(key, t, tuple(fields.items()), _with_truncated(parse)) for key, t, fields, parse in qs]
    stats.distinct_queries += len(asked)
    stats.paper_calls += len(asked)
    answers = ask_with_cache(judge, asked, cache, stats, progress)
    again = [i for i, a in enumerate(answers) if a.value == INVALID]
    if again:
        retry = [PromptQuestion(asked[i].key, _reask_template(asked[i].template), asked[i].fields, asked[i].parser)
                 for i in again]
        for i, a in zip(again, ask_with_cache(judge, retry, cache, stats, None), strict=True):
            answers[i] = a
        # the re-ask counted what is still unreadable: `invalid` holds each question once, and the first replies
        # that were unreadable are reported apart
        stats.invalid -= len(again)
        stats.invalid_before_reask += len(again)
    parsed = {}
    for q, a in zip(asked, answers, strict=True):
        if a.value in (INVALID, MISSING):
            parsed[q.key] = (Parsed(INVALID, a.rationale or "unreadable"), a.raw)
        else:
            parsed[q.key] = (Parsed(a.value, None, a.rationale), a.raw)
    return records_from_answers(parsed)
