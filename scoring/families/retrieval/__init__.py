"""CHIMERA recombination prediction (retrieval): ranking results, tie-aware ranking metrics, candidate review."""
