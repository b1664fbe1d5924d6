"""Rejudge application layer: store, reviews, re-scoring, export, CLI (`python -m audit`)."""

__version__ = "0.2.0"
