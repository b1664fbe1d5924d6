"""A judge server that dies or fails mid-run (issue 28): the job stops within seconds once consecutive failures
show the server is gone (or failing every request), the answers received stay cached, a refused connection is no
request sent; usage is optional; the /props and /models probes carry the requests' credentials."""

from __future__ import annotations

import time

import pytest

from devtools.judge_server import JudgeServer
from scoring.errors import JudgeFailed, JudgeSpecError
from scoring.judges.answer import MISSING, NOT_SENT, JudgeStats
from scoring.judges.asking import ask_with_cache
from scoring.judges.openai_compat import (
    CONNECTION_GONE_AFTER,
    OpenAIJudge,
    default_concurrency,
    served_models,
)
from tests.judges.test_llm_judge import KEY, DictCache, queries

STOP_WITHIN = 30.0
"""Seconds the job may take to notice a dead server (the issue's bound)."""


def real_judge(srv: JudgeServer, **kw: object) -> OpenAIJudge:
    """A judge with the product's retry policy (6 retries, 1 s backoff base): what a user runs."""
    args: dict = {"base_url": srv.base_url, "api_key": KEY, "concurrency": 1, "timeout": 10.0}
    args.update(kw)
    return OpenAIJudge("test-model", **args)


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_server_that_dies_mid_run_stops_the_job_fast_and_keeps_the_answers(concurrency: int) -> None:
    n, alive = 40, 5
    cache = DictCache()
    with JudgeServer(die_after=alive) as srv:
        judge = real_judge(srv, concurrency=concurrency)
        stats = JudgeStats()
        start = time.monotonic()
        with pytest.raises(JudgeFailed) as err:
            ask_with_cache(judge, queries(n), cache, stats)
        took = time.monotonic() - start
        received = srv.requests
    assert took < STOP_WITHIN, took
    assert len(cache.data) == alive  # every answer received is cached, no failure is
    message = str(err.value)
    assert "stopped answering" in message and "run the same command again" in message
    assert f"{alive} answers are cached" in message and "nothing was stored" in message
    assert "\n" not in message
    # not 6 retries per remaining question: the requests after the death are a handful, not (n - alive) * 7
    assert received - alive <= concurrency + CONNECTION_GONE_AFTER
    assert stats.requests < alive + concurrency + CONNECTION_GONE_AFTER
    assert stats.failed + stats.cancelled + len(cache.data) <= n


def test_a_server_that_always_answers_5xx_trips_the_circuit_breaker() -> None:
    with JudgeServer(always_status=503) as srv:
        judge = real_judge(srv, concurrency=2)
        start = time.monotonic()
        with pytest.raises(JudgeFailed, match="attempts in a row failed"):
            ask_with_cache(judge, queries(30), DictCache(), JudgeStats())
        took = time.monotonic() - start
        assert srv.requests <= max(5, 2 + 2) + 2  # the breaker's limit plus the requests in flight
    assert took < STOP_WITHIN, took


def test_429s_do_not_trip_the_circuit_breaker() -> None:
    with JudgeServer(rate_limit_first=6) as srv:  # six 429s in a row: more than the breaker allows for 5xx
        answers = ask_with_cache(real_judge(srv, concurrency=1, backoff=0.001), queries(3), DictCache(),
                                 stats := JudgeStats())
    assert all(a.value != MISSING for a in answers) and stats.retries == 6 and stats.retried == 1


def test_a_refused_connection_is_no_request_sent() -> None:
    with JudgeServer() as srv:
        url = srv.base_url
    judge = OpenAIJudge("test-model", base_url=url, api_key=KEY, concurrency=1, backoff=0.01)
    stats = JudgeStats()
    with pytest.raises(JudgeFailed, match="cannot be reached"):
        ask_with_cache(judge, queries(5), DictCache(), stats)
    assert stats.requests == 0 and stats.failed == 5
    assert "1 requests sent" not in str(stats.as_dict())


def test_retried_counts_requests_and_retries_apart() -> None:
    with JudgeServer(server_error_on={1, 2, 3}) as srv:  # the first request fails 3 times, then succeeds
        stats = JudgeStats()
        ask_with_cache(real_judge(srv, backoff=0.001), queries(4), DictCache(), stats)
    assert (stats.requests, stats.retried, stats.retries) == (4, 1, 3)


@pytest.mark.parametrize("usage", ["n/a", {"nested": 1}, -5, 1.5])
def test_a_non_numeric_usage_block_is_ignored(usage: object) -> None:
    with JudgeServer(usage_value=usage) as srv:
        stats = JudgeStats()
        answers = ask_with_cache(real_judge(srv), queries(4), DictCache(), stats)
    assert [a.value for a in answers] == ["yes", "no", "yes", "no"]
    assert stats.prompt_tokens == stats.completion_tokens == 0


def test_the_props_and_models_probes_send_the_requests_credentials() -> None:
    with JudgeServer(api_key=KEY, slots=3, models=["smollm2-135m"]) as srv:
        assert default_concurrency(srv.base_url, KEY) == 3
        assert served_models(srv.base_url, KEY) == ["smollm2-135m"]
        assert OpenAIJudge("m", base_url=srv.base_url, api_key=KEY).concurrency == 3
        assert set(srv.props_auth) == {f"Bearer {KEY}"}
        assert served_models(srv.base_url, "wrong") == [] and default_concurrency(srv.base_url, "wrong") == 1
        user_url = srv.base_url.replace("127.0.0.1", "ana:pw@127.0.0.1")
        srv.props_auth.clear()
        default_concurrency(user_url, KEY)
        assert srv.props_auth and all(a.startswith("Basic ") for a in srv.props_auth)


@pytest.mark.parametrize("temperature", [float("nan"), float("inf"), -0.5])
def test_a_temperature_that_is_not_a_finite_non_negative_number_is_refused(temperature: float) -> None:
    with pytest.raises(JudgeSpecError, match="temperature"):
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", api_key=KEY, concurrency=1, temperature=temperature)


def test_not_sent_answers_after_the_death_are_missing_and_asked_again() -> None:
    cache = DictCache()
    with JudgeServer(die_after=3) as srv:
        with pytest.raises(JudgeFailed):
            ask_with_cache(real_judge(srv), queries(10), cache, JudgeStats())
        port = srv.port
    with JudgeServer(port=port) as again:  # the server is back at the same address: the run resumes
        stats = JudgeStats()
        answers = ask_with_cache(real_judge(again), queries(10), cache, stats)
        assert stats.cached == 3 and again.answered == 7 and all(a.value != MISSING for a in answers)
    assert NOT_SENT.startswith("request failed")
