"""The `uv pip install` options that make uv install from where pip is configured to (scripts/test.sh).

uv does not read pip's configuration (pip.conf files, PIP_* variables), which on machines without open network access
names the only indexes, wheel folders and constraints there are. This reads it through `pip config list` and prints
one option per line: index URLs, extra index URLs, find-links, constraint files, and `--index-strategy
unsafe-best-match` (pip takes the best version from all its indexes; uv, by default, only from the first that has the
package). Usage: `python scripts/uv_options.py [PIP_CONFIG_LIST_OUTPUT_FILE]` (else it runs `pip config list`).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

_LINE = re.compile(r"^(?P<section>[^.]*)\.(?P<key>[a-z-]+)=(?P<quote>['\"])(?P<value>.*)(?P=quote)$")
_OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
            "constraint": "--constraint"}
_SECTIONS = ("global", "install", ":env:")


def uv_options(config_list: str) -> list[str]:
    """Options for `uv pip install` from `pip config list` output (its sections global, install and environment;
    a later line wins for index-url, the lists are joined without repeats)."""
    index_url: str | None = None
    lists: dict[str, list[str]] = {"extra-index-url": [], "find-links": [], "constraint": []}
    for line in config_list.splitlines():
        m = _LINE.match(line.strip())
        if not m or m["section"] not in _SECTIONS or m["key"] not in _OPTIONS:
            continue
        values = m["value"].split()
        if m["key"] == "index-url":
            index_url = values[-1] if values else index_url
            continue
        for v in values:
            if v not in lists[m["key"]]:
                lists[m["key"]].append(v)
    out = [f"--index-url={index_url}"] if index_url else []
    for key, values in lists.items():
        out += [f"{_OPTIONS[key]}={v}" for v in values]
    return [*out, "--index-strategy=unsafe-best-match"]


def main(argv: list[str]) -> int:
    if argv:
        text = Path(argv[0]).read_text()
    else:
        text = subprocess.run([sys.executable, "-m", "pip", "config", "list"], check=True, capture_output=True,
                              text=True).stdout
    print("\n".join(uv_options(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
