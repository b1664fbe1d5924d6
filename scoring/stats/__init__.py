"""Statistics over decisions: P/R/F1 counts, agreement (kappa & co), estimators."""
