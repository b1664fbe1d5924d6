"""`openai:MODEL` / `openai-json:MODEL`: a transport to any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama,
llama.cpp server).

It sends each question's own prompt (`Question.prompt()`, the family's template) and reads the reply with the
question's parser (`Question.parse`): it knows no benchmark. `openai-json:MODEL` (answer mode `json`) asks each
question's structured form instead (`Question.structured()`: its own template and hash, a JSON schema sent as
`response_format`, a JSON parser), in the endpoint's dialect: `json_schema` (OpenAI, vLLM) or `json_object` with
a `schema` (llama-cpp-python's server; the default for a local URL).

`scoring.judges.registry` imports it on the first `openai:` / `openai-json:` spec (`text_judge_from_spec`,
`json_judge_from_spec`, with the user's `JudgeOptions`).
See docs/judges.md for the user-facing description.

- Configuration: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `REJUDGE_JUDGE_JSON_DIALECT` (or constructor arguments);
  run-time knobs that do not change answers come from `REJUDGE_JUDGE_CONCURRENCY`, `REJUDGE_JUDGE_TIMEOUT` (the
  total deadline of a request), `REJUDGE_JUDGE_MAX_REPLY_BYTES` (the reply size limit), `REJUDGE_JUDGE_MAX_RETRIES`
  and `REJUDGE_JUDGE_BACKOFF`. Every request, probes included, goes through `scoring.judges.bounded_http` (those
  two limits; a redirect to another host is refused and stops the job).
  The key is sent as a bearer token and kept nowhere
  else: not in `identity()`, not in cache keys, not in failure messages, not in stored replies; credentials in
  the URL (user info, query, a key in the path) and any `Authorization` value a server echoes are redacted from
  everything recorded (`scoring.judges.redact`).
- Requests: the question's prompt, temperature 0, max_tokens 400, one user message. `ask_many` runs them on a
  thread pool of `concurrency` workers (default: what the endpoint can serve); the openai client does no retries
  of its own (`max_retries=0`): ours back off exponentially with jitter on 429 / 408 / 409 / 5xx, timeouts,
  connection errors and malformed bodies, and count them in `Answer.retries`.
- Answers: what the question's parser reads (`yes` / `no`, a rating, a verdict), or `invalid` with the raw text and
  the reason (no tag, truncated, empty, other word). 401 / 403 / 404 are fatal, and so is a server that is
  gone (`CONNECTION_GONE_AFTER` failed connections in a row, at the start or mid-run) or failing every request
  (`CIRCUIT_FAILURES` failed attempts in a row: the circuit breaker): the remaining questions are not sent, retries
  waiting are abandoned, and `fatal` says why.
  A request that still fails after the retries is not a judge answer: it comes back `missing` with rationale
  `request failed: <reason>`, so the cache does not keep it and a re-run asks again; a request whose connection
  was refused at every attempt never reached the server and is `request failed: not sent (...)`. After `cancel()`,
  queries not yet sent come back `missing` / `cancelled`.
- Costs: `estimate_cost` from a per-model price table (USD per 1M tokens), editable through a JSON file named
  by `REJUDGE_PRICES`.
"""

from __future__ import annotations

import base64
import json
import math
import os
import random
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import openai

from scoring.errors import InputError, JudgeSpecError, parse_json, text_problem
from scoring.jsonl import check_file
from scoring.judges.answer import CANCELLED, INVALID, MISSING, NOT_SENT, REQUEST_FAILED, Answer, token_count
from scoring.judges.bounded_http import (
    DEFAULT_MAX_REPLY_BYTES,
    ENV_MAX_REPLY_BYTES,
    ReplyRefused,
    bounded_client,
    bounded_get,
)
from scoring.judges.prompts import PromptTemplate
from scoring.judges.question import Question
from scoring.judges.redact import redact_secrets, redact_url, url_secrets
from scoring.judges.registry import JudgeOptions
from scoring.judges.transport import AnswerCallback, Judge, Progress, request_hash

DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "no-key"
"""The key sent when none is set (a local server ignores it): no secret, so not scrubbed from replies."""
DEFAULT_CONCURRENCY = 8
"""For remote endpoints; a local server (loopback address) gets its reported parallel slots, else 1."""
LOCAL_CONCURRENCY = 1
CONNECTION_GONE_AFTER = 3
"""Failed connections in a row (no answer in between, over every request in flight) after which the server is taken
for gone and the job stops: a refused or reset connection at the start or after the server died mid-run (seconds,
not six retries of every remaining question)."""
CIRCUIT_FAILURES = 5
"""Failed attempts in a row (5xx, timeouts, malformed bodies, connection errors; not 429) after which the job stops:
a server that answers every request with an error (the circuit breaker). With more requests in flight than that,
`concurrency + 2`, so that one burst of simultaneous errors is not enough."""
DEFAULT_TIMEOUT = 60.0
"""The deadline of a request in seconds, start to last byte (connect, send, headers and body together, not per
read); a long abstract with a 400-token answer takes a few seconds."""
DEFAULT_MAX_RETRIES = 6
DEFAULT_BACKOFF = 1.0
"""Base delay in seconds: retry k waits a random time in [b * 2**k / 2, b * 2**k], capped at MAX_BACKOFF."""
MAX_BACKOFF = 60.0
RETRY_STATUS = frozenset({408, 409, 429})
"""HTTP statuses worth retrying (plus every 5xx): the same set the openai client itself retries."""
FATAL_STATUS = frozenset({401, 403, 404})
"""Statuses that will fail every request alike (bad key, no access, unknown model or URL): stop sending."""

ENV_CONCURRENCY = "REJUDGE_JUDGE_CONCURRENCY"
ENV_TIMEOUT = "REJUDGE_JUDGE_TIMEOUT"
ENV_MAX_RETRIES = "REJUDGE_JUDGE_MAX_RETRIES"
ENV_BACKOFF = "REJUDGE_JUDGE_BACKOFF"
ENV_PRICES = "REJUDGE_PRICES"
MAX_PRICES_BYTES = 2**20
ENV_DIALECT = "REJUDGE_JUDGE_JSON_DIALECT"

TEXT, JSON = "text", "json"
"""Answer modes: the family's free-text prompt (the paper's, for parity) or its structured JSON-answer form."""
JSON_SCHEMA, JSON_OBJECT = "json_schema", "json_object"
"""`response_format` dialects: OpenAI / vLLM `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`;
llama-cpp-python's server `{"type": "json_object", "schema": ...}` (it rejects `json_schema`)."""
DIALECTS = (JSON_SCHEMA, JSON_OBJECT)

# ---------------------------------------------------------------- prices

DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
}
"""USD per 1M (prompt, completion) tokens, OpenAI list prices for standard (non-batch) requests.
Override or extend with a JSON file named by `REJUDGE_PRICES`; local models have no price (cost `None`)."""

_DATE_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def load_prices(path: str | Path | None = None) -> dict[str, tuple[float, float]]:
    """The price table: `DEFAULT_PRICES` updated from a JSON file (`path`, else `$REJUDGE_PRICES` if set).

    The file maps model names to `{"prompt": USD, "completion": USD}` or `[prompt, completion]`, per 1M tokens.

    Raises:
        InputError: the file is missing, not JSON, or a price is not a non-negative number.
    """
    prices = dict(DEFAULT_PRICES)
    path = path if path is not None else os.environ.get(ENV_PRICES) or None
    if path is None:
        return prices
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), None, f"price file not found (set by {ENV_PRICES})")
    data = parse_json(check_file(p, limit=MAX_PRICES_BYTES, what="price file").read_bytes(), str(p), None,
                      "price file")
    if not isinstance(data, dict):
        raise InputError(str(p), None, "price file must be a JSON object: model -> {prompt, completion}")
    for model, v in data.items():
        pair = (v.get("prompt"), v.get("completion")) if isinstance(v, dict) else tuple(v) \
            if isinstance(v, list) and len(v) == 2 else None
        if pair is None or not all(isinstance(x, int | float) and not isinstance(x, bool) and x >= 0 for x in pair):
            raise InputError(str(p), None, f"price of {model!r} must be {{\"prompt\": USD, \"completion\": USD}} "
                                           "per 1M tokens (non-negative numbers)")
        prices[model] = (float(pair[0]), float(pair[1]))
    return prices


def model_price(model: str, prices: Mapping[str, tuple[float, float]] | None = None) -> tuple[float, float] | None:
    """(prompt, completion) USD per 1M tokens for `model`; a dated name such as `gpt-4o-mini-2024-07-18` falls
    back to its undated entry. None when the table has no price."""
    prices = load_prices() if prices is None else prices
    if model in prices:
        return prices[model]
    return prices.get(_DATE_SUFFIX.sub("", model))


