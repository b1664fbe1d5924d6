"""Who labels a candidate ranked above the gold: the benchmark's assumption (`gold-only`) or a replayed log.

A candidate question is a `SpanQuery` with doc = query id, text = query text, entity_type = relation,
span1 = candidate id, span2 = gold id; `yes` means the candidate is an acceptable answer too.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from scoring.errors import InputError, JudgeSpecError
from scoring.families.retrieval.model import ACCEPTABLE, NOT_ACCEPTABLE
from scoring.judges.base import INVALID, MISSING, NO, YES, Answer, Judge, SpanQuery, _LocalJudge

GOLD_ONLY = "gold-only"
LOG_FORMAT = ('JSON lines {"query_id", "candidate_id", "answer": "acceptable" | "not-acceptable"}: one verdict on '
              "one candidate ranked above the gold; a candidate the log lacks is reported missing")


class GoldOnlyJudge(_LocalJudge):
    """`gold-only`: no judge; every candidate other than the gold is not acceptable (the benchmark's assumption)."""

    spec = GOLD_ONLY

    def identity(self) -> dict:
        return {"spec": self.spec, "rule": "only the gold answer is acceptable"}

    def answer(self, query: SpanQuery) -> Answer:  # noqa: ARG002 (same answer for every question)
        return Answer(NO, rationale="only the gold answer counts (benchmark assumption)")


class CandidateReplayJudge(_LocalJudge):
    """`replay:PATH`: candidate verdicts read from a log in `LOG_FORMAT`; a pair the log lacks is `missing`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.spec = f"replay:{path}"
        p = Path(path)
        if not p.is_file():
            raise InputError(path, None, "judge log not found")
        data = p.read_bytes()
        self.file_hash = hashlib.sha256(data).hexdigest()
        self.answers: dict[tuple[str, str], Answer] = {}
        for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(path, lineno, f"invalid JSON: {e.msg}") from None
            if not isinstance(rec, dict):
                raise InputError(path, lineno, "expected a JSON object")
            for f in ("query_id", "candidate_id", "answer"):
                if not isinstance(rec.get(f), str):
                    raise InputError(path, lineno, f"field '{f}' must be a string")
            value = {ACCEPTABLE: YES, NOT_ACCEPTABLE: NO}.get(rec["answer"].strip().lower(), INVALID)
            key = (rec["query_id"], rec["candidate_id"])
            old = self.answers.get(key)
            if old is not None and old.value != value:
                raise InputError(path, lineno, f"conflicting answers for query {key[0]!r}, candidate {key[1]!r}")
            note = rec.get("note")
            self.answers[key] = Answer(value, raw=rec["answer"], rationale=note if isinstance(note, str) else None)

    def identity(self) -> dict:
        return {"spec": self.spec, "log_sha256": self.file_hash, "answers": len(self.answers)}

    def answer(self, query: SpanQuery) -> Answer:
        a = self.answers.get((query.doc, query.span1))
        return a if a is not None else Answer(MISSING, rationale=f"not in judge log {self.path}")


def make_judge(spec: str) -> Judge:
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
    raise JudgeSpecError(f"the retrieval task takes judge {GOLD_ONLY!r} or 'replay:PATH', got {spec!r}")


def label_of(answer: Answer) -> str:
    """A candidate decision's judge label from an answer: yes -> acceptable, no -> not-acceptable, else invalid."""
    return {YES: ACCEPTABLE, NO: NOT_ACCEPTABLE}.get(answer.value, INVALID)
