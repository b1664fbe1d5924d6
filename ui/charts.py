"""The dashboard's charts are the report's: every builder lives in `audit.figures` (re-exported here for old
imports), so a chart on screen and in the audit report never differ."""

from audit.figures import (
                           agreement_intervals,
                           bias_intervals,
                           confusion_heatmap,
                           coverage_bars,
                           headline_intervals,
                           kappa_with_intervals,
                           original_vs_audited,
                           position_bias,
                           reviewer_bars,
                           variant_bars,
)

__all__ = ["agreement_intervals", "bias_intervals", "confusion_heatmap", "coverage_bars", "headline_intervals",
           "kappa_with_intervals", "original_vs_audited", "position_bias", "reviewer_bars", "variant_bars"]
