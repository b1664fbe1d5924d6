"""What leaves a run: agreement and its rule, the alternative annotator test, comparisons, figures, exports, the
report."""
