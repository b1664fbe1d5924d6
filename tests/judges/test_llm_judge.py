"""The openai judge, its prompts and parsers, prices, and progressive caching (scoring/judges/openai_compat.py,
scoring/judges/prompts.py, scoring/families/*/prompts.py, scoring/judges/asking.ask_with_cache), against a scripted
local server (devtools/judge_server.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Iterator, Sequence
from types import SimpleNamespace

import pytest

from devtools.judge_server import NO_TEXT, TRUNCATED_TEXT, YES_TEXT, JudgeServer, equal_spans_script, spans_of
from scoring.errors import InputError, JudgeFailed, JudgeSpecError
from scoring.families.chimera import prompts as chimera_prompts
from scoring.families.chimera.questions import SpanQuery, bind_judge, span_question
from scoring.families.chimera.scorer import judge_log_records
from scoring.families.ideation import prompts as ideation_prompts
from scoring.judges import prompts as core_prompts
from scoring.judges.answer import CANCELLED, INVALID, MISSING, NO, NOT_SENT, REQUEST_FAILED, YES, Answer, JudgeStats
from scoring.judges.asking import ask_with_cache
from scoring.judges.local import ExactJudge
from scoring.judges.openai_compat import (
    DEFAULT_PRICES,
    OpenAIJudge,
    default_concurrency,
    estimate_cost,
    load_prices,
    model_price,
    redact_secrets,
    redact_url,
    url_secrets,
)
from scoring.judges.registry import parse_judge_spec
from scoring.judges.transport import Judge

KEY = "sk-unit-test-key-0123456789"
TEXT = "We combine graph neural networks with contrastive learning to detect fraud in payment networks."

prompts = SimpleNamespace(**{**vars(core_prompts), **vars(chimera_prompts), **vars(ideation_prompts)})


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as srv:
        yield srv


def make_judge(srv: JudgeServer, **kw: object) -> OpenAIJudge:
    args: dict = {"base_url": srv.base_url, "api_key": KEY, "concurrency": 4, "timeout": 5.0, "max_retries": 3,
                  "backoff": 0.001}
    args.update(kw)
    return OpenAIJudge("test-model", **args)


def q(span1: str, span2: str, doc: str = "d1") -> SpanQuery:
    return span_question(doc, TEXT, "comb-element", span1, span2)


def queries(n: int) -> list[SpanQuery]:
    """n distinct queries; even ones have equal spans (answer yes), odd ones differ (no)."""
    return [q(f"span {i}", f"span {i}" if i % 2 == 0 else f"other {i}") for i in range(n)]


class DictCache:
    """An in-memory AnswerCache that records each put_many call."""

    def __init__(self) -> None:
        self.data: dict[str, Answer] = {}
        self.puts: list[int] = []

    def get_many(self, keys: Sequence[str]) -> dict[str, Answer]:
        return {k: self.data[k] for k in keys if k in self.data}

    def put_many(self, answers: dict[str, Answer]) -> None:
        self.puts.append(len(answers))
        self.data.update(answers)


# ---------------------------------------------------------------- prompts


def test_chimera_prompt_is_the_papers_text_verbatim() -> None:
    # sha256 of SPAN_COMPARISON_PROMPT in noy-sternlicht/CHIMERA-KB src/eval.py (1,276 characters).
    full = hashlib.sha256(prompts.CHIMERA_SPAN_PROMPT.encode()).hexdigest()
    assert full == "6e5b6cc66c82aadd7aed03670446329c26a7bad7f576989644dd92de88f5687b"
    assert len(prompts.CHIMERA_SPAN_PROMPT) == 1276
    assert prompts.CHIMERA_SPAN_PROMPT_HASH == full[:12] == prompts.CHIMERA_SPAN.version
    assert prompts.CHIMERA_SPAN.fields == ("ENTITY_TYPE", "TEXT", "SPAN1", "SPAN2")


def test_render_fills_every_field_and_leaves_braces_in_values_alone() -> None:
    p = prompts.render_span_prompt("comb-element", "a {weird} text", "x {SPAN2}", "y")
    assert "<full_text>\na {weird} text\n</full_text>" in p
    assert "<span1>\nx {SPAN2}\n</span1>" in p and "<span2>\ny\n</span2>" in p
    assert p.count("the same comb-element") == 3
    assert spans_of(p) == ("x {SPAN2}", "y")
    with pytest.raises(KeyError, match="missing fields"):
        prompts.CHIMERA_SPAN.render(TEXT="t", SPAN1="a", SPAN2="b")


def test_every_template_has_a_12_hex_version_that_tracks_its_text() -> None:
    versions = {t.name: t.version for t in prompts.TEMPLATES.values()}
    assert len(set(versions.values())) == len(versions) == 5
    json_hash = prompts.CHIMERA_SPAN_JSON_PROMPT_HASH
    assert json_hash == prompts.CHIMERA_SPAN_JSON.version != prompts.CHIMERA_SPAN_PROMPT_HASH
    for name, v in versions.items():
        assert len(v) == 12 and int(v, 16) >= 0
        assert v == prompts.template_hash(prompts.TEMPLATES[name].text)
    assert prompts.template_hash(prompts.CHIMERA_SPAN_PROMPT + " ") != prompts.CHIMERA_SPAN_PROMPT_HASH
    assert prompts.IDEATION_ABSOLUTE_PROMPT_HASH == prompts.IDEATION_ABSOLUTE.version
    assert prompts.IDEATION_PAIRWISE_PROMPT_HASH != prompts.IDEATION_PAIRWISE_NO_TIE_PROMPT_HASH


@pytest.mark.parametrize(("raw", "value", "reason"), [
    ("<justification>same</justification>\n<answer>Yes</answer>", YES, None),
    ("<answer>\n   No\n   </answer>", NO, None),
    ("<answer> YES </answer> trailing", YES, None),
    ("<answer>No</answer> and later <answer>Yes</answer>", NO, None),  # the first tag, as the paper
    ("Yes", INVALID, "no <answer> tag"),  # the paper: no match, silently
    ("<justification>The first span", INVALID, "no <answer> tag"),
    ("<answer>Yes", INVALID, "no closing </answer> tag"),
    ("<answer>Yes.</answer>", INVALID, "not Yes or No"),
    ("<answer>Maybe</answer>", INVALID, "not Yes or No"),
    ("<answer></answer>", INVALID, "not Yes or No"),
    ("", INVALID, "empty answer"),
    ("   \n", INVALID, "empty answer"),
    (None, INVALID, "empty answer"),
])
def test_parse_span_answer(raw: str | None, value: str, reason: str | None) -> None:
    parsed = prompts.parse_span_answer(raw)
    assert parsed.value == value
    assert (parsed.reason is None) if reason is None else (reason in (parsed.reason or ""))


def test_parse_span_answer_keeps_the_justification_and_names_truncation() -> None:
    p = prompts.parse_span_answer("<justification>\n  both name GNNs\n</justification><answer>yes</answer>")
    assert p.ok and p.rationale == "both name GNNs"
    t = prompts.parse_span_answer(TRUNCATED_TEXT, truncated=True)
    assert t.value == INVALID and "token limit" in (t.reason or "")


@pytest.mark.parametrize(("raw", "value"), [
    ("Solid idea.\nSCORE: 4", "4"),
    ("SCORE: 4/5", "4"),
    ("SCORE: 4.0", "4"),
    ("**SCORE:** 5", "5"),
    ("score: 1.", "1"),
    ("SCORE: 3\nSCORE: 3", "3"),
    ("SCORE: 6", INVALID),
    ("SCORE: 0", INVALID),
    ("SCORE: 3.5", INVALID),
    ("SCORE: 3 or 4", INVALID),
    ("SCORE: four", INVALID),
    ("SCORE: 4/10", INVALID),
    ("SCORE: 3\nSCORE: 4", INVALID),
    ("I cannot rate this idea.", INVALID),
    ("The idea is a 4 out of 5", INVALID),  # not in the slot
    ("", INVALID),
])
def test_parse_absolute_score(raw: str, value: str) -> None:
    assert prompts.parse_absolute_score(raw).value == value


def test_absolute_prompt_renders_question_idea_and_criterion() -> None:
    p = prompts.render_absolute_prompt("How to detect fraud?", "Use GNNs.", "novelty")
    assert "How to detect fraud?" in p and "Use GNNs." in p and prompts.CRITERIA["novelty"] in p
    assert p.rstrip().endswith("SCORE: <n>")
    with pytest.raises(KeyError, match="unknown criterion"):
        prompts.render_absolute_prompt("q", "i", "elegance")
    assert "elegance: nice" in prompts.render_absolute_prompt("q", "i", "elegance", "elegance: nice")


@pytest.mark.parametrize(("raw", "allow_tie", "value"), [
    ("A is more novel.\nWINNER: FIRST", True, prompts.FIRST),
    ("WINNER: second", True, prompts.SECOND),
    ("WINNER: **TIE**", True, prompts.TIE),
    ("WINNER: TIE", False, INVALID),
    ("WINNER: both", True, INVALID),
    ("WINNER: FIRST\nWINNER: SECOND", True, INVALID),
    ("The first one.", True, INVALID),
    ("", True, INVALID),
])
def test_parse_pairwise_winner(raw: str, allow_tie: bool, value: str) -> None:
    assert prompts.parse_pairwise_winner(raw, allow_tie=allow_tie).value == value


def test_pairwise_prompts_ask_both_orders() -> None:
    ab, ba = prompts.pairwise_prompts("q?", "IDEA-A", "IDEA-B", "feasibility")
    assert ab.index("IDEA-A") < ab.index("IDEA-B") and ba.index("IDEA-B") < ba.index("IDEA-A")
    assert "FIRST, SECOND or TIE" in ab
    ab_nt, _ = prompts.pairwise_prompts("q?", "IDEA-A", "IDEA-B", "feasibility", allow_tie=False)
    assert "tie is not allowed" in ab_nt
    # a consistent judge names the same idea in both orders; a position-driven one picks the same slot
    assert prompts.winner_of_pair(prompts.FIRST, prompts.SECOND) == ("a", "a")
    assert prompts.winner_of_pair(prompts.FIRST, prompts.FIRST) == ("a", "b")
    assert prompts.winner_of_pair(prompts.TIE, INVALID) == ("tie", None)


# ---------------------------------------------------------------- prices


def test_price_table_and_cost() -> None:
    assert DEFAULT_PRICES["gpt-4o-mini"] == (0.15, 0.60) and DEFAULT_PRICES["gpt-4o"] == (2.50, 10.00)
    # 1M prompt tokens at 0.15 + 200k completion tokens at 0.60 = 0.15 + 0.12
    assert estimate_cost("gpt-4o-mini", 1_000_000, 200_000, DEFAULT_PRICES) == pytest.approx(0.27)
    assert estimate_cost("gpt-4o-mini-2024-07-18", 1_000_000, 0, DEFAULT_PRICES) == pytest.approx(0.15)
    assert model_price("gpt-4o-mini", DEFAULT_PRICES) == (0.15, 0.60)  # not gpt-4o's price by prefix
    assert estimate_cost("llama3.1:8b", 10, 10, DEFAULT_PRICES) is None


def test_prices_can_be_overridden_from_a_json_file(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"gpt-4o-mini": {"prompt": 1.0, "completion": 2.0}, "llama3.1:8b": [0, 0]}))
    monkeypatch.setenv("REJUDGE_PRICES", str(f))
    prices = load_prices()
    assert prices["gpt-4o-mini"] == (1.0, 2.0) and prices["gpt-4o"] == (2.50, 10.00)
    assert estimate_cost("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(3.0)
    assert estimate_cost("llama3.1:8b", 5, 5) == 0.0
    f.write_text('{"gpt-4o": {"prompt": -1}}')
    with pytest.raises(InputError, match="price of 'gpt-4o'"):
        load_prices()
    f.write_text("{nope")
    with pytest.raises(InputError, match="not valid JSON"):
        load_prices()


# ---------------------------------------------------------------- configuration, identity, cache key


def test_spec_builds_an_openai_judge_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:pw-secret@127.0.0.1:9/v1/?token=abc")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("REJUDGE_JUDGE_CONCURRENCY", "3")
    j = parse_judge_spec("openai:llama3.1:8b")
    assert isinstance(j, OpenAIJudge) and j.model == "llama3.1:8b" and j.concurrency == 3 and j.cacheable
    ident = j.identity()
    assert ident["spec"] == "openai:llama3.1:8b" and ident["params"] == {"temperature": 0.0, "max_tokens": 400}
    assert "prompt_hash" not in ident  # the transport knows no family: the prompt is the questions'
    j.cache_key(q("a", "b"))  # asked (or bound to) a CHIMERA question, it names the paper's prompt
    ident = j.identity()
    assert (ident["prompt"], ident["prompt_hash"]) == ("chimera-span-comparison", prompts.CHIMERA_SPAN_PROMPT_HASH)
    assert ident["base_url"] == "http://127.0.0.1:9/v1"  # user info and query stripped
    assert KEY not in json.dumps(ident) and "pw-secret" not in json.dumps(ident) and "abc" not in json.dumps(ident)
    monkeypatch.setenv("REJUDGE_JUDGE_CONCURRENCY", "many")
    with pytest.raises(JudgeSpecError, match="REJUDGE_JUDGE_CONCURRENCY must be a number"):
        parse_judge_spec("openai:m")
    with pytest.raises(JudgeSpecError, match="needs a model"):
        OpenAIJudge(" ", api_key=KEY)


def test_no_key_is_an_error_only_for_openai_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(JudgeSpecError, match="OPENAI_API_KEY is not set"):
        OpenAIJudge("gpt-4o-mini")
    assert OpenAIJudge("llama3", base_url="http://127.0.0.1:11434/v1").spec == "openai:llama3"


def test_cache_key_covers_endpoint_model_params_and_prompt_but_not_the_key() -> None:
    base = OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", api_key="key-one")
    k = base.cache_key(q("a", "b"))
    assert k == OpenAIJudge("m", base_url="http://127.0.0.1:1/v1/", api_key="key-two", concurrency=9,
                            timeout=1).cache_key(q("a", "b"))
    assert k == base.cache_key(q("a", "b", doc="another-doc-same-text"))  # identical request, asked once
    others = [
        OpenAIJudge("m2", base_url="http://127.0.0.1:1/v1", api_key="k"),
        OpenAIJudge("m", base_url="http://127.0.0.1:2/v1", api_key="k"),
        OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", api_key="k", temperature=0.7),
        OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", api_key="k", max_tokens=100),
    ]
    assert len({k, *(o.cache_key(q("a", "b")) for o in others)}) == 5
    assert base.cache_key(q("b", "a")) != k
    assert redact_url("https://u:p@host:8443/v1/?x=1") == "https://host:8443/v1"


# ---------------------------------------------------------------- asking a real local server


def test_answers_tokens_and_request_shape(server: JudgeServer) -> None:
    judge = make_judge(server, concurrency=1)  # requests in order, so bodies[0] is the first query's
    qs = [q("graph neural networks", "Graph Neural Networks"), q("graph neural networks", "fraud")]
    a = judge.ask_many(qs)
    assert [x.value for x in a] == [YES, NO]
    assert a[0].raw == YES_TEXT and a[1].raw == NO_TEXT
    assert a[0].rationale == "The spans name the same idea." and a[0].retries == 0
    assert a[0].prompt_tokens == len(judge.render(qs[0]).split()) and a[0].completion_tokens == len(YES_TEXT.split())
    body = server.bodies[0]
    assert body["model"] == "test-model" and body["temperature"] == 0 and body["max_tokens"] == 400
    assert body["messages"] == [{"role": "user", "content": judge.render(qs[0])}]
    assert server.auth_headers == [f"Bearer {KEY}"] * 2


def test_retries_on_429_500_and_malformed_bodies_are_counted() -> None:
    with JudgeServer(rate_limit_first=3, server_error_on={5}, malformed_on={6}) as srv:
        judge = make_judge(srv, concurrency=1, max_retries=5)
        a = judge.ask_many(queries(4))
    assert [x.value for x in a] == [YES, NO, YES, NO]
    assert sum(x.retries for x in a) == 5  # 3 x 429, 1 x 500, 1 x malformed
    assert a[0].retries == 3 and srv.requests == 4 + 5
    assert srv.status_counts[429] == 3 and srv.status_counts[500] == 1


def test_a_request_that_keeps_failing_is_missing_not_invalid() -> None:
    with JudgeServer(server_error_on=range(1, 100)) as srv:
        a = make_judge(srv, concurrency=1, max_retries=2).ask_one(q("x", "x"))
    assert a.value == MISSING and a.retries == 2 and srv.requests == 3
    assert a.rationale is not None and a.rationale.startswith(f"{REQUEST_FAILED}: HTTP 500")


def test_timeouts_are_retried_then_reported() -> None:
    with JudgeServer(delay=lambda p: 1.0 if "<span1>\nslow\n" in p else 0.0) as srv:
        judge = make_judge(srv, timeout=0.2, max_retries=1)
        slow, fast = judge.ask_many([q("slow", "slow"), q("fast", "fast")])
    assert fast.value == YES
    assert slow.value == MISSING and slow.retries == 1 and "no complete reply within 0.2 s" in (slow.rationale or "")


def test_unparseable_answers_are_invalid_with_their_raw_text() -> None:
    replies = {"a": (TRUNCATED_TEXT, "length"), "b": "", "c": "<answer>Probably</answer>", "d": "Yes"}

    def script(prompt: str) -> str | tuple[str, str]:
        s1, _ = spans_of(prompt) or ("", "")
        return replies.get(s1, equal_spans_script(prompt))

    with JudgeServer(script) as srv:
        got = make_judge(srv).ask_many([q(s, s) for s in "abcde"])
    assert [x.value for x in got] == [INVALID, INVALID, INVALID, INVALID, YES]
    assert got[0].raw == TRUNCATED_TEXT and "token limit" in (got[0].rationale or "")
    assert got[1].raw == "" and "empty" in (got[1].rationale or "")
    assert got[2].raw == "<answer>Probably</answer>" and "'Probably'" in (got[2].rationale or "")
    assert got[3].raw == "Yes" and "no <answer> tag" in (got[3].rationale or "")


def test_concurrency_limit_is_respected_and_used() -> None:
    # wall time by concurrency is measured in bench/judge_concurrency.py (timings do not belong in tests)
    with JudgeServer(hold_after=0) as srv:  # every request waits until released: the client fills its slots
        box: list = []
        worker = threading.Thread(target=lambda: box.append(make_judge(srv, concurrency=4).ask_many(queries(24))))
        worker.start()
        deadline = time.monotonic() + 10
        while srv.in_flight < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # room for a fifth request, if the client sent one
        assert srv.in_flight == srv.requests == 4
        srv.release()
        worker.join(10)
    assert len(box[0]) == 24 and srv.requests == 24 and srv.max_in_flight == 4


def test_auth_failure_stops_sending_and_never_echoes_the_key() -> None:
    with JudgeServer(api_key="the-right-key") as srv:
        judge = make_judge(srv, concurrency=2)
        answers = judge.ask_many(queries(20))
        assert {a.value for a in answers} == {MISSING}
        assert srv.requests <= 2  # 401 is fatal: the remaining queries are not sent
        assert sum((a.rationale or "").startswith(NOT_SENT) for a in answers) == 20 - srv.requests
        assert srv.status_counts[401] == srv.requests
        assert all(KEY not in (a.rationale or "") for a in answers)
        assert "HTTP 401" in (answers[0].rationale or "") and "***" in (answers[0].rationale or "")
        assert judge.fatal is not None and "HTTP 401" in judge.fatal and KEY not in judge.fatal

        # through the cache the job stops with JudgeFailed, naming the reason; nothing asked is cached
        srv.reset_counts()
        cache, stats = DictCache(), JudgeStats()
        with pytest.raises(JudgeFailed, match="HTTP 401") as err:
            ask_with_cache(make_judge(srv, concurrency=2), queries(20), cache, stats)
        assert KEY not in str(err.value) and not cache.data
        assert srv.requests <= 2 and stats.requests == srv.requests and stats.failed == 20


def test_cancel_stops_new_requests_and_keeps_answers() -> None:
    with JudgeServer(delay=0.05) as srv:
        judge = make_judge(srv, concurrency=2)
        cache, stats = DictCache(), JudgeStats()
        seen: list[tuple[int, int]] = []

        def progress(done: int, total: int) -> None:
            seen.append((done, total))
            if done == 6:
                judge.cancel()

        answers = ask_with_cache(judge, queries(30), cache, stats, progress)
        values = [a.value for a in answers]
        answered = sum(v in (YES, NO) for v in values)
        assert 6 <= answered <= 8  # those in flight at cancel() finish and are kept
        assert values.count(MISSING) == 30 - answered
        assert all(a.rationale == CANCELLED for a in answers if a.value == MISSING)
        assert srv.requests == answered == stats.requests and stats.cancelled == 30 - answered
        assert len(cache.data) == answered
        assert seen[-1] == (30, 30) and [d for d, _ in seen] == sorted(d for d, _ in seen)

        # a new job asks only what the cancelled one did not get
        srv.reset_counts()
        stats2 = JudgeStats()
        again = ask_with_cache(make_judge(srv, concurrency=2), queries(30), cache, stats2)
        assert srv.requests == 30 - answered and stats2.cached == answered
        assert all(a.value in (YES, NO) for a in again)


def test_answers_are_cached_as_they_arrive_and_survive_an_interrupt(server: JudgeServer) -> None:
    cache = DictCache()

    def progress(done: int, _total: int) -> None:
        if done == 10:
            raise KeyboardInterrupt  # the process is stopped mid-run

    with pytest.raises(KeyboardInterrupt):
        ask_with_cache(make_judge(server, concurrency=1), queries(40), cache, JudgeStats(), progress)
    assert len(cache.data) == 10 and cache.puts == [1] * 10

    stats = JudgeStats()
    answers = ask_with_cache(make_judge(server), queries(40), cache, stats)
    assert stats.cached == 10 and stats.requests == 30 and len(cache.data) == 40
    assert [a.value for a in answers] == [YES if i % 2 == 0 else NO for i in range(40)]
    assert stats.cost_usd is None  # test-model has no price
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0


def test_failed_requests_are_not_cached_and_are_asked_again() -> None:
    cache = DictCache()
    with JudgeServer(server_error_on=range(1, 1000)) as srv:
        stats = JudgeStats()
        with pytest.raises(JudgeFailed, match="every request failed|attempts in a row failed"):
            ask_with_cache(make_judge(srv, max_retries=0), queries(6), cache, stats)
        assert not cache.data and stats.failed == 6 and stats.requests == 6 and srv.requests == 6
    with JudgeServer(server_error_on={2, 4}) as srv:  # some fail, some answer: the run goes on
        stats = JudgeStats()
        answers = ask_with_cache(make_judge(srv, max_retries=0, concurrency=1), queries(6), cache, stats)
        assert [a.value for a in answers].count(MISSING) == 2 == stats.failed and len(cache.data) == 4
        stats = JudgeStats()  # the cache key holds the endpoint: same server, so only the 2 failed are asked
        ask_with_cache(make_judge(srv), queries(6), cache, stats)
        assert srv.requests == 6 + 2 and stats.cached == 4 and stats.failed == 0 and len(cache.data) == 6


def test_cost_is_estimated_from_the_price_table(server: JudgeServer) -> None:
    judge = make_judge(server, prices={"test-model": (1.0, 2.0)})
    stats = JudgeStats()
    ask_with_cache(judge, queries(4), None, stats)
    assert stats.cost_usd == pytest.approx((stats.prompt_tokens * 1.0 + stats.completion_tokens * 2.0) / 1e6)
    assert stats.as_dict()["cost_usd"] == stats.cost_usd and judge.identity()["price_usd_per_1m"] == [1.0, 2.0]


class _BatchOnlyJudge(Judge):
    """A cacheable judge that does not report each answer: asked in chunks."""

    spec = "batch"
    cacheable = True

    def __init__(self) -> None:
        self.calls: list[int] = []

    def identity(self) -> dict:
        return {"spec": self.spec}

    def cache_key(self, query: SpanQuery) -> str:
        return query.span1 + "|" + query.span2

    def ask_many(self, queries: Sequence[SpanQuery], progress=None) -> list[Answer]:  # noqa: ANN001, ARG002
        self.calls.append(len(queries))
        return [Answer(YES) for _ in queries]


def test_judges_without_on_answer_are_asked_in_chunks() -> None:
    judge, cache, seen = _BatchOnlyJudge(), DictCache(), []
    ask_with_cache(judge, queries(120), cache, JudgeStats(), lambda d, t: seen.append((d, t)))
    assert judge.calls == [50, 50, 20] and cache.puts == [1] * 120 and seen[-1] == (120, 120)


def test_local_judges_keep_their_progress_and_counts() -> None:
    seen: list[tuple[int, int]] = []
    stats = JudgeStats()
    counted: list[int] = []

    def progress(d: int, t: int) -> None:
        seen.append((d, t))
        counted.append(stats.requests)

    answers = ask_with_cache(ExactJudge(), queries(4), None, stats, progress)
    # progress is called once before the first request (the total at once), then as the judge reports, and once
    # more when its answers are counted (a local judge reports before: the last line read `invalid 0`)
    assert [a.value for a in answers] == [YES, NO, YES, NO] and stats.requests == 4
    assert seen == [(0, 4), (4, 4), (4, 4)] and counted[-1] == 4
    assert stats.cost_usd is None


def test_judge_log_records_one_line_per_answered_ordered_pair() -> None:
    from scoring.decisions import Decision

    decisions = [
        Decision("p1", "entity_pair", "comb-element", "a", "b", "no-match",
                 {"pred_gold": {"value": "no"}, "gold_pred": {"value": "invalid", "raw": "<answer>Hm"}}),
        Decision("p1", "entity_pair", "comb-element", "b", "a", "no-match",  # same ordered pairs again
                 {"pred_gold": {"value": "invalid"}, "gold_pred": {"value": "no"}}),
        Decision("p1", "entity_pair", "comb-element", "c", "c", "match",
                 {"pred_gold": {"value": "yes"}, "gold_pred": {"value": "yes"}}),
        Decision("p2", "entity_pair", "comb-element", "x", "y", "invalid",
                 {"pred_gold": {"value": "yes"}, "gold_pred": {"value": "missing", "rationale": "cancelled"}}),
    ]
    recs = judge_log_records(decisions)
    assert [(r["paper_id"], r["span1"], r["span2"], r["answer"]) for r in recs] == [
        ("p1", "a", "b", "no"), ("p1", "b", "a", "invalid"), ("p1", "c", "c", "yes"), ("p2", "x", "y", "yes")]
    assert recs[1]["raw"] == "<answer>Hm"



# ---------------------------------------------------------------- credentials are redacted everywhere


def test_redact_url_and_url_secrets() -> None:
    assert redact_url("https://u:p%40ss@host:8443/v1/?api_key=abcd") == "https://host:8443/v1"
    assert redact_url("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    assert redact_url("http://host:notaport/v1") == "<invalid URL>"
    secrets = url_secrets("https://alice:p%40ss-word@host/v1?api_key=qk-123")
    basic = base64.b64encode(b"alice:p@ss-word").decode()
    assert {"alice:p%40ss-word", "p%40ss-word", "p@ss-word", basic, "qk-123"} <= set(secrets)
    assert url_secrets("http://127.0.0.1:8000/v1") == []


@pytest.mark.parametrize("text", [
    "401: you sent Authorization: Basic YWxpY2U6cHc=",
    'headers={"authorization": "Bearer sk-live-abcdefgh"}',
    "Proxy-Authorization=Bearer sk-live-abcdefgh, retry",
    "token sk-live-abcdefgh rejected",
])
def test_any_authorization_value_is_hidden(text: str) -> None:
    out = redact_secrets(text)
    assert "YWxpY2U6cHc=" not in out and "sk-live-abcdefgh" not in out and "***" in out


def test_credentials_in_the_url_and_echoed_headers_never_reach_answers_or_identity() -> None:
    with JudgeServer(api_key="the-right-key", echo_auth=True) as srv:
        url = srv.base_url.replace("http://", "http://alice:pw-SECRET-9@") + "?api_key=qk-SECRET-7"
        judge = OpenAIJudge("test-model", base_url=url, api_key=KEY, concurrency=1, max_retries=0, timeout=5)
        answers = judge.ask_many(queries(3))
        sent = srv.auth_headers[0]
    assert {a.value for a in answers} == {MISSING} and srv.requests == 1
    recorded = json.dumps([judge.identity(), judge.fatal, [a.rationale for a in answers]])
    basic = base64.b64encode(b"alice:pw-SECRET-9").decode()
    for secret in (KEY, "pw-SECRET-9", "qk-SECRET-7", basic, sent.split()[-1]):
        assert secret not in recorded, secret
    assert "HTTP 401" in recorded and "Authorization: ***" in recorded


def test_connection_errors_name_no_url_credentials() -> None:
    with JudgeServer() as srv:
        port = srv.port  # a port nobody listens on once the server is stopped
    judge = OpenAIJudge("m", base_url=f"http://bob:pw-SECRET-3@127.0.0.1:{port}/v1?sig=zz-SECRET-4",
                        api_key=KEY, concurrency=1, max_retries=3, backoff=0.001, timeout=2)
    with pytest.raises(JudgeFailed) as err:
        ask_with_cache(judge, queries(4), DictCache(), JudgeStats())
    text = str(err.value) + json.dumps(judge.identity())
    assert "connection error" in text
    assert all(s not in text for s in ("pw-SECRET-3", "zz-SECRET-4", KEY, "bob:"))


# ---------------------------------------------------------------- structured answers (openai-json:MODEL)


@pytest.mark.parametrize(("raw", "value", "reason"), [
    ('{"justification": "same method", "answer": "yes"}', YES, None),
    ('{"justification": "x", "answer": " No "}', NO, None),
    ('```json\n{"justification": "x", "answer": "no"}\n```', NO, None),  # fenced, from unconstrained servers
    ('{"answer": "yes"}', YES, None),
    ('{"justification": "x", "answer": "maybe"}', INVALID, "'maybe', not yes or no"),
    ('{"justification": "x", "answer": true}', INVALID, "no 'answer' string"),
    ('{"justification": "x"}', INVALID, "no 'answer' string"),
    ('["yes"]', INVALID, "not an object"),
    ('{"justification": "the first span', INVALID, "not a JSON object"),
    ("<answer>Yes</answer>", INVALID, "not a JSON object"),
    ("", INVALID, "empty answer"),
    (None, INVALID, "empty answer"),
])
def test_parse_span_json(raw: str | None, value: str, reason: str | None) -> None:
    parsed = prompts.parse_span_json(raw)
    assert parsed.value == value
    assert (parsed.reason is None) if reason is None else (reason in (parsed.reason or ""))


def test_parse_span_json_keeps_the_justification_and_names_truncation() -> None:
    assert prompts.parse_span_json('{"justification": " both GNNs ", "answer": "yes"}').rationale == "both GNNs"
    cut = prompts.parse_span_json('{"justification": "The first span talks', truncated=True)
    assert cut.value == INVALID and "token limit" in (cut.reason or "")


def test_the_structured_question_has_its_own_template_schema_and_parser() -> None:
    text_q = q("a", "b")
    sq = text_q.structured()
    assert text_q.schema is None and sq is not None and sq.structured() is sq
    assert sq.key == text_q.key and sq.pair == text_q.pair  # the same question, asked another way
    assert sq.template is prompts.CHIMERA_SPAN_JSON and sq.schema == prompts.CHIMERA_SPAN_SCHEMA
    assert prompts.CHIMERA_SPAN_JSON.fields == prompts.CHIMERA_SPAN.fields
    assert spans_of(sq.prompt() or "") == ("a", "b") and '"answer"' in (sq.prompt() or "")
    assert sq.parse('{"justification": "", "answer": "no"}').value == NO
    assert sq.parse("<answer>No</answer>").value == INVALID  # the free-text tag is not a structured answer
    assert SpanQuery("d", "t", "x", "a", "b").structured() is None  # a family without a structured form


def test_json_spec_dialects_and_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("REJUDGE_JUDGE_JSON_DIALECT", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    local = parse_judge_spec("openai-json:smollm2-135m")
    assert isinstance(local, OpenAIJudge) and local.spec == "openai-json:smollm2-135m"
    assert (local.answer_mode, local.dialect) == ("json", "json_object")  # llama-cpp-python's server
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.org/v1")
    remote = parse_judge_spec("openai-json:gpt-4o-mini")
    assert remote.dialect == "json_schema"  # OpenAI, vLLM
    monkeypatch.setenv("REJUDGE_JUDGE_JSON_DIALECT", "json_object")
    assert parse_judge_spec("openai-json:gpt-4o-mini").dialect == "json_object"
    monkeypatch.setenv("REJUDGE_JUDGE_JSON_DIALECT", "grammar")
    with pytest.raises(JudgeSpecError, match="REJUDGE_JUDGE_JSON_DIALECT must be one of"):
        parse_judge_spec("openai-json:m")
    with pytest.raises(JudgeSpecError, match="openai-json needs a model"):
        parse_judge_spec("openai-json:")
    monkeypatch.delenv("REJUDGE_JUDGE_JSON_DIALECT")
    ident = bind_judge(parse_judge_spec("openai-json:gpt-4o-mini")).identity()
    assert (ident["prompt"], ident["prompt_hash"]) == ("chimera-span-comparison-json",
                                                      prompts.CHIMERA_SPAN_JSON_PROMPT_HASH)
    assert ident["answer_mode"] == "json" and ident["dialect"] == "json_schema"
    assert ident["params"]["response_format"] == "json_schema"
    text_ident = bind_judge(parse_judge_spec("openai:gpt-4o-mini")).identity()
    assert text_ident["prompt_hash"] == prompts.CHIMERA_SPAN_PROMPT_HASH and "dialect" not in text_ident


def test_structured_request_bodies_in_both_dialects(server: JudgeServer) -> None:
    question = q("graph neural networks", "Graph Neural Networks")
    for dialect in ("json_object", "json_schema"):
        server.reset_counts()
        judge = make_judge(server, answer_mode="json", dialect=dialect, concurrency=1)
        [a] = judge.ask_many([question])
        body = server.bodies[0]
        assert body == judge.request_body(question)  # what is sent is exactly the documented body
        assert body["messages"][0]["content"] == question.structured().prompt()
        rf = body["response_format"]
        if dialect == "json_object":
            assert rf == {"type": "json_object", "schema": prompts.CHIMERA_SPAN_SCHEMA}
        else:
            assert rf == {"type": "json_schema", "json_schema": {"name": "chimera-span-comparison-json",
                                                                 "schema": prompts.CHIMERA_SPAN_SCHEMA, "strict": True}}
        assert a.value == YES and a.rationale == "The spans name the same idea."
    text = make_judge(server)
    keys = {text.cache_key(question), make_judge(server, answer_mode="json", dialect="json_object").cache_key(question),
            make_judge(server, answer_mode="json", dialect="json_schema").cache_key(question)}
    assert len(keys) == 3  # a structured answer never stands in for a free-text one, nor across dialects
    assert "response_format" not in text.request_body(question)


def test_structured_answers_parsed_and_invalid_ones_kept(server: JudgeServer) -> None:
    replies = {"c": '{"justification": "cut', "d": '{"justification": "x", "answer": "perhaps"}'}

    def script(prompt: str) -> str:
        s1, _ = spans_of(prompt) or ("", "")
        return replies.get(s1, '{"justification": "ok", "answer": "no"}')

    with JudgeServer(script) as srv:
        got = make_judge(srv, answer_mode="json").ask_many([q(s, s) for s in "abcd"])
    assert [a.value for a in got] == [NO, NO, INVALID, INVALID]
    assert got[2].raw == '{"justification": "cut' and "not a JSON object" in (got[2].rationale or "")
    assert "'perhaps'" in (got[3].rationale or "")


def test_json_mode_refuses_questions_without_a_structured_form(server: JudgeServer) -> None:
    judge = make_judge(server, answer_mode="json")
    with pytest.raises(JudgeSpecError, match="no structured"):
        judge.cache_key(SpanQuery("d", TEXT, "comb-element", "a", "b", prompts.CHIMERA_SPAN, prompts.parse_span_answer))
    with pytest.raises(JudgeSpecError, match="answer_mode"):
        make_judge(server, answer_mode="xml")


def test_concurrency_defaults_to_what_the_endpoint_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REJUDGE_JUDGE_CONCURRENCY", raising=False)
    with JudgeServer(slots=3) as srv:
        assert default_concurrency(srv.base_url) == 3  # llama.cpp's /props total_slots
        assert OpenAIJudge("m", base_url=srv.base_url).concurrency == 3
    with JudgeServer() as srv:
        assert default_concurrency(srv.base_url) == 1  # a local server that does not say: one at a time
        monkeypatch.setenv("REJUDGE_JUDGE_CONCURRENCY", "5")
        assert OpenAIJudge("m", base_url=srv.base_url).concurrency == 5
    assert default_concurrency("https://api.openai.com/v1") == 8


def test_a_context_overflow_400_is_missing_at_once(server: JudgeServer) -> None:
    server.status_on = {1: 400}
    stats = JudgeStats()
    first, second = ask_with_cache(make_judge(server, concurrency=1), queries(2), None, stats)
    assert first.value == MISSING and first.retries == 0 and "HTTP 400" in (first.rationale or "")
    assert second.value == NO and server.requests == 2 and stats.retries == 0 and stats.missing == 1


def test_the_timeout_does_not_run_while_a_query_waits_for_a_slot() -> None:
    # 5 queries x 0.15 s on one slot take 0.75 s in all: far over the 0.5 s timeout, yet none times out,
    # because a query is only handed to the HTTP client when a slot is free
    with JudgeServer(delay=0.15) as srv:
        answers = make_judge(srv, concurrency=1, timeout=0.5, max_retries=0).ask_many(queries(5))
    assert [a.value for a in answers] == [YES, NO, YES, NO, YES] and srv.requests == 5 and srv.max_in_flight == 1
