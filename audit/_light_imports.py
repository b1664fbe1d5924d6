"""sqlite_utils imports pandas and numpy when they are installed, only to map their types to column types when it
creates tables from Python values, which Rejudge never does (the store writes SQL). Importing pandas was most of
`python -m audit runs` (#38), so while `sqlite_utils.db` is being imported, those two imports fail for it alone:
a module that imports pandas or numpy itself, before or after, gets them as usual.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.abc imports importlib.resources: 60 ms of a start-up of 300
    from importlib.machinery import ModuleSpec
    from types import ModuleType

HIDDEN = frozenset({"pandas", "numpy"})


def _imported_by_sqlite_utils() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__") == "sqlite_utils.db":
            return True
        frame = frame.f_back
    return False


class SqliteUtilsWithoutPandas:
    """A meta path finder (`importlib.abc.MetaPathFinder`'s protocol) that refuses pandas and numpy to
    `sqlite_utils.db`'s optional imports and finds nothing for anyone else."""

    def find_spec(self, fullname: str, path: object = None,  # noqa: ARG002 (protocol)
                  target: ModuleType | None = None) -> ModuleSpec | None:  # noqa: ARG002
        if fullname in HIDDEN and _imported_by_sqlite_utils():
            raise ModuleNotFoundError(f"{fullname} is not imported for sqlite_utils by Rejudge", name=fullname)
        return None


def install() -> None:
    """Put the finder first on `sys.meta_path` (once); nothing to do once sqlite_utils is imported."""
    if "sqlite_utils.db" in sys.modules or any(isinstance(f, SqliteUtilsWithoutPandas) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, SqliteUtilsWithoutPandas())
