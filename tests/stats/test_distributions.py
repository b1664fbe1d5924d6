"""`scoring.stats.distributions` gives scipy.stats' numbers bit for bit (the intervals on every surface must not move
by one ulp when the estimators stop importing scipy.stats, #38)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from scipy import stats as st

from scoring.stats.distributions import norm_cdf, norm_ppf, t_ppf
from tests.conftest import ROOT

LEVELS = [0.5 + lv / 2 for lv in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)] + list(np.linspace(0.001, 0.999, 97))
DFS = [0.5, 1, 1.7, 2, 3, 4.25, 9, 29, 30.5, 99, 1e3, 12345.678, 1e6, 1e12, np.inf]


def test_normal_quantile_and_cdf_are_scipy_stats_bit_for_bit() -> None:
    for q in LEVELS:
        assert norm_ppf(q) == float(st.norm.ppf(q)), q
    for x in [*np.linspace(-9, 9, 181), 1.959963984540054, 2.241402727604947, 40.0, -40.0]:
        assert norm_cdf(x) == float(st.norm.cdf(x)), x


def test_t_quantile_is_scipy_stats_bit_for_bit() -> None:
    for q in LEVELS:
        for df in DFS:
            assert t_ppf(q, df) == float(st.t.ppf(q, df)), (q, df)
            assert t_ppf(q, np.float64(df)) == float(st.t.ppf(q, np.float64(df))), (q, df)


def test_the_sample_queue_and_the_estimators_do_not_import_scipy_stats() -> None:
    """The modules `queue --next` runs import scipy.special, not scipy.stats (0.7 s, #38); a module that imports
    scipy.stats by another name (`from scipy.stats import ...`) is caught as well."""
    code = ("import sys; import audit.review.sampling, scoring.stats.estimators, scoring.stats.sampling, "
            "scoring.stats.confidence_sequence, scoring.stats.difference, scoring.stats.quantile; "
            "print(sorted(m for m in sys.modules if m == 'scipy.stats' or m.startswith('scipy.stats.')))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]", p.stdout[:300]
