"""The limits of a judge request (issue #34): a total deadline per request (not per read), a reply size cap that
bounds memory (plain, unannounced and compressed replies), and no redirect to another host; each limit is
configurable and named, with its value, in the error text."""

from __future__ import annotations

import resource
import time

import pytest

from devtools.judge_server import JudgeServer
from scoring.judges.answer import MISSING, REQUEST_FAILED, YES
from scoring.judges.bounded_http import ENV_MAX_REPLY_BYTES
from scoring.judges.openai_compat import ENV_TIMEOUT, OpenAIJudge, served_models
from tests.judges.test_llm_judge import KEY, make_judge, q, queries


def test_a_server_that_drips_one_byte_at_a_time_is_cut_off_at_the_deadline() -> None:
    # 20 ms a byte: each read arrives well within the timeout, the whole reply takes ~10 s.
    with JudgeServer(drip=0.02) as srv:
        judge = make_judge(srv, timeout=0.8, max_retries=0, concurrency=1)
        start = time.monotonic()
        a = judge.ask_one(q("x", "x"))
        took = time.monotonic() - start
    assert took < 2.0, took
    assert a.value == MISSING and a.rationale is not None and a.rationale.startswith(REQUEST_FAILED)
    assert "within 0.8 s" in a.rationale and ENV_TIMEOUT in a.rationale


def test_the_deadline_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_TIMEOUT, "0.5")
    with JudgeServer(drip=0.02) as srv:
        judge = OpenAIJudge("m", base_url=srv.base_url, api_key=KEY, concurrency=1, max_retries=0)
        start = time.monotonic()
        a = judge.ask_one(q("x", "x"))
    assert time.monotonic() - start < 1.5 and "within 0.5 s" in (a.rationale or "")


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.parametrize("gzip_reply", [False, True], ids=["unannounced", "gzip-bomb"])
def test_a_huge_reply_is_refused_without_being_held(gzip_reply: bool) -> None:
    with JudgeServer(pad_reply=60 * 2**20, gzip_reply=gzip_reply) as srv:
        judge = make_judge(srv, max_reply_bytes=2**20, max_retries=2, concurrency=1)
        before = _rss_kb()
        a = judge.ask_one(q("x", "x"))
        grew_mb = (_rss_kb() - before) / 1024
        time.sleep(0.2)
        sent_mb = srv.bytes_sent / 2**20
    if not gzip_reply:  # the client stopped reading: what it took is the cap plus the socket buffers
        assert sent_mb < 20, sent_mb
    assert a.value == MISSING and a.rationale is not None and a.rationale.startswith(REQUEST_FAILED)
    assert "larger than 1,048,576 bytes" in a.rationale and ENV_MAX_REPLY_BYTES in a.rationale
    assert a.retries == 0  # the same question gets the same reply: not asked again
    assert grew_mb < 40, grew_mb  # 60 MB of reply (and 60 MB decoded) never held


def test_the_reply_limit_comes_from_the_environment_and_fits_a_normal_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_REPLY_BYTES, "2000")
    with JudgeServer(pad_reply=5000) as srv:
        judge = OpenAIJudge("m", base_url=srv.base_url, api_key=KEY, concurrency=1, max_retries=0)
        assert "larger than 2,000 bytes" in (judge.ask_one(q("x", "x")).rationale or "")
    with JudgeServer() as srv:
        judge = OpenAIJudge("m", base_url=srv.base_url, api_key=KEY, concurrency=1, max_retries=0)
        assert judge.ask_one(q("x", "x")).value == YES


def test_a_redirect_to_another_host_is_refused_naming_both_and_stops_the_job() -> None:
    with JudgeServer() as elsewhere, JudgeServer(redirect_to=elsewhere.base_url.removesuffix("/v1")) as srv:
        judge = make_judge(srv, concurrency=1)
        answers = judge.ask_many([q("x", "x"), q("y", "y")])
        assert elsewhere.requests == 0  # nothing was asked of the other server
        endpoint, target = srv.base_url, elsewhere.base_url
    assert all(a.value == MISSING for a in answers)
    assert judge.fatal is not None and endpoint in judge.fatal and target in judge.fatal
    assert "another host" in judge.fatal


def test_the_model_probe_goes_through_the_same_client() -> None:
    with JudgeServer(models=["m"], api_key=KEY) as srv:
        assert served_models(srv.base_url, KEY) == ["m"]
        assert served_models(srv.base_url, "wrong") == []


def test_many_requests_in_flight_do_not_wait_for_a_connection_past_their_deadline() -> None:
    # 30 at once, each answered after 0.8 s, deadline 1.5 s: with httpcore's default pool of 10 connections the
    # last 20 waited for a connection and timed out.
    with JudgeServer(delay=0.8) as srv:
        answers = make_judge(srv, concurrency=30, timeout=1.5, max_retries=0).ask_many(queries(30))
    assert [a.value for a in answers].count(MISSING) == 0
