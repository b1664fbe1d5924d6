"""Judge transports: they answer, cache and count questions; families say what the questions are.

A question (`Question` protocol) is one thing asked once in one order: it carries its replay key, the pair of
texts a comparator compares (`pair`, for `exact`, `fuzzy`, `embed`), and, for LLM transports, its prompt
template, fields, parser and optional JSON schema. Families build them (CHIMERA: `SpanQuery` with the paper's
span prompt, `scoring/families/chimera/prompts.py`; ideation: `PromptQuestion`s). A transport that costs something
to ask (`cacheable = True`) goes through an `AnswerCache` (the SQLite one lives in `audit/`), so the same request
is asked once, ever. Replay logs are read with a family-supplied line reader, so the transport knows no format.
Specs (CLI flag, UI select, stored with the run): `exact`, `fuzzy[:T]`, `embed[:T]`, `openai:MODEL` (the
family's free-text prompt), `openai-json:MODEL` (its structured JSON-answer form), `replay:PATH`; see
docs/judges.md.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from rapidfuzz import fuzz, utils

from scoring.errors import InputError, JudgeFailed, JudgeSpecError, parse_json, text_problem
from scoring.judges.prompts import Parsed, PromptTemplate

YES, NO, INVALID, MISSING = "yes", "no", "invalid", "missing"
CANCELLED = "cancelled"
"""Rationale of a `missing` answer whose query was never sent because the job was cancelled."""
REQUEST_FAILED = "request failed"
"""Rationale prefix of a `missing` answer whose request failed after every retry (`request failed: <reason>`)."""
NOT_SENT = REQUEST_FAILED + ": not sent"
"""Rationale prefix of a `missing` answer never sent because an earlier request failed for good (bad key...)."""
CACHEABLE_VALUES = (YES, NO, INVALID)
"""CHIMERA's answers; every answer but `missing` (failed, cancelled: asked again next time) is cached."""
CACHE_CHUNK = 50
"""Queries per `ask_many` call for a cacheable judge that cannot report answers one by one."""
Progress = Callable[[int, int], None]
AnswerCallback = Callable[[int, "Answer"], None]
"""(index of the query in the list passed to `ask_many`, its answer)."""


class Question(Protocol):
    """One judge question in one order, as a transport sees it."""

    @property
    def key(self) -> tuple[str, ...]:
        """Identity within its family (the replay-log key), e.g. (doc, entity type, span shown first, second)."""
        ...

    @property
    def pair(self) -> tuple[str, str] | None:
        """The two texts a comparator transport compares, or None when only an LLM can answer."""
        ...

    def prompt(self) -> str | None:
        """The exact prompt an LLM transport sends (None: no prompt; LLM transports refuse such questions)."""
        ...

    def parse(self, raw: str | None, *, truncated: bool = False) -> Parsed:
        """Read an LLM's reply (yes/no, a rating, a verdict) or `invalid` with the reason."""
        ...

    @property
    def template(self) -> PromptTemplate | None: ...

    @property
    def schema(self) -> Mapping | None:
        """JSON schema of the answer (`response_format`) when this is a structured question, else None."""
        ...

    def structured(self) -> Question | None:
        """This question in its JSON-answer form (own template and hash, `schema` set, a parser of the JSON
        object), for structured transports (`openai-json:MODEL`); None when the family has no such form."""
        ...


@dataclass(frozen=True)
class Structured:
    """A family's JSON-answer form of a question: its template (own version hash), the JSON schema the server
    enforces through `response_format`, and the parser of the JSON reply."""

    template: PromptTemplate
    schema: Mapping = field(hash=False)
    parser: Callable[..., Parsed] = field(hash=False)


def _no_parser(raw: str | None, *, truncated: bool = False) -> Parsed:  # noqa: ARG001 (a parser's signature)
    return Parsed(INVALID, "this question has no answer parser")


