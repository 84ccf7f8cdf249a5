"""The agent's own errors, on the roots of tools/errors.py (which maps them to exit codes and HTTP statuses)."""

from tools.errors import BadRequest, ProvenanceError, ServiceFailure


class UsageError(BadRequest, ValueError):
    """The caller asked for something that does not apply (e.g. resuming a thread with no pending approval)."""


class AlreadyDecided(UsageError):
    """The approval was answered in another session (another process, tab or chat) while this one was deciding."""


class DatabaseError(ProvenanceError):
    """PROVENANCE_DATABASE_URL cannot be used; the message names the variable and what to do."""


class DatabaseUrlError(DatabaseError, UsageError):
    """PROVENANCE_DATABASE_URL is not a PostgreSQL URL (exit 2, like any other bad input)."""


class DatabaseUnavailableError(DatabaseError, ServiceFailure, ConnectionError):
    """The PostgreSQL server of PROVENANCE_DATABASE_URL cannot be reached or refuses us (exit 1, like an
    unreachable catalog)."""

    service = "database"
