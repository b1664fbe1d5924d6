"""Rejudge application layer: store, reviews, re-scoring, export, CLI (`python -m audit`)."""

from audit._light_imports import install as _install_light_imports

__version__ = "0.2.0"

_install_light_imports()
