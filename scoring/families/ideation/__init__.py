"""Ideation: absolute ratings and pairwise comparisons of research ideas."""
