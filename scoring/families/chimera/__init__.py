"""CHIMERA recombination extraction: loader, decide/aggregate scorer, judge question, family."""
