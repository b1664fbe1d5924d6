"""Progress of a long CLI job on stderr: a live bar on a terminal, and plain lines at an interval when stderr goes
to a file or a pipe (a live LLM run of 10 minutes run as `... 2> log` printed nothing until it ended)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from tqdm import tqdm

LINE_EVERY_S = 30.0


class Progress:
    """`update(done, total, **counts)` as the job advances; `close()` at the end."""

    def __init__(self, desc: str, unit: str, *, stream: TextIO | None = None, every_s: float = LINE_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.desc, self.unit, self.every_s, self.clock = desc, unit, every_s, clock
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.bar = tqdm(total=0, desc=desc, unit=unit, file=self.stream) if self.live else None
        self.start = self.last = clock()
        self.state: tuple[int, int, dict] | None = None
        self.printed: tuple[int, int, dict] | None = None

    def update(self, done: int, total: int, **counts: int) -> None:
        self.state = (done, total, counts)
        if self.bar is not None:
            self.bar.total, self.bar.n = total, done
            if counts:
                self.bar.set_postfix(refresh=False, **counts)
            self.bar.refresh()
            return
        now = self.clock()
        if now - self.last >= self.every_s:
            self._line(now)

    def _line(self, now: float) -> None:
        if self.state is None:
            return
        done, total, counts = self.state
        share = f" ({100 * done / total:.0f} %)" if total else ""
        extra = "".join(f", {k} {v}" for k, v in counts.items())
        print(f"{self.desc}: {done} of {total} {self.unit}{share}{extra}, {now - self.start:.0f} s", file=self.stream,
              flush=True)
        self.last, self.printed = now, self.state

    def close(self, *, final: bool = True) -> None:
        """End the bar; on a file, a last line when the job ended well (`final`): a failed job's one error line
        stands alone."""
        if self.bar is not None:
            self.bar.close()
        elif final and self.state is not None and self.printed != self.state:
            self._line(self.clock())
