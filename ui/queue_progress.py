"""The review queue's progress line, worded once: the queue page draws it above either card, and the browser card's
save route (`ui/review_card/route.py`) sends it back with every answer, since that card saves without a rerun and
the line it was drawn with went stale after its first label."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from audit.errors import AuditError
from audit.review.queue import labelled_count, progress_text
from audit.review.sample_progress import card_progress

if TYPE_CHECKING:
    from audit.views import RunView

NextSample = Callable[["RunView"], "dict | None"]


def _next_sample(view: RunView) -> dict | None:
    from audit.review.sampling import next_sample  # (SciPy: only where a sample line is asked for)

    return next_sample(view.db, view)


def sample_line(view: RunView, *, blind: bool, next_sample: NextSample = _next_sample) -> str:
    """The sample's progress toward its target (`audit.review.sample_progress.card_progress`), read now; what is
    wrong instead when it cannot be read (no plan any more)."""
    try:
        return card_progress(next_sample(view), blind=blind)
    except AuditError as e:
        return str(e)


def progress_line(view: RunView, *, reviewer: str, in_queue: int, sample: bool, blind: bool,
                  next_sample: NextSample = _next_sample) -> str:
    """The line above the browser card: `reviewer`'s labels in the run and the queue's size, then, for the sample
    queue of a planned run (`sample`), the sample's progress."""
    done = labelled_count(view.db, view, reviewer) if reviewer else 0
    line = progress_text(done, view.row["n_decisions"], in_queue)
    return line + " · " + sample_line(view, blind=blind, next_sample=next_sample) if sample else line
