"""Run a bench and keep what it prints as the one source of its figures (`devtools/figures.py`).

    python bench/record.py NAME -- bench/allocation_bound.py --rounds 100   # writes bench/results/NAME.md
    python bench/record.py --stale                                         # which results predate the code
    python bench/record.py --rerun [NAME ...]                # the named results, or every stale one, recorded again
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from devtools.figures import FiguresError, record, rerun, stale  # noqa: E402


def main(argv: list[str]) -> int:
    try:
        if argv == ["--stale"]:
            found = stale()
            for path, files in found.items():
                named = ", ".join(files[:4]) + (", …" if len(files) > 4 else "")
                state = f"stale: {len(files)} code files changed since ({named})" if files else "current"
                print(f"{path.relative_to(ROOT)}: {state}")
            return 1 if any(found.values()) else 0
        if argv[:1] == ["--rerun"]:
            for path in rerun(argv[1:]):
                print(f"recorded: {path.relative_to(ROOT)}", file=sys.stderr)
            return 0
        if len(argv) < 3 or argv[1] != "--":
            print(__doc__, file=sys.stderr)
            return 2
        path = record(argv[0], argv[2:])
        print(f"recorded: {path.relative_to(ROOT)}", file=sys.stderr)
        return 0
    except FiguresError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
