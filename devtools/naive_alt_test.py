"""The alternative annotator test written out as the paper states it (Calderon et al. 2025, Algorithm 1), loops and
all, with the Benjamini-Yekutieli step-up by hand: the oracle for `scoring.stats.alt_test`."""

from __future__ import annotations

import math

from scipy.stats import t as student_t


def _score(kind, x, others):
    if kind == "accuracy":
        return sum(1.0 if x == o else 0.0 for o in others) / len(others)
    return -math.sqrt(sum((x - o) ** 2 for o in others) / len(others))


def _one_sided_p(d, eps):
    n = len(d)
    mean = sum(d) / n
    if all(v == d[0] for v in d):
        return 0.0 if mean < eps else 1.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in d) / (n - 1))
    return student_t.cdf((mean - eps) / (sd / math.sqrt(n)), n - 1)


def naive_alt_test(judge, humans, kind, eps, q=0.05, min_items=30):
    """(winning rate, advantage probability, tested humans) or None when fewer than two humans are tested."""
    tested, ps, rhos = [], [], []
    for j in sorted(humans):
        d, wins = [], []
        for i, label in humans[j].items():
            if i not in judge:
                continue
            rest = [humans[k][i] for k in humans if k != j and i in humans[k]]
            if not rest:
                continue
            s_f, s_h = _score(kind, judge[i], rest), _score(kind, label, rest)
            w_f, w_h = (1 if s_f >= s_h else 0), (1 if s_h >= s_f else 0)
            d.append(w_h - w_f)
            wins.append(w_f)
        if len(d) < min_items:
            continue
        tested.append(j)
        ps.append(_one_sided_p(d, eps))
        rhos.append(sum(wins) / len(wins))
    m = len(tested)
    if m < 2:
        return None
    c_m = sum(1 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda k: ps[k])
    last = -1
    for rank, k in enumerate(order, start=1):
        if ps[k] <= rank / m * q / c_m:
            last = rank
    return (max(last, 0) / m, sum(rhos) / m, tested)
