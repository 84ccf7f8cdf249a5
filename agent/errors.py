"""Errors that mean "the request cannot be served as asked" (exit 2), as opposed to a failure of ours (exit 1)."""


class UsageError(ValueError):
    """The caller asked for something that does not apply (e.g. resuming a thread with no pending approval)."""