@dataclass(frozen=True)
class SpanQuery:
    """A question about an ordered pair of texts of one document (CHIMERA: do span1 and span2 discuss the same
    `entity_type`?). Families that ask an LLM give the template and parser (`scoring/families/*/prompts.py`)."""

    doc: str
    """Document id."""
    text: str
    """The full source text the spans come from (shown to an LLM)."""
    entity_type: str
    """The type the question is about, e.g. `comb-element`."""
    span1: str
    """The text shown first."""
    span2: str
    """The text shown second."""
    template: PromptTemplate | None = field(default=None, compare=False)
    """Prompt with fields ENTITY_TYPE, TEXT, SPAN1, SPAN2 (or `fields` below)."""
    parser: Callable[..., Parsed] = field(default=_no_parser, compare=False)
    answer_schema: Mapping | None = field(default=None, compare=False, hash=False)
    """Set on the structured form (see `structured()`); None on the free-text question."""
    json_form: Structured | None = field(default=None, compare=False, hash=False)
    """The family's JSON-answer form of this question, if it has one."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.doc, self.entity_type, self.span1, self.span2)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.span1, self.span2)

    @property
    def schema(self) -> Mapping | None:
        return self.answer_schema

    def structured(self) -> SpanQuery | None:
        if self.answer_schema is not None:
            return self
        if self.json_form is None:
            return None
        f = self.json_form
        return replace(self, template=f.template, parser=f.parser, answer_schema=f.schema, json_form=None)

    def prompt(self) -> str | None:
        if self.template is None:
            return None
        return self.template.render(ENTITY_TYPE=self.entity_type, TEXT=self.text, SPAN1=self.span1,
                                    SPAN2=self.span2)

    def parse(self, raw: str | None, *, truncated: bool = False) -> Parsed:
        return self.parser(raw, truncated=truncated)


@dataclass(frozen=True)
class PromptQuestion:
    """A question only an LLM can answer (e.g. rate this idea 1-5): a key, a template and its fields, a parser."""

    key: tuple[str, ...]
    template: PromptTemplate
    fields: tuple[tuple[str, str], ...]
    parser: Callable[..., Parsed] = field(compare=False)
    answer_schema: Mapping | None = field(default=None, compare=False, hash=False)
    json_form: Structured | None = field(default=None, compare=False, hash=False)

    @property
    def pair(self) -> None:
        return None

    @property
    def schema(self) -> Mapping | None:
        return self.answer_schema

    def structured(self) -> PromptQuestion | None:
        if self.answer_schema is not None:
            return self
        if self.json_form is None:
            return None
        f = self.json_form
        return replace(self, template=f.template, parser=f.parser, answer_schema=f.schema, json_form=None)

    def prompt(self) -> str:
        return self.template.render(**dict(self.fields))

    def parse(self, raw: str | None, *, truncated: bool = False) -> Parsed:
        return self.parser(raw, truncated=truncated)


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
    """A transport: answers questions, one `Answer` per question, in order.

    `reports_each_answer`: `ask_many` takes `on_answer(index, answer)` and calls it as each answer arrives (so
    `ask_with_cache` caches answers one by one and a killed run keeps them); otherwise a cacheable transport is
    asked in chunks of `CACHE_CHUNK`. `fatal`: after `ask_many`, a reason that every further request would fail
    alike (bad key, unknown URL, connection refused) or None.
    """

    spec: str
    cacheable: bool
    reports_each_answer: bool

    def identity(self) -> dict:
        """What to record with the run: spec, model, parameters, prompt hash (never a key)."""
        ...

    def cache_key(self, query: Question) -> str: ...

    def ask_many(self, queries: Sequence[Question], progress: Progress | None = None,
                 on_answer: AnswerCallback | None = None) -> list[Answer]: ...


def normalise_words(s: str) -> list[str]:
    """Case-insensitive, whitespace-normalised tokens (the `exact` judge's notion of equality)."""
    return s.casefold().split()


def _hash(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class LocalJudge:
    """Base for transports that compute answers locally (comparators, replay logs): nothing to cache."""

    spec = ""
    cacheable = False
    reports_each_answer = False
    fatal: str | None = None

    def identity(self) -> dict:
        return {"spec": self.spec}

    def cache_key(self, query: Question) -> str:
        return _hash([self.spec, *query.key])

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


_LocalJudge = LocalJudge  # the name families used before the transport / question split


def comparable_pair(judge: LocalJudge, query: Question) -> tuple[str, str]:
    pair = query.pair
    if pair is None:
        raise JudgeSpecError(f"the {judge.spec} judge compares two texts; this family's questions need an LLM "
                             "judge (openai:MODEL) or a replay log")
    return pair


class ExactJudge(_LocalJudge):
    """`exact`: yes iff `a.casefold().split() == b.casefold().split()`."""

    spec = "exact"

    def answer(self, query: Question) -> Answer:
        a, b = comparable_pair(self, query)
        same = normalise_words(a) == normalise_words(b)
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

    def answer(self, query: Question) -> Answer:
        a, b = comparable_pair(self, query)
        score = fuzz.ratio(a, b, processor=utils.default_process)
        return Answer(YES if score >= self.threshold else NO, score=score / 100,
                      rationale=f"ratio {score:.1f} vs threshold {self.threshold:g}")


MAX_LOG_BYTES = 512 * 1024 * 1024

LogLineReader = Callable[[Mapping, str, int], tuple[tuple[str, ...], Answer]]
"""(record, path, line number) -> (question key, answer); raises InputError naming path and line."""


def read_span_log_line(rec: Mapping, path: str, lineno: int,
                       normalise_type: Callable[[str], str] = lambda t: t) -> tuple[tuple[str, ...], Answer]:
    """A span-pair log line `{"paper_id", "entity_type", "span1", "span2", "answer": "yes"|"no"}`."""
    for f in ("paper_id", "entity_type", "span1", "span2", "answer"):
        if not isinstance(rec.get(f), str):
            raise InputError(path, lineno, f"field '{f}' must be a string")
    for f in ("paper_id", "entity_type", "span1", "span2", "answer", "rationale"):
        if isinstance(rec.get(f), str) and (problem := text_problem(rec[f])):
            raise InputError(path, lineno, f"field {f!r} {problem}")
    value = rec["answer"].strip().lower()
    ans = Answer(value if value in (YES, NO) else INVALID, raw=rec["answer"],
                 rationale=rec.get("rationale") if isinstance(rec.get("rationale"), str) else None)
    return (rec["paper_id"], normalise_type(rec["entity_type"]), rec["span1"], rec["span2"]), ans


SOURCE_FIELDS = ("judge_spec", "model", "prompt", "prompt_hash", "params", "dialect", "what")
"""What a replay judge's identity shows from the log's `.meta.json`: which judge, model and prompt answered."""


class ReplayJudge(LocalJudge):
    """`replay:PATH`: answers read from a judge log; a question the log lacks is `missing`, never invented.

    The log's line format is the family's (`read_line`); the transport only reads JSON lines, strictly: UTF-8,
    one object a line, no conflicting answers for one key, not empty. A sidecar `<log>.meta.json` beside the log
    (written by the tool that made it, e.g. scripts/real_judge_demo.py) names the judge that answered; its
    `SOURCE_FIELDS` are shown in `identity()["source"]`, so a replayed run still says which model and prompt.
    """

    def __init__(self, path: str | Path, read_line: LogLineReader = read_span_log_line) -> None:
        self.path = str(path)
        self.spec = f"replay:{self.path}"
        self.answers: dict[tuple[str, ...], Answer] = {}
        self.file_hash = ""
        self.source: dict | None = None
        self._load(read_line)
        self._load_meta()

    def _load_meta(self) -> None:
        meta = Path(self.path).with_suffix(".meta.json")
        if not meta.is_file():
            return
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
            raise InputError(str(meta), getattr(e, "lineno", None), "the judge log's metadata is not valid JSON") \
                from None
        if not isinstance(data, dict):
            raise InputError(str(meta), None, "the judge log's metadata must be a JSON object")
        self.source = {k: data[k] for k in SOURCE_FIELDS if k in data}

    def _load(self, read_line: LogLineReader) -> None:
        p = Path(self.path)
        if not p.is_file():
            raise InputError(self.path, None, "judge log not found" if not p.exists() else "not a file")
        size = p.stat().st_size
        if size > MAX_LOG_BYTES:
            raise InputError(self.path, None, f"judge log is {size / 2**20:.0f} MiB; the limit is "
                                              f"{MAX_LOG_BYTES // 2**20} MiB")
        h = hashlib.sha256()
        with p.open("rb") as f:  # streamed: one line in memory at a time
            for lineno, raw in enumerate(f, 1):
                h.update(raw)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise InputError(self.path, lineno, "not valid UTF-8 text") from None
                if not line.strip():
                    continue
                rec = parse_json(line, self.path, lineno)
                self._add(rec, read_line, lineno)
        self.file_hash = h.hexdigest()
        if not self.answers:
            raise InputError(self.path, None, "the judge log has no answers")

    def _add(self, rec: object, read_line: LogLineReader, lineno: int) -> None:
        if not isinstance(rec, dict):
            raise InputError(self.path, lineno, "expected a JSON object")
        key, ans = read_line(rec, self.path, lineno)
        old = self.answers.get(key)
        if old is not None and old.value != ans.value:
            raise InputError(self.path, lineno, f"conflicting answers for the same question: {old.value!r} "
                                                f"and {ans.value!r}")
        self.answers[key] = ans

    def identity(self) -> dict:
        out = {"spec": self.spec, "log_sha256": self.file_hash, "answers": len(self.answers)}
        if self.source is not None:
            out["source"] = self.source
        return out

    def answer(self, query: Question) -> Answer:
        ans = self.answers.get(tuple(query.key))
        if ans is None:
            return Answer(MISSING, rationale=f"not in judge log {Path(self.path).name}")
        return ans


def bind_questions(judge: Judge, sample: Question) -> Judge:
    """Tell a transport that names its prompt (`bind`: the LLM judges) which question a run asks, before it asks
    anything; other transports are returned unchanged. Families call it in `make_judge` with a sample question."""
    bind = getattr(judge, "bind", None)
    if callable(bind):
        bind(sample)
    return judge


def parse_judge_spec(spec: str, *, read_log_line: LogLineReader = read_span_log_line) -> Judge:
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
        return ReplayJudge(arg, read_log_line)
    if name in _LAZY_MODULES and name not in _EXTRA_JUDGES:
        importlib.import_module(_LAZY_MODULES[name])  # registers itself via register_judge
    if name in _EXTRA_JUDGES:
        return _EXTRA_JUDGES[name](arg)
    known = "exact, fuzzy[:T], replay:PATH, openai:MODEL, openai-json:MODEL, embed[:T]"
    raise JudgeSpecError(f"unknown judge spec {spec!r}; expected one of {known}")


_EXTRA_JUDGES: dict[str, Callable[[str], Judge]] = {}
_LAZY_MODULES = {"openai": "scoring.judges.openai_compat", "openai-json": "scoring.judges.openai_compat",
                 "embed": "scoring.judges.embed"}


def register_judge(name: str, factory: Callable[[str], Judge]) -> None:
    """Make `name:ARG` a judge spec (used by optional judges such as `openai` and `embed`)."""
    _EXTRA_JUDGES[name] = factory


def ask_with_cache(judge: Judge, queries: Sequence[Question], cache: AnswerCache | None,
                   stats: JudgeStats, progress: Progress | None = None) -> list[Answer]:
    """Answer every question, asking the judge only for those the cache lacks.

    Answers are written to the cache as they arrive (`yes`, `no`, `invalid`; never `missing`), so a run that is
    killed or cancelled keeps every answer it received and a re-run asks only the rest. A judge that
    `reports_each_answer` reports answers one by one; another cacheable judge is asked in chunks of
    `CACHE_CHUNK`. `progress(done, total)` counts cached answers as done and is called once before the first
    request, so a display shows the total and the cached count at once.

    Updates `stats`, one count per question: cached, invalid and missing answers (live, while asking), requests
    (questions sent: not the cancelled or `NOT_SENT` ones), failed, cancelled, retries, tokens, and `cost_usd` when
    the judge has `estimate_cost(prompt_tokens, completion_tokens)`.

    Raises:
        JudgeFailed: the transport reports a fatal error (bad key, unknown URL or model, connection refused), or
            every request sent failed. Answers received before it stay cached.
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
    for a in answers:
        if a is not None:
            stats.invalid += a.value == INVALID
    done = n - len(todo_idx)
    per_answer_progress = judge.cacheable  # local judges report their own progress (every 500 answers)
    if progress:
        progress(done, n)

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
        stats.invalid += a.value == INVALID
        stats.missing += a.value == MISSING
        stats.retries += a.retries
        stats.prompt_tokens += a.prompt_tokens
        stats.completion_tokens += a.completion_tokens
        if use_cache and a.value != MISSING:
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
        elif getattr(judge, "reports_each_answer", False):
            fresh = judge.ask_many(todo, None, on_answer=record)
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
    fatal = getattr(judge, "fatal", None)
    if fatal or (stats.requests and stats.failed == stats.requests and todo):
        raise JudgeFailed(f"judge {judge.spec!r} failed: {fatal or 'every request failed'}; nothing was stored "
                          f"({stats.cached} cached answers kept, {stats.requests} requests sent)")
    unanswered = sum(a is None for a in answers)
    if unanswered:
        raise RuntimeError(f"judge {judge.spec!r} returned no answer for {unanswered} of {len(todo)} queries")
    return [a for a in answers if a is not None]
