"""Which remembered deep link is followed after sign-in (issue 40 point 8): a page of this app with its query, and
nothing else. Each hostile target is chosen to evade a naive "starts with /" check."""

from __future__ import annotations

import pytest

from ui.after_sign_in.target import MAX_AGE_MS, Target, return_target

PATHS = {"", "queue", "export", "document", "runs"}


def follow(path: object, age: object = 1000, base: str = "") -> Target | None:
    return return_target({"path": path, "age_ms": age}, PATHS, base)


def test_a_page_of_the_app_is_followed_with_its_query():
    assert follow("/queue?run=demo-chimera-mixed&card=classic&blind=1") == Target(
        "queue", {"run": "demo-chimera-mixed", "card": "classic", "blind": "1"})
    assert follow("/queue/?run=a%20b&x=1&x=2") == Target("queue", {"run": "a b", "x": ["1", "2"]})
    assert follow("/?run=r") == Target("", {"run": "r"})


def test_under_a_base_path_only_its_pages():
    assert follow("/audit/queue?run=r", base="/audit/") == Target("queue", {"run": "r"})
    assert follow("/queue?run=r", base="audit") is None
    assert follow("/auditx/queue?run=r", base="audit") is None


@pytest.mark.parametrize("path", [
    "//evil.example/queue", "///evil.example/queue", "https://evil.example/queue", "http:/evil.example",
    "javascript:alert(1)", "/\\evil.example/queue", "/\t/evil.example", "/\n/evil.example", "\\\\evil.example",
    "queue?run=r", "", "/not-a-page?run=r", "/queue/../../evil", "/queue#frag", "/%2F%2Fevil.example",
    "/" + "a" * 5000,
])
def test_anything_but_a_page_of_this_app_is_refused(path: str):
    assert follow(path) is None


def test_the_bare_root_is_nothing_to_follow():
    assert follow("/") is None


@pytest.mark.parametrize("value", [None, "/queue", ["/queue"], {"path": "/queue"}, {"path": 3, "age_ms": 0},
                                   {"path": "/queue", "age_ms": "1"}, {"path": "/queue", "age_ms": True},
                                   {"path": "/queue", "age_ms": float("nan")}, {"path": "/queue", "age_ms": -1},
                                   {"path": "/queue", "age_ms": MAX_AGE_MS + 1}])
def test_a_malformed_or_stale_value_is_refused(value: object):
    assert return_target(value, PATHS) is None
