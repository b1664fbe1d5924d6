"""The Wilson score interval for a binomial proportion: the one every proportion in Rejudge reports (raw agreement,
judge flip rates, the ideation first-slot win rate).

Reference: Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. JASA 22,
209-212. Computed by scipy (`binomtest(successes, n).proportion_ci(method="wilson")`).
"""

from __future__ import annotations

CONFIDENCE = 0.95


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> list[float] | None:
    """``[low, high]``, the Wilson score interval of ``successes`` in ``n`` trials; None when n == 0.

    With p = successes / n and z the (1 + confidence) / 2 normal quantile::

        centre = (p + z^2 / 2n) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2)

    Unlike the Wald interval it stays inside [0, 1] and keeps its coverage near p = 0 or 1, where the bound on
    that side is exactly 0 (or 1).

    Raises:
        ValueError: If not 0 <= successes <= n, or confidence is not in (0, 1).

    Example:
        >>> [round(x, 4) for x in wilson_interval(90, 100)]
        [0.8256, 0.9448]
        >>> wilson_interval(0, 10)[0], wilson_interval(0, 0)
        (0.0, None)
    """
    if not 0 < confidence < 1:
        raise ValueError(f"wilson_interval: confidence must be in (0, 1), got {confidence!r}")
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return None
    from scipy.stats import binomtest  # 0.5 s to import: only where an interval is made (not `queue --next`, #38)

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return [float(ci.low), float(ci.high)]
