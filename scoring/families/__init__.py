"""The family registry: every benchmark family the shell knows, by name, imported on first use.

A family is named here by the module path of its object (`module:attribute`), so listing the families (`--help`,
`runs`, the sidebar) imports none of them and `score chimera` imports CHIMERA alone: scikit-learn (ideation), pint
and SciPy (LitXBench) load only when a run of that family is opened.

Adding a family = a folder here with a `family.py` exposing an object that satisfies `TaskFamily`
(`scoring/families/base.py`), and one line in `FAMILIES` (or a `register` call, e.g. a test's toy family).

>>> "chimera" in TASKS and "sys" not in TASKS
True
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from scoring.errors import InputError

if TYPE_CHECKING:  # the protocol is for type checkers: listing the families imports none of their machinery
    from scoring.families.base import TaskFamily

FAMILIES: dict[str, str] = {
    "chimera": "scoring.families.chimera.family:ChimeraTask",
    "retrieval": "scoring.families.retrieval.family:RetrievalTask",
    "ideation": "scoring.families.ideation.family:IdeationTask",
    "litxbench": "scoring.families.litxbench.family:LitXBenchTask",
    "verdicts": "scoring.families.verdicts.family:VerdictsTask",
}
"""Family name -> `module:attribute` of its class (instantiated once) or instance, in registry order (the first
family's first demo run is the one the dashboard opens on)."""


class _LazyRegistry(Mapping[str, "TaskFamily"]):
    """A read-only mapping name -> family that imports a family's module the first time it is looked up.

    Iterating, `len` and `in` read the names alone; `TASKS[name]`, `.get`, `.values()` and `.items()` import what
    they return.
    """

    def __init__(self, paths: dict[str, str]) -> None:
        self._paths = paths
        self._loaded: dict[str, TaskFamily] = {}

    def __getitem__(self, name: str) -> TaskFamily:
        if name not in self._loaded:
            module, _, attr = self._paths[name].partition(":")
            obj = getattr(importlib.import_module(module), attr)
            self._loaded[name] = obj() if isinstance(obj, type) else obj
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, name: object) -> bool:
        return name in self._paths

    def loaded(self) -> list[str]:
        """Names of the families imported so far (for tests of what a command loads)."""
        return list(self._loaded)

    def register(self, name: str, path: str) -> None:
        """Add a family by `module:attribute` (a plug-in, or a test's toy family)."""
        self._paths[name] = path
        self._loaded.pop(name, None)

    def unregister(self, name: str) -> None:
        self._paths.pop(name, None)
        self._loaded.pop(name, None)


TASKS = _LazyRegistry(dict(FAMILIES))

IMPORTERS: dict[str, str] = {
    "inspect": "scoring.families.verdicts.inspect_log:IMPORTER",
    "lm-eval": "scoring.families.verdicts.lmeval_log:IMPORTER",
    "promptfoo": "scoring.families.verdicts.promptfoo_log:IMPORTER",
    "deepeval": "scoring.families.verdicts.deepeval_log:IMPORTER",
    "eee": "scoring.families.verdicts.eee_log:IMPORTER",
}
"""Framework name -> `module:attribute` of its `scoring.families.verdicts.importers.Importer` (`python -m audit import
FRAMEWORK LOG`), imported on first use."""


def get_importer(name: str) -> Any:
    """The importer of a framework's logs (an `Importer`: which family, input and judge its items are scored as).

    Raises:
        InputError: no importer has that name (the message lists the known ones).
    """
    if name not in IMPORTERS:
        raise InputError(name, None, f"unknown framework {name!r}; importers: {', '.join(IMPORTERS)}")
    module, _, attr = IMPORTERS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def get_task(name: str) -> TaskFamily:
    """The family called `name`, imported on first use.

    Raises:
        InputError: no family has that name (the message lists the known ones).
    """
    if name not in TASKS:
        raise InputError(name, None, f"unknown task {name!r}; available: {', '.join(TASKS)}")
    return TASKS[name]
