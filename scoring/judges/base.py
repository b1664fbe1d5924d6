"""Judges: answer one question about one ordered pair of spans.

Every judge answers `SpanQuery`s with `Answer`s. A judge that costs something to ask (`cacheable = True`)
goes through an `AnswerCache` (the SQLite one lives in `audit/`), so the same request is asked once, ever.
Specs (CLI flag, UI select, stored with the run): `exact`, `fuzzy[:T]`, `replay:PATH`; see README.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rapidfuzz import fuzz, utils

from scoring.errors import InputError, JudgeSpecError

YES, NO, INVALID, MISSING = "yes", "no", "invalid", "missing"
CANCELLED = "cancelled"
"""Rationale of a `missing` answer whose query was never sent because the job was cancelled."""
REQUEST_FAILED = "request failed"
"""Rationale prefix of a `missing` answer whose request failed after every retry (`request failed: <reason>`)."""
NOT_SENT = REQUEST_FAILED + ": not sent"
"""Rationale prefix of a `missing` answer never sent because an earlier request failed for good (bad key...)."""
CACHEABLE_VALUES = (YES, NO, INVALID)
"""Answers worth keeping: what the judge said. `missing` (failed, cancelled) is asked again next time."""
CACHE_CHUNK = 50
"""Queries per `ask_many` call for a cacheable judge that cannot report answers one by one."""
Progress = Callable[[int, int], None]
AnswerCallback = Callable[[int, "Answer"], None]
"""(index of the query in the list passed to `ask_many`, its answer)."""


@dataclass(frozen=True)
class SpanQuery:
    """One ordered question: do span1 and span2 discuss the same `entity_type` in this text?"""

    doc: str
    """Document (paper) id."""
    text: str
    """The full source text the spans come from."""
    entity_type: str
    """Entity type name as shown to the judge, e.g. `comb-element`."""
    span1: str
    """The span shown first."""
    span2: str
    """The span shown second."""


@dataclass(frozen=True)
class Answer:
    """A judge's answer to one `SpanQuery`."""

    value: str
    """`yes`, `no`, `invalid` (answer could not be parsed) or `missing` (replay log lacks it)."""
    raw: str | None = None
    """The judge's raw output, when there is one."""
    rationale: str | None = None
    """Why: the judge's justification, a similarity score, or the reason it is missing."""
    score: float | None = None
    """A similarity score for non-LLM judges."""
    cached: bool = False
    """True when the answer came from the cache instead of a new request."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0


@dataclass
class JudgeStats:
    """What asking the judge cost in one run."""

    distinct_queries: int = 0
    requests: int = 0
    cached: int = 0
    invalid: int = 0
    missing: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    paper_calls: int = 0
    """How many calls the paper's scorer would have made for the same inputs (no cache, both passes)."""
    missing_examples: list[dict] = field(default_factory=list)
    failed: int = 0
    """Queries whose request failed after every retry (answer `missing`; asked again by the next run)."""
    cancelled: int = 0
    """Queries not sent because the job was cancelled (answer `missing`; not counted in `requests`)."""
    cost_usd: float | None = None
    """Estimated cost of the tokens of this run's requests (None when the judge has no price)."""

    def as_dict(self) -> dict:
        return {
            "distinct_queries": self.distinct_queries,
            "requests": self.requests,
            "cached": self.cached,
            "invalid": self.invalid,
            "missing": self.missing,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "paper_calls": self.paper_calls,
            "missing_examples": self.missing_examples[:10],
            "failed": self.failed,
            "cancelled": self.cancelled,
            "cost_usd": self.cost_usd,
        }


class AnswerCache(Protocol):
    """Stores answers by request key (implemented over SQLite in `audit.judge_cache`)."""

    def get_many(self, keys: Sequence[str]) -> dict[str, Answer]: ...

    def put_many(self, answers: dict[str, Answer]) -> None: ...


class Judge(Protocol):
    """Anything that answers span queries."""

    spec: str
    cacheable: bool

    def identity(self) -> dict:
        """What to record with the run: spec, model, parameters, prompt hash (never a key)."""
        ...

    def cache_key(self, query: SpanQuery) -> str: ...

    def ask_many(self, queries: Sequence[SpanQuery], progress: Progress | None = None) -> list[Answer]: ...


def normalise_words(s: str) -> list[str]:
    """Case-insensitive, whitespace-normalised tokens (the `exact` judge's notion of equality)."""
    return s.casefold().split()


