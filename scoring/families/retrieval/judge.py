"""Who labels a candidate ranked above the gold: the benchmark's assumption (`gold-only`) or a replayed log.

A candidate question (`CandidateQuestion`) asks whether a candidate ranked above the gold is an acceptable answer
too (`yes`); no model is asked, so this family has no LLM judge and no judge-batch path.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from scoring.errors import InputError, JudgeSpecError
from scoring.families.retrieval.model import ACCEPTABLE, NOT_ACCEPTABLE
from scoring.jsonl import read_records
from scoring.judges.answer import INVALID, MISSING, NO, YES, Answer
from scoring.judges.prompts import Parsed
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import Judge, LocalJudge

GOLD_ONLY = "gold-only"
LOG_FORMAT = ('JSON lines {"query_id", "candidate_id", "answer": "acceptable" | "not-acceptable"}: one verdict on '
              "one candidate ranked above the gold; a candidate the log lacks is reported missing")


@dataclass(frozen=True)
class CandidateQuestion:
    """Is `candidate` (ranked above or tied with the gold for query `query_id`) an acceptable answer too?"""

    answers: ClassVar[tuple[str, ...]] = (YES, NO)
    pair: ClassVar[None] = None
    template: ClassVar[None] = None
    schema: ClassVar[None] = None

    query_id: str
    query: str
    relation: str
    candidate: str
    gold: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.query_id, self.relation, self.candidate, self.gold)

    def prompt(self) -> None:
        return None

    def parse(self, raw: str | None, *, truncated: bool = False) -> Parsed:  # noqa: ARG002 (no LLM asks it)
        return Parsed(INVALID, "no model is asked about retrieval candidates")

    def structured(self) -> None:
        return None


_GOLD_ONLY_ANSWER = Answer(NO, rationale="only the gold answer counts (benchmark assumption)")


class GoldOnlyJudge(LocalJudge):
    """`gold-only`: no judge; every candidate other than the gold is not acceptable (the benchmark's assumption)."""

    spec = GOLD_ONLY

    def identity(self) -> dict:
        return {"spec": self.spec, "rule": "only the gold answer is acceptable"}

    def answer(self, query: CandidateQuestion) -> Answer:  # type: ignore[override]  # noqa: ARG002
        return _GOLD_ONLY_ANSWER  # frozen: one object for all 683k candidates of 10,000 queries (#38)


class CandidateReplayJudge(LocalJudge):
    """`replay:PATH`: candidate verdicts read from a log in `LOG_FORMAT`; a pair the log lacks is `missing`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.spec = f"replay:{path}"
        h = hashlib.sha256()
        self.answers: dict[tuple[str, str], Answer] = {}
        for lineno, rec in read_records(path, what="judge log", digest=h):
            self._add(rec, lineno)  # type: ignore[arg-type] (read_records: objects)
        self.file_hash = h.hexdigest()

    def _add(self, rec: Mapping, lineno: int) -> None:
        for f in ("query_id", "candidate_id", "answer"):
            if not isinstance(rec.get(f), str):
                raise InputError(self.path, lineno, f"field '{f}' must be a string")
        value = {ACCEPTABLE: YES, NOT_ACCEPTABLE: NO}.get(rec["answer"].strip().lower(), INVALID)
        key = (rec["query_id"], rec["candidate_id"])
        old = self.answers.get(key)
        if old is not None and old.value != value:
            raise InputError(self.path, lineno, f"conflicting answers for query {key[0]!r}, candidate {key[1]!r}")
        note = rec.get("note")
        self.answers[key] = Answer(value, raw=rec["answer"], rationale=note if isinstance(note, str) else None)

    def identity(self) -> dict:
        return {"spec": self.spec, "log_sha256": self.file_hash, "answers": len(self.answers)}

    def answer(self, query: CandidateQuestion) -> Answer:  # type: ignore[override]
        a = self.answers.get((query.query_id, query.candidate))
        return a if a is not None else Answer(MISSING, rationale=f"not in judge log {self.path}")


def make_judge(spec: str, options: JudgeOptions | None = None) -> Judge:  # noqa: ARG001 (no option applies)
    """`gold-only` or `replay:PATH`.

    Raises:
        JudgeSpecError: any other spec (the retrieval family asks no model).
        InputError: the replay log cannot be read.
    """
    name, _, arg = spec.strip().partition(":")
    if name == GOLD_ONLY and not arg:
        return GoldOnlyJudge()
    if name == "replay" and arg:
        return CandidateReplayJudge(arg)
    raise JudgeSpecError(f"the retrieval task takes judge {GOLD_ONLY!r} or 'replay:PATH' (it asks no model), "
                         f"got {spec!r}")


def label_of(answer: Answer) -> str:
    """A candidate decision's judge label from an answer: yes -> acceptable, no -> not-acceptable, else invalid."""
    return {YES: ACCEPTABLE, NO: NOT_ACCEPTABLE}.get(answer.value, INVALID)