def estimate_cost(model: str, prompt_tokens: int, completion_tokens: int,
                  prices: Mapping[str, tuple[float, float]] | None = None) -> float | None:
    """Estimated USD cost of the tokens at the table's price, or None when the model has no price.

    cost = (prompt_tokens * prompt_price + completion_tokens * completion_price) / 1e6
    """
    price = model_price(model, prices)
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


# ---------------------------------------------------------------- configuration helpers


def _endpoint_root(url: str) -> str:
    """The URL a probe asks (`/props`, `/models`): scheme, host and path as the chat requests use them, without user
    info or query (urllib sends neither; `probe_headers` carries the credentials instead). Not for recording: that
    is `redact_url`."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return ""
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _env_number(name: str, default: float, cast: Callable[[str], float], minimum: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = cast(raw.strip())
    except ValueError:
        raise JudgeSpecError(f"{name} must be a number, got {raw!r}") from None
    if value < minimum:
        raise JudgeSpecError(f"{name} must be at least {minimum:g}, got {raw!r}")
    return value


class _Failure(Exception):
    def __init__(self, reason: str, *, retryable: bool, fatal: bool = False, retry_after: float | None = None,
                 connection: bool = False, refused: bool = False, counts_for_circuit: bool = True):
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.fatal = fatal
        self.retry_after = retry_after
        self.connection = connection
        self.refused = refused
        """The connection was refused: the request never reached the server."""
        self.counts_for_circuit = counts_for_circuit


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) / scale)
            except ValueError:
                return None
    return None


# ---------------------------------------------------------------- the judge


def _is_local(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def probe_headers(base_url: str, api_key: str | None) -> dict[str, str]:
    """The credentials a request to `base_url` carries, as headers: Basic auth from the URL's user info (the HTTP
    client sends that instead of the key, as for every chat request), else the key as a bearer token.

    >>> probe_headers("http://u:p@h/v1", "k"), probe_headers("http://h/v1", "k"), probe_headers("http://h/v1", None)
    ({'Authorization': 'Basic dTpw'}, {'Authorization': 'Bearer k'}, {})
    """
    try:
        parts = urlsplit(base_url.strip())
        user, password = parts.username, parts.password
    except ValueError:
        return {}
    if user is not None or password is not None:
        pair = f"{unquote(user or '')}:{unquote(password or '')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def server_slots(base_url: str, timeout: float = 1.0, api_key: str | None = None) -> int | None:
    """Parallel slots a llama.cpp-style server reports (`GET /props` -> `total_slots`), or None. Asked with the
    credentials and query the chat requests carry (`probe_headers`), so a server behind a key answers it too."""
    headers = probe_headers(base_url, api_key)
    root = _endpoint_root(base_url)
    root = root[:-3] if root.endswith("/v1") else root
    try:
        query = urlsplit(base_url.strip()).query
    except ValueError:
        return None
    for path in ("/props", "/v1/props"):
        raw = bounded_get(root + path + (f"?{query}" if query else ""), headers, timeout, 65536)
        try:
            data = json.loads(raw) if raw is not None else None
        except ValueError:
            continue
        slots = data.get("total_slots") if isinstance(data, dict) else None
        if isinstance(slots, int) and slots > 0:
            return slots
    return None


def served_models(base_url: str | None = None, api_key: str | None = None, timeout: float = 2.0) -> list[str]:
    """The model names an endpoint serves (`GET {base_url}/models`, with the credentials requests carry), [] when
    it does not say. A llama.cpp or vLLM server lists the one model it serves: the name a run should carry."""
    url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).strip()
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    try:
        query = urlsplit(url).query
    except ValueError:
        return []
    raw = bounded_get(_endpoint_root(url) + "/models" + (f"?{query}" if query else ""), probe_headers(url, key),
                      timeout, 1 << 20)
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:  # an endpoint without the route, or down: no information
        return []
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    return [m["id"].strip() for m in items if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"].strip()]


def default_dialect(base_url: str) -> str:
    """`json_object` (llama-cpp-python's server) for a local URL, else `json_schema` (OpenAI, vLLM)."""
    return JSON_OBJECT if _is_local(base_url) else JSON_SCHEMA


def default_concurrency(base_url: str, api_key: str | None = None) -> int:
    """What the endpoint can serve: remote APIs 8; a local server its reported slots, else 1 (llama.cpp and
    Ollama serve one request at a time: 8 at once made each request 2x slower and caused timeouts)."""
    if not _is_local(base_url):
        return DEFAULT_CONCURRENCY
    return server_slots(base_url, api_key=api_key) or LOCAL_CONCURRENCY


class OpenAIJudge(Judge):
    """`openai:MODEL` / `openai-json:MODEL`: asks an OpenAI-compatible chat endpoint each question's own prompt.

    Args:
        model: model name sent with each request (`gpt-4o-mini` in the paper).
        answer_mode: `text` (the family's free-text prompt; spec `openai:MODEL`) or `json` (its structured form
            with `response_format`; spec `openai-json:MODEL`).
        dialect: `response_format` dialect in `json` mode: `json_schema` or `json_object` (default
            `$REJUDGE_JUDGE_JSON_DIALECT`, else `default_dialect(base_url)`).
        base_url: endpoint root, e.g. `http://localhost:8000/v1`; default `$OPENAI_BASE_URL`, else OpenAI.
        api_key: bearer token; default `$OPENAI_API_KEY`. Required for api.openai.com; a local server
            without a key gets a placeholder.
        concurrency: requests in flight at once (default `$REJUDGE_JUDGE_CONCURRENCY`, else what the endpoint
            can serve: `default_concurrency`).
        timeout: the deadline of each request in seconds, start to last byte (default `$REJUDGE_JUDGE_TIMEOUT`,
            else 60).
        max_reply_bytes: the largest reply read (default `$REJUDGE_JUDGE_MAX_REPLY_BYTES`, else 4 MiB); a
            larger one is a failed request, and is never held in memory.
        max_retries: retries per query after the first attempt (default `$REJUDGE_JUDGE_MAX_RETRIES`, else 6).
        backoff: base of the exponential backoff in seconds (default `$REJUDGE_JUDGE_BACKOFF`, else 1).
        temperature: sampling temperature (0, as the paper).
        max_tokens: answer length cap (400, as the paper; a justification cut off there is `invalid`).
        prices: price table (default `load_prices()`).

    Raises:
        JudgeSpecError: empty model, bad setting, or no API key for api.openai.com.
    """

    cacheable = True
    reports_each_answer = True
    batchable = True

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 concurrency: int | None = None, timeout: float | None = None, max_retries: int | None = None,
                 backoff: float | None = None, temperature: float = 0.0, max_tokens: int = 400,
                 prices: Mapping[str, tuple[float, float]] | None = None, answer_mode: str = TEXT,
                 dialect: str | None = None, max_reply_bytes: int | None = None) -> None:
        model = model.strip()
        if answer_mode not in (TEXT, JSON):
            raise JudgeSpecError(f"answer_mode must be {TEXT!r} or {JSON!r}, got {answer_mode!r}")
        prefix = "openai" if answer_mode == TEXT else "openai-json"
        if not model:
            raise JudgeSpecError(f"{prefix} needs a model name: {prefix}:MODEL (e.g. {prefix}:gpt-4o-mini)")
        self.model = model
        self.answer_mode = answer_mode
        self.spec = f"{prefix}:{model}"
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
        dialect = dialect or (os.environ.get(ENV_DIALECT) or "").strip() or default_dialect(self.base_url)
        if dialect not in DIALECTS:
            raise JudgeSpecError(f"{ENV_DIALECT} must be one of {', '.join(DIALECTS)}, got {dialect!r}")
        self.dialect = dialect
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key:
            if redact_url(self.base_url) == DEFAULT_BASE_URL:
                raise JudgeSpecError("OPENAI_API_KEY is not set; the openai judge needs it for api.openai.com "
                                     "(or set OPENAI_BASE_URL to a local OpenAI-compatible server)")
            key = NO_KEY  # local servers (vLLM, Ollama, llama.cpp) ignore it; the client insists on one
        if isinstance(temperature, bool) or not isinstance(temperature, int | float) or not math.isfinite(temperature) \
                or temperature < 0:
            raise JudgeSpecError(f"{prefix}: the temperature must be a finite number >= 0, got {temperature!r}")
        if concurrency is None and os.environ.get(ENV_CONCURRENCY):
            concurrency = int(_env_number(ENV_CONCURRENCY, DEFAULT_CONCURRENCY, int, 1))
        self.concurrency = int(concurrency if concurrency is not None else default_concurrency(self.base_url, key))
        self.timeout = float(timeout if timeout is not None
                             else _env_number(ENV_TIMEOUT, DEFAULT_TIMEOUT, float, 0.001))
        self.max_retries = int(max_retries if max_retries is not None
                               else _env_number(ENV_MAX_RETRIES, DEFAULT_MAX_RETRIES, int, 0))
        self.backoff = float(backoff if backoff is not None else _env_number(ENV_BACKOFF, DEFAULT_BACKOFF, float, 0))
        self.max_reply_bytes = int(max_reply_bytes if max_reply_bytes is not None
                                   else _env_number(ENV_MAX_REPLY_BYTES, DEFAULT_MAX_REPLY_BYTES, int, 1024))
        if self.concurrency < 1 or self.timeout <= 0 or self.max_retries < 0 or self.backoff < 0 \
                or self.max_reply_bytes < 1024:
            raise JudgeSpecError("openai judge: concurrency >= 1, timeout > 0, max_retries >= 0, backoff >= 0 and "
                                 "max_reply_bytes >= 1024")
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.prices = dict(prices) if prices is not None else load_prices()
        self._key = key
        self._secrets = [*([key] if key != NO_KEY and len(key) >= 4 else []), *url_secrets(self.base_url)]
        # A query string in the URL (`?api-version=...`, a signed token) is sent with every request, as
        # `default_query`: the client would otherwise glue the path onto it.
        root, _, query = self.base_url.partition("?")
        self._client = openai.OpenAI(api_key=key, base_url=root.rstrip("/"), max_retries=0, timeout=self.timeout,
                                     default_query=dict(parse_qsl(query)) or None,
                                     http_client=bounded_client(self.timeout, self.max_reply_bytes))
        self._cancel = threading.Event()
        self._halt = threading.Event()
        """Set on cancel() or a fatal error: wakes every worker waiting to retry."""
        self._fatal: str | None = None
        self._lock = threading.Lock()
        self._answered = 0
        self._failed_in_row = 0
        self._connection_failed_in_row = 0
        self._circuit_limit = max(CIRCUIT_FAILURES, self.concurrency + 2)
        self._prompts: dict[str, str] = {}

    # ------------------------------------------------------------ identity and cache

    @property
    def params(self) -> dict:
        """Request parameters besides the model, the message and the schema (they change answers; keyed in the
        cache). In `json` mode also the answer mode and dialect (the schema itself is keyed per question)."""
        out: dict = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.answer_mode == JSON:
            out |= {"answer_mode": JSON, "response_format": self.dialect}
        return out

    def identity(self) -> dict:
        """Spec, model, endpoint (credentials stripped), request parameters, prompt name and hash, run-time knobs,
        price. Never the API key.

        The prompt is the template of the questions this judge was bound to (`bind`) or has been asked: one
        template gives `prompt` and `prompt_hash`; several give `prompts` {name: hash} as well."""
        out = {"spec": self.spec, "model": self.model, "base_url": redact_url(self.base_url),
               "params": self.params, "answer_mode": self.answer_mode, "concurrency": self.concurrency,
               "timeout": self.timeout, "max_reply_bytes": self.max_reply_bytes, "max_retries": self.max_retries,
               "price_usd_per_1m": list(p) if (p := model_price(self.model, self.prices)) else None}
        if self.answer_mode == JSON:
            out["dialect"] = self.dialect
        prompts = dict(self._prompts)
        if prompts:
            name = next(iter(prompts))
            out |= {"prompt": name, "prompt_hash": prompts[name]}
            if len(prompts) > 1:
                out["prompts"] = prompts
        return out

    def bind(self, sample: Question | PromptTemplate) -> OpenAIJudge:
        """Record the prompt template a run's questions use, before asking (for `identity`): a `PromptTemplate`,
        or a sample `Question` (its structured form's template in `json` mode)."""
        if isinstance(sample, PromptTemplate):
            self._note(sample)
        else:
            self._note(self.form(sample).template)
            self.bound = sample
        return self

    def _note(self, template: PromptTemplate | None) -> None:
        if template is not None and template.name not in self._prompts:
            self._prompts[template.name] = template.version

    @property
    def fatal(self) -> str | None:  # type: ignore[override] (read-only here)
        return self._fatal

    def form(self, query: Question) -> Question:
        """The question as this judge asks it: itself (`text`) or its structured form (`json`).

        Raises:
            JudgeSpecError: `json` mode and the family's question has no structured form.
        """
        if self.answer_mode == TEXT:
            return query
        structured = query.structured()
        if structured is None or structured.schema is None:
            raise JudgeSpecError(f"{self.spec}: this family's questions have no structured (JSON-answer) form; "
                                 f"use openai:{self.model}")
        return structured

    def render(self, query: Question) -> str:
        """The exact prompt sent for `query` (in this judge's answer mode)."""
        q = self.form(query)
        prompt = q.prompt()
        if prompt is None:
            raise JudgeSpecError("the openai judge needs questions with a prompt; this family asks none")
        self._note(q.template)
        return prompt

    def response_format(self, query: Question) -> dict | None:
        """The `response_format` sent for `query`: None in `text` mode, else its schema in this judge's dialect."""
        if self.answer_mode == TEXT:
            return None
        q = self.form(query)
        schema = dict(q.schema or {})
        if self.dialect == JSON_OBJECT:
            return {"type": "json_object", "schema": schema}
        name = "".join(c if c.isalnum() or c in "_-" else "_" for c in (q.template.name if q.template else "answer"))
        return {"type": "json_schema", "json_schema": {"name": name[:64], "schema": schema, "strict": True}}

    def request_body(self, query: Question) -> dict:
        """Exactly the JSON body this judge POSTs to `/chat/completions` for `query` (also the body of a Batch API
        request line, `audit/judge_batch.py`)."""
        body: dict = {"model": self.model, "messages": [{"role": "user", "content": self.render(query)}],
                      "temperature": self.temperature, "max_tokens": self.max_tokens}
        rf = self.response_format(query)
        if rf is not None:
            body["response_format"] = rf
        return body

    def cache_key(self, query: Question) -> str:
        """sha256 over (endpoint, model, params, prompt hash, rendered prompt[, response_format]): identical
        requests share a key."""
        q = self.form(query)
        version = q.template.version if q.template is not None else None
        parts: list = ["openai-chat", redact_url(self.base_url), self.model, self.params, version, self.render(query)]
        rf = self.response_format(query)
        if rf is not None:
            parts.append(rf)
        return request_hash(parts)

    def estimate_cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        return estimate_cost(self.model, prompt_tokens, completion_tokens, self.prices)

    # ------------------------------------------------------------ control

    def cancel(self) -> None:
        """Stop issuing requests (thread-safe). Requests in flight finish and are kept; the rest come back
        `missing` / `cancelled`. Sticky: build a new judge for a new job."""
        self._cancel.set()
        self._halt.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def close(self) -> None:
        self._client.close()

    # ------------------------------------------------------------ asking

    def ask_many(self, queries: Sequence[Question], progress: Progress | None = None,
                 on_answer: AnswerCallback | None = None) -> list[Answer]:
        """Answer every query, `concurrency` at a time.

        Args:
            queries: the questions; answers come back in the same order.
            progress: called with (done, total) after each answer.
            on_answer: called with (index, answer) as each answer arrives, in the calling thread (so it may
                write to a database opened there); also for queries that come back `cancelled`.
        """
        n = len(queries)
        out: list[Answer | None] = [None] * n
        done = 0

        def deliver(i: int, a: Answer) -> None:
            nonlocal done
            out[i] = a
            done += 1
            if on_answer is not None:
                on_answer(i, a)
            if progress is not None:
                progress(done, n)

        todo = iter(range(n))
        pending: dict[Future[Answer], int] = {}
        pool = ThreadPoolExecutor(max_workers=max(1, min(self.concurrency, n)), thread_name_prefix="rejudge-judge")

        def fill() -> None:
            # Submit lazily, never more than `concurrency` at once, so cancel() stops new requests at once.
            while len(pending) < self.concurrency and not self._cancel.is_set():
                i = next(todo, None)
                if i is None:
                    return
                pending[pool.submit(self.ask_one, queries[i])] = i

        try:
            fill()
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    deliver(pending.pop(f), f.result())
                fill()
        except BaseException:
            self.cancel()  # KeyboardInterrupt or a failing callback: stop the workers' retries too
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        for i in range(n):
            if out[i] is None:
                deliver(i, Answer(MISSING, rationale=CANCELLED))
        return [a for a in out if a is not None]

    def ask_one(self, query: Question) -> Answer:
        """One query with retries; never raises for transport problems (they become `missing` answers)."""
        body = self.request_body(query)
        retries = 0
        delivered = False  # whether an attempt reached the server (a refused connection did not)
        while True:
            if self._cancel.is_set():
                return Answer(MISSING, rationale=CANCELLED, retries=retries)
            if self._fatal is not None:
                why = f"{NOT_SENT} ({self._fatal})" if not delivered else f"{REQUEST_FAILED}: {self._fatal}"
                return Answer(MISSING, rationale=why, retries=retries)
            try:
                a = self._request(query, body, retries)
                self._succeeded()
                return a
            except _Failure as f:
                delivered = delivered or not f.refused
                self._failed(f)
                if not f.retryable or retries >= self.max_retries or self._fatal is not None:
                    suffix = f" (after {retries} retries)" if retries else ""
                    prefix = REQUEST_FAILED if delivered else NOT_SENT
                    reason = self._fatal if self._fatal is not None and not f.fatal else f.reason
                    return Answer(MISSING, rationale=f"{prefix}: {reason}{suffix}" if delivered
                                  else f"{prefix} ({reason}){suffix}", retries=retries)
                delay = self._delay(retries, f.retry_after)
                retries += 1
                if self._halt.wait(delay) and self._cancel.is_set():
                    return Answer(MISSING, rationale=CANCELLED, retries=retries)

    def _succeeded(self) -> None:
        with self._lock:
            self._answered += 1
            self._failed_in_row = self._connection_failed_in_row = 0

    def _failed(self, f: _Failure) -> None:
        """Count a failed attempt; stop the job when it says every further request would fail alike."""
        with self._lock:
            if f.counts_for_circuit:
                self._failed_in_row += 1
            if f.connection:
                self._connection_failed_in_row += 1
            why = None
            if f.fatal:
                why = f.reason
            elif f.connection and self._connection_failed_in_row >= CONNECTION_GONE_AFTER:
                state = (f"the server stopped answering after {self._answered} answers" if self._answered
                         else "the server cannot be reached")
                why = f"{state} ({self._connection_failed_in_row} failed connections in a row; last: {f.reason})"
            elif self._failed_in_row >= self._circuit_limit:
                why = (f"the server is failing: {self._failed_in_row} attempts in a row failed, retries included, "
                       f"after {self._answered} answers (last: {f.reason})")
            if why is not None and self._fatal is None:
                self._fatal = why
                self._halt.set()

    def _delay(self, retry: int, retry_after: float | None) -> float:
        ceiling = min(MAX_BACKOFF, self.backoff * 2 ** retry)
        delay = random.uniform(ceiling / 2, ceiling)  # "equal jitter": spread out, but never zero
        if retry_after is not None:
            delay = max(delay, min(retry_after, MAX_BACKOFF))
        return delay

    def _redact(self, text: str) -> str:
        return redact_secrets(text, self._secrets)

    def _request(self, query: Question, body: Mapping, retries: int) -> Answer:
        try:
            completion = self._client.chat.completions.create(**body, timeout=self.timeout)
        except openai.APITimeoutError:
            raise _Failure(f"timed out: no complete reply within {self.timeout:g} s (the deadline per request, "
                           f"{ENV_TIMEOUT})", retryable=True) from None
        except ReplyRefused as e:
            raise _Failure(self._redact(e.reason), retryable=False, fatal=e.fatal) from None
        except openai.APIConnectionError as e:
            cause = e.__cause__ or e.__context__
            raise _Failure(self._redact(f"connection error: {e}" + (f" ({_short(cause, 120)})" if cause else "")),
                           retryable=True, connection=True, refused=_refused(cause)) from None
        except openai.APIStatusError as e:
            code = e.status_code
            msg = self._redact(f"HTTP {code} {type(e).__name__}: {_short(e)}")
            raise _Failure(msg, retryable=code in RETRY_STATUS or code >= 500, fatal=code in FATAL_STATUS,
                           retry_after=_retry_after(e.response.headers),
                           counts_for_circuit=code != 429 and (code >= 500 or code in RETRY_STATUS)) from None
        except (openai.APIResponseValidationError, ValueError) as e:
            raise _Failure(self._redact(f"malformed response: {type(e).__name__}: {_short(e)}"),
                           retryable=True) from None
        except openai.OpenAIError as e:
            raise _Failure(self._redact(f"{type(e).__name__}: {_short(e)}"), retryable=False) from None
        choices = getattr(completion, "choices", None)
        if not choices:
            raise _Failure("malformed response: no choices", retryable=True)
        choice = choices[0]
        message = choice.message
        raw = (message.content if message is not None else None) or ""
        if not raw and message is not None and getattr(message, "refusal", None):
            raw = message.refusal or ""
        usage = getattr(completion, "usage", None)
        pt = token_count(getattr(usage, "prompt_tokens", None))
        ct = token_count(getattr(usage, "completion_tokens", None))
        return self.answer_from_reply(query, raw, choice.finish_reason, pt, ct, retries)

    def answer_from_reply(self, query: Question, raw: str, finish_reason: str | None, prompt_tokens: int = 0,
                          completion_tokens: int = 0, retries: int = 0) -> Answer:
        """The answer a reply gives to `query`, read by the parser of the form this judge asked (live replies and
        Batch API results alike). The reply text and rationale are stored (cache, decisions, judge logs): the key
        and any `Authorization` value a server echoed are redacted from both, after parsing."""
        if raw and (problem := text_problem(raw)):  # a `\\ud800` escape: unstorable, so one invalid answer
            raw = raw.encode("utf-8", "replace").decode("utf-8")
            return Answer(INVALID, raw=self._redact(raw), rationale=f"unparseable: the reply {problem}",
                          prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, retries=retries)
        parsed = self.form(query).parse(raw, truncated=finish_reason == "length")
        raw = self._redact(raw) if raw else raw
        if parsed.value != INVALID:
            rationale = self._redact(parsed.rationale) if parsed.rationale else parsed.rationale
            return Answer(parsed.value, raw=raw, rationale=rationale, prompt_tokens=prompt_tokens,
                          completion_tokens=completion_tokens, retries=retries)
        return Answer(INVALID, raw=raw, rationale=self._redact(f"unparseable: {parsed.reason}"),
                      prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, retries=retries)


