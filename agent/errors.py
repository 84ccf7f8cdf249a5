"""Errors that mean "the request cannot be served as asked" (exit 2), as opposed to a failure of ours (exit 1)."""


class UsageError(ValueError):
    """The caller asked for something that does not apply (e.g. resuming a thread with no pending approval)."""


class AlreadyDecided(UsageError):
    """The approval was answered in another session (another process, tab or chat) while this one was deciding."""


class DatabaseError(Exception):
    """PROVENANCE_DATABASE_URL cannot be used; the message names the variable and what to do."""


class DatabaseUrlError(DatabaseError, UsageError):
    """PROVENANCE_DATABASE_URL is not a PostgreSQL URL (exit 2, like any other bad input)."""


class DatabaseUnavailableError(DatabaseError, ConnectionError):
    """The PostgreSQL server of PROVENANCE_DATABASE_URL cannot be reached or refuses us (exit 1, like an
    unreachable catalog)."""
