"""The family registry: every benchmark family the shell knows, by name.

Adding a family = a folder here with a `family.py` exposing an object that satisfies `TaskFamily`
(`scoring/families/base.py`), and one line in `_FAMILIES`.
"""

from __future__ import annotations

from scoring.errors import InputError
from scoring.families.base import TaskFamily
from scoring.families.chimera.family import ChimeraTask
from scoring.families.ideation.family import IdeationTask
from scoring.families.litxbench.family import LitXBenchTask
from scoring.families.retrieval.family import RetrievalTask

TASKS: dict[str, TaskFamily] = {"chimera": ChimeraTask(), "retrieval": RetrievalTask(),
                               "ideation": IdeationTask(), "litxbench": LitXBenchTask()}


def get_task(name: str) -> TaskFamily:
    if name not in TASKS:
        raise InputError(name, None, f"unknown task {name!r}; available: {', '.join(TASKS)}")
    return TASKS[name]
