"""Optional timing of a rerun's parts (bench only): `REJUDGE_RERUN_LOG=FILE` appends one JSON line per rerun with
the seconds spent in `app.py`'s preamble and in the page; `REJUDGE_RERUN_PROFILE=DIR` also writes a cProfile
of each rerun (`DIR/<page>-<n>.prof`). Unset (always, outside a bench) it costs one environment look-up."""

from __future__ import annotations

import cProfile
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

_count = 0


def timed_rerun(preamble: Callable[[], object], page: Callable[[object], None]) -> None:
    """Run `preamble()` then `page(what preamble returned)`, timing both when `REJUDGE_RERUN_LOG` is set."""
    log, prof_dir = os.environ.get("REJUDGE_RERUN_LOG"), os.environ.get("REJUDGE_RERUN_PROFILE")
    if not log:
        page(preamble())
        return
    global _count  # noqa: PLW0603 - a bench's counter of profile files
    _count += 1
    prof = cProfile.Profile() if prof_dir else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    nav = preamble()
    t1 = time.perf_counter()
    name = getattr(nav, "url_path", "") or "runs"
    try:
        page(nav)
    finally:
        t2 = time.perf_counter()
        if prof:
            prof.disable()
            prof.dump_stats(str(Path(prof_dir) / f"{name}-{_count}.prof"))
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"page": name, "preamble_s": round(t1 - t0, 4), "page_s": round(t2 - t1, 4),
                                "at": time.time()}) + "\n")
