"""The examples in the library's docstrings run and give what they say.

Only modules that have examples are collected (found from the source, so a module without one is not a test that
passes vacuously); `test_examples_are_where_use_is_not_obvious` keeps the count from shrinking.
"""

import doctest
import importlib
import re

import pytest

from tests.conftest import ROOT

EXAMPLE = re.compile(r"^\s*>>> ", re.M)
MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts)
                 for folder in ("scoring", "audit", "ui") for p in (ROOT / folder).rglob("*.py")
                 if "__pycache__" not in p.parts and p.name != "__main__.py"
                 and EXAMPLE.search(p.read_text(encoding="utf-8")))
MIN_MODULES_WITH_EXAMPLES = 10


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # examples name the bundled data by its path in the repository
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name}: its examples were not collected by doctest"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


def test_examples_are_where_use_is_not_obvious():
    assert len(MODULES) >= MIN_MODULES_WITH_EXAMPLES, MODULES
