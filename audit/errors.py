"""Errors raised by the application layer (the CLI prints them as one `error: ...` line, exit 2)."""


class AuditError(ValueError):
    """Base class: a request the store cannot carry out."""


class UnknownRun(AuditError):
    """No run with that name exists in the database."""


class UnknownDecision(AuditError):
    """No decision with that id exists in the run."""


class RunExists(AuditError):
    """A run with that name already exists."""


class BadLabel(AuditError):
    """A review label that the decision kind does not allow."""


class NotASampleDraw(AuditError):
    """A review sent as a sample draw for a document the sample queue would not serve now; nothing was stored.
    `reason` says why without saying how to go on: each surface says that in its own words (the CLI's flags,
    the pages' controls)."""

    def __init__(self, reason: str, hint: str, *, no_plan: bool = False) -> None:
        super().__init__(f"{reason}; {hint}")
        self.reason = reason
        self.no_plan = no_plan
        """The run has no sampling plan (so no sample queue to take a document from)."""


class StaleReview(AuditError):
    """The decision's reviews changed since the caller looked at them."""


class DatabaseRefused(AuditError):
    """The database file cannot be used (not a Rejudge database, damaged, newer schema); it was left unchanged."""
