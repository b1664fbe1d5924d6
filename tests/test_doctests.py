"""The examples in the library's docstrings run and give what they say."""

import doctest
import importlib
from pathlib import Path

import pytest

from tests.conftest import ROOT

MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts)
                 for folder in ("scoring", "audit") for p in (ROOT / folder).rglob("*.py")
                 if "__pycache__" not in p.parts and p.name != "__main__.py")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


def test_there_are_examples():
    attempted = sum(doctest.testmod(importlib.import_module(n)).attempted for n in MODULES)
    assert attempted >= 3, Path(__file__).name