_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})$")


def same_model(answered: str, configured: str) -> bool:
    """Whether a reply's `model` is the configured one: the same name, or a dated snapshot of it (OpenAI answers
    `gpt-4o-mini` with `gpt-4o-mini-2024-07-18`, `gpt-4` with `gpt-4-0613`).

    >>> same_model("gpt-4o-mini-2024-07-18", "gpt-4o-mini"), same_model("gpt-4o", "gpt-4o-mini")
    (True, False)
    """
    return answered == configured or (answered.startswith(configured)
                                      and _SNAPSHOT.fullmatch(answered[len(configured):]) is not None)


def _refused(cause: BaseException | None) -> bool:
    """Whether a connection error's cause is a connection never established (refused, no route, unknown host): the
    HTTP client's `ConnectError` (named, not imported: the client library is the openai package's choice)."""
    seen = 0
    while cause is not None and seen < 5:
        if isinstance(cause, ConnectionRefusedError) or type(cause).__name__ in ("ConnectError", "ConnectTimeout"):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def _short(e: BaseException, limit: int = 200) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit] + "…"


def _from_spec(arg: str, options: JudgeOptions, answer_mode: str) -> OpenAIJudge:
    kw: dict = {"base_url": options.base_url, "api_key": options.api_key, "concurrency": options.concurrency,
                "prices": options.prices}
    if options.temperature is not None:
        kw["temperature"] = options.temperature
    return OpenAIJudge(arg, answer_mode=answer_mode, **kw)


def text_judge_from_spec(arg: str, options: JudgeOptions, _read_log_line: object = None) -> OpenAIJudge:
    """The `openai:MODEL` factory (`scoring.judges.registry`), with the user's `JudgeOptions`."""
    return _from_spec(arg, options, TEXT)


def json_judge_from_spec(arg: str, options: JudgeOptions, _read_log_line: object = None) -> OpenAIJudge:
    """The `openai-json:MODEL` factory, with the user's `JudgeOptions`."""
    return _from_spec(arg, options, JSON)
