"""Asking a judge through its cache: `ask_with_cache` asks only what the cache lacks, keeps every answer as it
arrives (`is_kept`: all but `missing`) and counts what asking cost in `JudgeStats`."""

from __future__ import annotations

from collections.abc import Sequence

from scoring.errors import JudgeFailed
from scoring.judges.answer import CANCELLED, INVALID, MISSING, NOT_SENT, REQUEST_FAILED, Answer, JudgeStats, is_kept
from scoring.judges.question import Question
from scoring.judges.transport import AnswerCache, Judge, Progress

CACHE_CHUNK = 50
"""Queries per `ask_many` call for a cacheable judge that cannot report answers one by one."""


class _Asking:
    """One `ask_with_cache` call: the answers so far, and the accounting of each new one."""

    def __init__(self, judge: Judge, queries: Sequence[Question], cache: AnswerCache | None, stats: JudgeStats,
                 progress: Progress | None) -> None:
        self.judge, self.stats, self.progress = judge, stats, progress
        self.cache = cache if judge.cacheable else None
        self.n = len(queries)
        self.answers: list[Answer | None] = [None] * self.n
        self.keys = [judge.cache_key(q) for q in queries] if self.cache is not None else []
        self.todo = self._from_cache()
        self.done = self.n - len(self.todo)

    def _from_cache(self) -> list[int]:
        """Fill the cached answers; the indices still to ask."""
        if self.cache is None:
            return list(range(self.n))
        hits = self.cache.get_many(self.keys)
        todo = []
        for i, k in enumerate(self.keys):
            if k in hits:
                a = hits[k]
                self.answers[i] = Answer(a.value, a.raw, a.rationale, a.score, True)
                self.stats.cached += 1
                self.stats.invalid += a.value == INVALID
            else:
                todo.append(i)
        return todo

    def received(self) -> int:
        """Answers kept so far (cached before, or received now and cached)."""
        return sum(a is not None and is_kept(a) for a in self.answers)

    def record(self, j: int, a: Answer) -> None:
        """Answer `a` for the j-th asked query: account for it and cache it right away (once)."""
        i = self.todo[j]
        if self.answers[i] is not None:
            return
        self.answers[i] = a
        self.done += 1
        s = self.stats
        why = a.rationale or "" if a.value == MISSING else ""
        if why == CANCELLED:
            s.cancelled += 1
        else:
            s.requests += not why.startswith(NOT_SENT)
            s.failed += why.startswith(REQUEST_FAILED)
        s.invalid += a.value == INVALID
        s.missing += a.value == MISSING
        s.retries += a.retries
        s.retried += a.retries > 0
        s.prompt_tokens += a.prompt_tokens
        s.completion_tokens += a.completion_tokens
        if self.cache is not None and is_kept(a):
            self.cache.put_many({self.keys[i]: a})
        if self.progress and self.judge.cacheable:  # local judges report their own progress (every 500)
            self.progress(self.done, self.n)

    def ask(self, todo: list[Question]) -> None:
        judge = self.judge
        if not judge.cacheable:
            before = self.done

            def local_progress(k: int, _total: int) -> None:
                if self.progress:
                    self.progress(before + k, self.n)

            for j, a in enumerate(judge.ask_many(todo, local_progress)):
                self.record(j, a)
        elif judge.reports_each_answer:
            for j, a in enumerate(judge.ask_many(todo, None, on_answer=self.record)):
                self.record(j, a)  # a no-op for those already reported
        else:
            for start in range(0, len(todo), CACHE_CHUNK):
                for j, a in enumerate(judge.ask_many(todo[start:start + CACHE_CHUNK]), start):
                    self.record(j, a)


def failure_message(spec: str, why: str, kept: int) -> str:
    """The one line a failed judge job ends with: what failed, that no run was stored, and how to resume."""
    return (f"judge {spec!r} failed: {why}; nothing was stored (no run). {kept} answers are cached: to resume, "
            "run the same command again (or press Score again) once the server answers; only the questions still "
            "unanswered are asked")


def ask_with_cache(judge: Judge, queries: Sequence[Question], cache: AnswerCache | None,
                   stats: JudgeStats, progress: Progress | None = None) -> list[Answer]:
    """Answer every question, asking the judge only for those the cache lacks.

    Answers are written to the cache as they arrive (every answer but `missing`), so a run that is killed or
    cancelled keeps every answer it received and a re-run asks only the rest. A judge that
    `reports_each_answer` reports answers one by one; another cacheable judge is asked in chunks of
    `CACHE_CHUNK`. `progress(done, total)` counts cached answers as done and is called once before the first
    request, so a display shows the total and the cached count at once.

    Updates `stats`, one count per question: cached, invalid and missing answers (live, while asking), requests
    (questions sent: not the cancelled or `NOT_SENT` ones), failed, cancelled, retries, tokens, and `cost_usd`
    (the judge's `estimate_cost`).

    Raises:
        JudgeFailed: the transport reports a fatal error (bad key, unknown URL or model, connection refused), or
            every request sent failed. Answers received before it stay cached.
    """
    asking = _Asking(judge, queries, cache, stats, progress)
    if progress:
        progress(asking.done, asking.n)
    todo = [queries[i] for i in asking.todo]
    try:
        if todo:
            asking.ask(todo)
    finally:
        stats.cost_usd = judge.estimate_cost(stats.prompt_tokens, stats.completion_tokens)
    if progress and (not todo or not judge.cacheable):  # a local judge reported before its answers were counted
        progress(asking.done, asking.n)
    fatal = judge.fatal
    if fatal or (stats.requests and stats.failed == stats.requests and todo):
        raise JudgeFailed(failure_message(judge.spec, fatal or "every request failed", asking.received()))
    unanswered = sum(a is None for a in asking.answers)
    if unanswered:
        raise RuntimeError(f"judge {judge.spec!r} returned no answer for {unanswered} of {len(todo)} queries")
    return [a for a in asking.answers if a is not None]
