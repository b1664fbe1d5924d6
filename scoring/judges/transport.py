"""The transport every judge is: `Judge`, the base class each one inherits (its members are declared here with
their defaults, so the asking code reads them without probing), `LocalJudge` for answers computed on this
machine, and the `AnswerCache` a costly transport is asked through."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Protocol

from scoring.judges.answer import Answer
from scoring.judges.question import Question

Progress = Callable[[int, int], None]
AnswerCallback = Callable[[int, Answer], None]
"""(index of the query in the list passed to `ask_many`, its answer)."""


def request_hash(obj: object) -> str:
    """sha256 of the canonical JSON of `obj`: the cache key of a request.

    >>> request_hash(["exact", "d", "a"]) == request_hash(["exact", "d", "a"]) != request_hash(["exact", "d", "b"])
    True
    """
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class Judge:
    """A transport: answers questions, one `Answer` per question, in order.

    Subclasses set `spec` and implement `ask_many`; the other members have defaults that fit a judge which costs
    nothing to ask:

    - `cacheable`: asking costs something, so answers go through an `AnswerCache` (asked once, ever).
    - `reports_each_answer`: `ask_many` calls `on_answer(index, answer)` as each answer arrives (so answers are
      cached one by one and a killed run keeps them); otherwise a cacheable judge is asked in chunks.
    - `batchable`: it can write each question as a Batch API request (`request_body`) and read a result line's
      reply (`answer_from_reply`): the judge-batch path.
    - `fatal`: after `ask_many`, a reason that every further request would fail alike (bad key, unknown URL,
      connection refused), or None.
    - `temperature`: its sampling temperature, None for a judge that does not sample.
    - `bound`: the sample question `bind` was given (None before), so a judge wrapping this one (an improved
      judge, `scoring.improve.llm.ImprovedJudge`) can bind the same question in its own form.
    """

    spec: str = ""
    cacheable: bool = False
    reports_each_answer: bool = False
    batchable: bool = False
    fatal: str | None = None
    temperature: float | None = None
    bound: Question | None = None

    def identity(self) -> dict:
        """What to record with the run: spec, model, parameters, prompt hash (never a key)."""
        return {"spec": self.spec}

    def cache_key(self, query: Question) -> str:
        return request_hash([self.spec, *query.key])

    def bind(self, sample: Question) -> Judge:
        """Tell the judge, before it asks anything, which question a run asks (an LLM judge records its prompt
        name and hash in `identity`); families call it in `make_judge` with a sample question."""
        self.bound = sample
        return self

    def unreadable_where(self) -> str:
        """Where the unreadable answers it gave came from, for the run's warning ("" when there is no place to
        name: a live judge's replies are on the review card)."""
        return ""

    def estimate_cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:  # noqa: ARG002
        """Estimated USD cost of the tokens, or None when asking this judge has no price."""
        return None

    def ask_many(self, queries: Sequence[Question], progress: Progress | None = None,
                 on_answer: AnswerCallback | None = None) -> list[Answer]:
        raise NotImplementedError


class LocalJudge(Judge):
    """Base for transports that compute answers locally (comparators, replay logs): nothing to cache."""

    def answer(self, query: Question) -> Answer:
        raise NotImplementedError

    def ask_many(self, queries: Sequence[Question], progress: Progress | None = None,
                 on_answer: AnswerCallback | None = None) -> list[Answer]:  # noqa: ARG002 (local: all at once)
        out = []
        for i, q in enumerate(queries, 1):
            out.append(self.answer(q))
            if progress and (i % 500 == 0 or i == len(queries)):
                progress(i, len(queries))
        return out


class AnswerCache(Protocol):
    """Stores answers by request key (implemented over SQLite in `audit.store.database`)."""

    def get_many(self, keys: Sequence[str]) -> dict[str, Answer]: ...

    def put_many(self, answers: dict[str, Answer]) -> None: ...
