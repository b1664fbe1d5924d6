"""Parity: `python -m audit score chimera` reproduces every number of the reference scorer's outputs to 1e-9."""

import json
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, GOLD, JUDGE_LOG, PRED_MIXED, PRED_PERFECT, ROOT

CASES = [
    ("expected_perfect_exact.json", PRED_PERFECT, "exact"),
    ("expected_mixed_exact.json", PRED_MIXED, "exact"),
    ("expected_mixed_replay.json", PRED_MIXED, f"replay:{JUDGE_LOG}"),
]


def _leaves(d: dict, prefix: tuple = ()):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _leaves(v, (*prefix, k))
        else:
            yield (*prefix, k), v


@pytest.mark.parametrize(("expected", "pred", "judge"), CASES, ids=[c[0] for c in CASES])
def test_cli_score_matches_reference(tmp_path, expected, pred, judge):
    out = subprocess.run([sys.executable, "-m", "audit", "score", "chimera", "--gold", str(GOLD), "--pred", str(pred),
                          "--judge", judge, "--db", str(tmp_path / "p.db")], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    got = json.loads(out.stdout)
    want = json.loads((FIXTURES / "chimera" / expected).read_text())
    leaves = list(_leaves(want))
    # 2 classes + 3 entity types + 2 relation types, 9 fields each, plus 3 averages of 6 fields
    assert len(leaves) == 7 * 9 + 3 * 6
    for path, value in leaves:
        node = got
        for k in path:
            node = node[k]
        assert node == pytest.approx(value, abs=1e-9, rel=0), path
    assert got["judge"]["missing"] == 0


def test_reference_numbers_differ_between_judges():
    """The replay and exact fixtures must disagree somewhere, or the replay parity test proves nothing."""
    a = json.loads((FIXTURES / "chimera" / "expected_mixed_exact.json").read_text())
    b = json.loads((FIXTURES / "chimera" / "expected_mixed_replay.json").read_text())
    assert a["entities"]["avg"]["f1"] != b["entities"]["avg"]["f1"]
