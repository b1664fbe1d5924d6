"""Retrieval's sampling strata: a function of how many candidates sit above the gold (judge-side only), in
contiguous rank bands, the tail split at 50 above (bench/README.md as of a32f770, "Sampled estimates for every
family")."""

from __future__ import annotations

import random

from scoring.families.retrieval.family import HIGH_LEVERAGE_STRATA, TAIL_STRATA, RetrievalTask

ORDER = ("none above", *HIGH_LEVERAGE_STRATA, *TAIL_STRATA)


def test_strata_are_contiguous_bands_of_the_count_above():
    fam = RetrievalTask()
    band = [ORDER.index(fam.sampling_stratum([{}] * n)) for n in range(0, 200)]
    assert band == sorted(band) and set(band) == set(range(len(ORDER)))
    starts = {ORDER[b]: band.index(b) for b in set(band)}
    assert starts == {"none above": 0, "1-2 above": 1, "3-9 above": 3, "10-19 above": 10, "20-49 above": 20,
                      "50+ above": 50}


def test_the_stratum_ignores_the_decisions_content():
    """Decided before review: only the count matters, never a label or detail of the decisions."""
    fam = RetrievalTask()
    rng = random.Random(3)
    for _ in range(50):
        n = rng.randint(0, 120)
        ds = [{"judge": rng.choice(["acceptable", "not-acceptable"]), "detail": {"rank": rng.randint(1, 200)}}
              for _ in range(n)]
        assert fam.sampling_stratum(ds) == fam.sampling_stratum([{}] * n)


def test_only_the_tail_is_sampled():
    fam = RetrievalTask()
    assert fam.sampling_take_all(set(ORDER)) == set(HIGH_LEVERAGE_STRATA)
    assert fam.sampling_take_all(set(TAIL_STRATA)) == set()
