"""Ideation's intervals resample questions: the question is the cluster (ideation.md section 2). They are computed
by the one cluster bootstrap, `scoring.stats.bootstrap.ratio_interval`, with its defaults, named here for the
family's `n_resamples` / `seed` settings."""

from scoring.stats.bootstrap import N_RESAMPLES, SEED

__all__ = ["N_RESAMPLES", "SEED"]