def _hash(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class _LocalJudge:
    """Base for judges that compute answers locally: nothing to cache."""

    spec = ""
    cacheable = False

    def identity(self) -> dict:
        return {"spec": self.spec}

    def cache_key(self, query: SpanQuery) -> str:
        return _hash([self.spec, query.doc, query.entity_type, query.span1, query.span2])

    def answer(self, query: SpanQuery) -> Answer:
        raise NotImplementedError

    def ask_many(self, queries: Sequence[SpanQuery], progress: Progress | None = None) -> list[Answer]:
        out = []
        for i, q in enumerate(queries, 1):
            out.append(self.answer(q))
            if progress and (i % 500 == 0 or i == len(queries)):
                progress(i, len(queries))
        return out


class ExactJudge(_LocalJudge):
    """`exact`: yes iff `a.casefold().split() == b.casefold().split()`."""

    spec = "exact"

    def answer(self, query: SpanQuery) -> Answer:
        same = normalise_words(query.span1) == normalise_words(query.span2)
        return Answer(YES if same else NO, score=1.0 if same else 0.0)


DEFAULT_FUZZY_THRESHOLD = 85.0


class FuzzyJudge(_LocalJudge):
    """`fuzzy[:T]`: RapidFuzz `fuzz.ratio` on `utils.default_process`-ed spans (lower-cased, punctuation
    stripped), yes iff the similarity (0-100) is at least T (default 85)."""

    def __init__(self, threshold: float = DEFAULT_FUZZY_THRESHOLD) -> None:
        if not 0 <= threshold <= 100:
            raise JudgeSpecError(f"fuzzy threshold must be between 0 and 100, got {threshold}")
        self.threshold = threshold
        self.spec = f"fuzzy:{threshold:g}"

    def identity(self) -> dict:
        return {"spec": self.spec, "scorer": "rapidfuzz.fuzz.ratio", "processor": "rapidfuzz.utils.default_process",
                "threshold": self.threshold}

    def answer(self, query: SpanQuery) -> Answer:
        score = fuzz.ratio(query.span1, query.span2, processor=utils.default_process)
        return Answer(YES if score >= self.threshold else NO, score=score / 100,
                      rationale=f"ratio {score:.1f} vs threshold {self.threshold:g}")


def replay_key(doc: str, entity_type: str, span1: str, span2: str) -> tuple[str, str, str, str]:
    return (doc, entity_type, span1, span2)


class ReplayJudge(_LocalJudge):
    """`replay:PATH`: answers read from a judge log; a pair the log lacks is `missing`, never invented."""

    def __init__(self, path: str | Path, normalise_type: Callable[[str], str] = lambda t: t) -> None:
        self.path = str(path)
        self.spec = f"replay:{self.path}"
        self.answers: dict[tuple[str, str, str, str], Answer] = {}
        self.file_hash = ""
        self._load(normalise_type)

    def _load(self, normalise_type: Callable[[str], str]) -> None:
        p = Path(self.path)
        if not p.is_file():
            raise InputError(self.path, None, "judge log not found")
        data = p.read_bytes()
        self.file_hash = hashlib.sha256(data).hexdigest()
        for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(self.path, lineno, f"invalid JSON: {e.msg}") from None
            if not isinstance(rec, dict):
                raise InputError(self.path, lineno, "expected a JSON object")
            for f in ("paper_id", "entity_type", "span1", "span2", "answer"):
                if not isinstance(rec.get(f), str):
                    raise InputError(self.path, lineno, f"field '{f}' must be a string")
            value = rec["answer"].strip().lower()
            ans = Answer(value if value in (YES, NO) else INVALID, raw=rec["answer"],
                         rationale=rec.get("rationale") if isinstance(rec.get("rationale"), str) else None)
            key = replay_key(rec["paper_id"], normalise_type(rec["entity_type"]), rec["span1"], rec["span2"])
            old = self.answers.get(key)
            if old is not None and old.value != ans.value:
                raise InputError(self.path, lineno, f"conflicting answers for the same pair: {old.value!r} "
                                                    f"and {ans.value!r}")
            self.answers[key] = ans

    def identity(self) -> dict:
        return {"spec": self.spec, "log_sha256": self.file_hash, "answers": len(self.answers)}

    def answer(self, query: SpanQuery) -> Answer:
        ans = self.answers.get(replay_key(query.doc, query.entity_type, query.span1, query.span2))
        if ans is None:
            return Answer(MISSING, rationale=f"not in judge log {self.path}")
        return ans


def parse_judge_spec(spec: str, *, normalise_type: Callable[[str], str] = lambda t: t) -> Judge:
    """Build a judge from its spec string.

    Raises:
        JudgeSpecError: the spec names no known judge or has a bad parameter.
        InputError: a replay log cannot be read.
    """
    spec = spec.strip()
    name, _, arg = spec.partition(":")
    if name == "exact" and not arg:
        return ExactJudge()
    if name == "fuzzy":
        try:
            threshold = float(arg) if arg else DEFAULT_FUZZY_THRESHOLD
        except ValueError:
            raise JudgeSpecError(f"fuzzy threshold must be a number, got {arg!r}") from None
        return FuzzyJudge(threshold)
    if name == "replay":
        if not arg:
            raise JudgeSpecError("replay needs a path: replay:PATH")
        return ReplayJudge(arg, normalise_type)
    if name in _LAZY_MODULES and name not in _EXTRA_JUDGES:
        importlib.import_module(_LAZY_MODULES[name])  # registers itself via register_judge
    if name in _EXTRA_JUDGES:
        return _EXTRA_JUDGES[name](arg)
    known = "exact, fuzzy[:T], replay:PATH, openai:MODEL, embed[:T]"
    raise JudgeSpecError(f"unknown judge spec {spec!r}; expected one of {known}")


_EXTRA_JUDGES: dict[str, Callable[[str], Judge]] = {}
_LAZY_MODULES = {"openai": "scoring.judges.openai_compat", "embed": "scoring.judges.embed"}


def register_judge(name: str, factory: Callable[[str], Judge]) -> None:
    """Make `name:ARG` a judge spec (used by optional judges such as `openai` and `embed`)."""
    _EXTRA_JUDGES[name] = factory


def _accepts_on_answer(judge: Judge) -> bool:
    try:
        return "on_answer" in inspect.signature(judge.ask_many).parameters
    except (TypeError, ValueError):
        return False


def ask_with_cache(judge: Judge, queries: Sequence[SpanQuery], cache: AnswerCache | None,
                   stats: JudgeStats, progress: Progress | None = None) -> list[Answer]:
    """Answer every query, asking the judge only for those the cache lacks.

    Answers are written to the cache as they arrive (`yes`, `no`, `invalid`; never `missing`), so a run that is
    killed or cancelled keeps every answer it received and a re-run asks only the rest. A judge whose
    `ask_many` accepts `on_answer` reports answers one by one; another cacheable judge is asked in chunks of
    `CACHE_CHUNK`. `progress(done, total)` counts cached answers as done.

    Updates `stats`: cached, requests (queries sent: not the cancelled or `NOT_SENT` ones), failed, cancelled, retries,
    tokens, and `cost_usd` when the judge has `estimate_cost(prompt_tokens, completion_tokens)`.
    """
    n = len(queries)
    answers: list[Answer | None] = [None] * n
    todo_idx = list(range(n))
    keys: list[str] = []
    use_cache = judge.cacheable and cache is not None
    if use_cache:
        keys = [judge.cache_key(q) for q in queries]
        hits = cache.get_many(keys)  # type: ignore[union-attr]
        todo_idx = []
        for i, k in enumerate(keys):
            if k in hits:
                a = hits[k]
                answers[i] = Answer(a.value, a.raw, a.rationale, a.score, True)
            else:
                todo_idx.append(i)
    stats.cached += n - len(todo_idx)
    done = n - len(todo_idx)
    per_answer_progress = judge.cacheable  # local judges report their own progress (every 500 answers)

    def record(j: int, a: Answer) -> None:
        """Answer `a` for the j-th asked query: account for it and cache it right away."""
        nonlocal done
        i = todo_idx[j]
        if answers[i] is not None:
            return
        answers[i] = a
        done += 1
        why = a.rationale or "" if a.value == MISSING else ""
        if why == CANCELLED:
            stats.cancelled += 1
        else:
            stats.requests += not why.startswith(NOT_SENT)
            stats.failed += why.startswith(REQUEST_FAILED)
        stats.retries += a.retries
        stats.prompt_tokens += a.prompt_tokens
        stats.completion_tokens += a.completion_tokens
        if use_cache and a.value in CACHEABLE_VALUES:
            cache.put_many({keys[i]: a})  # type: ignore[union-attr]
        if progress and per_answer_progress:
            progress(done, n)

    todo = [queries[i] for i in todo_idx]
    try:
        if not todo:
            pass
        elif not judge.cacheable:
            done_before = done

            def _progress(k: int, _total: int) -> None:
                if progress:
                    progress(done_before + k, n)

            for j, a in enumerate(judge.ask_many(todo, _progress)):
                record(j, a)
        elif _accepts_on_answer(judge):
            fresh = judge.ask_many(todo, None, on_answer=record)  # type: ignore[call-arg]
            for j, a in enumerate(fresh):
                record(j, a)  # no-op for those already reported
        else:
            for start in range(0, len(todo), CACHE_CHUNK):
                for j, a in enumerate(judge.ask_many(todo[start:start + CACHE_CHUNK]), start):
                    record(j, a)
    finally:
        cost = getattr(judge, "estimate_cost", None)
        if callable(cost):
            stats.cost_usd = cost(stats.prompt_tokens, stats.completion_tokens)
    if progress and not todo:
        progress(n, n)
    unanswered = sum(a is None for a in answers)
    if unanswered:
        raise RuntimeError(f"judge {judge.spec!r} returned no answer for {unanswered} of {len(todo)} queries")
    return [a for a in answers if a is not None]
