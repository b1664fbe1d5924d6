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


class StaleReview(AuditError):
    """The decision's reviews changed since the caller looked at them."""


class DatabaseRefused(AuditError):
    """The database file cannot be used (not a Rejudge database, damaged, newer schema); it was left unchanged."""
