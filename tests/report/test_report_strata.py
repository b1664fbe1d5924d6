"""The report's per-stratum counts read the plan without a map of every decision (#38), with the same numbers."""

from __future__ import annotations

from collections import Counter

from audit.outputs.report import _stratum_sizes, _unit_strata


def _plan(blocks: list[tuple[str, list]]) -> dict:
    return {"plan": {"blocks": [{"id": f"d{i}", "stratum": h, "rank": i, "units": units}
                                for i, (h, units) in enumerate(blocks)]}}


ONE = {"sampling": {"*": _plan([("a", [1, 2]), ("b", ["3"]), ("a", [4]), ("empty", [])])}}
# a kind's plan and the all-kinds plan list the same decisions: the later plan's stratum counts
TWO = {"sampling": {"candidate": _plan([("x", [1, 2]), ("y", [3])]), "*": _plan([("a", [1]), ("b", [2, 3, 5])])}}


def test_sizes_and_wanted_ids_equal_the_full_map() -> None:
    for data in (ONE, TWO, {}, {"sampling": {}}):
        full = _unit_strata(data)
        assert _stratum_sizes(data) == Counter(full.values())
        for wanted in (set(), {"1"}, {"2", "3", "99"}, set(full)):
            assert _unit_strata(data, wanted) == {u: h for u, h in full.items() if u in wanted}
    assert _stratum_sizes(ONE) == {"a": 3, "b": 1}
    assert _stratum_sizes(TWO) == {"a": 1, "b": 3}
