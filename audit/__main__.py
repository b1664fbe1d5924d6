"""`python -m audit`: the CLI (`audit.cli.main`), leaving the process without freeing its objects one by one.

A fresh process that estimated a 100,000-abstract run spent 0.15 s of its 1.1 s at exit deallocating the run's
decoded counts, judge vectors and plan (#38). By then the command is done and its databases are closed
(`audit.cli.main` seals them). As mypy's `hard_exit` does: flush the standard streams, run the exit handlers
(logging's flush, multiprocessing's), then `os._exit`. A normal exit where the interpreter has more to do: another
thread still running (it would be joined), a stream that cannot be flushed, or a profiler or tracer watching
(`python -m pyinstrument -m audit ...`, coverage: they write what they saw when the module returns).

OpenBLAS runs on one thread unless the environment says otherwise: the CLI's matrices are small (a run's count
vectors, tens of paths), and after each product its idle threads spin: 0.2 s of the 1.0 s of CPU that `queue
--next` took at 100,000 abstracts (#38). The products do not split their sums across threads, so the numbers are
the same (the CLI's outputs compared with and without, bench/README.md).
"""

import atexit
import gc
import os
import sys
import threading

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy is imported
# A full collection walks every object the process holds: a fresh `queue --next` at 100,000 abstracts made three,
# 0.09 s of its 1.0 s, each walking the run's decoded counts, plan and vectors, none of which is ever cyclic garbage.
# The command is one short process: full collections only every 1,000th middle one (the default is every 10th).
gc.set_threshold(*gc.get_threshold()[:2], 1000)

from audit.cli import main  # noqa: E402


def _leave(code: int) -> None:
    if threading.active_count() > 1 or sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the interpreter's own exit reports it as before
        sys.exit(code)
    atexit._run_exitfuncs()
    os._exit(code)


_leave(main())
