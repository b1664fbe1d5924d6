"""The normal and Student t quantiles and the normal CDF that the interval code uses, computed by the scipy.special
functions scipy.stats calls for them (`norm.ppf` is `ndtri`, `norm.cdf` is `ndtr`, `t.ppf(q, df)` is
`stdtrit(df, q)`; scipy.stats adds only argument checks and `* 1 + 0` for the default scale and location), so the
numbers are bit for bit those of scipy.stats. Importing scipy.stats cost 0.7 s of every `python -m audit queue
--next` (#38); scipy.special is a fraction of it.
"""

from __future__ import annotations

from scipy import special


def norm_ppf(q: float) -> float:
    """The standard normal quantile at `q` in (0, 1): `scipy.stats.norm.ppf(q)`."""
    return float(special.ndtri(q))


def norm_cdf(x: float) -> float:
    """The standard normal distribution function at `x`: `scipy.stats.norm.cdf(x)`."""
    return float(special.ndtr(x))


def t_ppf(q: float, df: float) -> float:
    """Student's t quantile at `q` in (0, 1) with `df` > 0 degrees of freedom: `scipy.stats.t.ppf(q, df)`."""
    return float(special.stdtrit(df, q))
