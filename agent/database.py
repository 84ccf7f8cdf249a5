"""PostgreSQL for many instances: with PROVENANCE_DATABASE_URL=postgresql://… the LangGraph checkpoints
(agent/checkpoints.py), the chat history (agent/chat/datalayer.py) and the per-run claims (agent/claims.py) live in
one PostgreSQL database that every process shares. Unset, each of them uses its SQLite file in $PROVENANCE_HOME.

Everything here turns a bad URL or an unreachable server into a `DatabaseError` whose message names the variable
and says what to do; the password never appears in a message.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

from agent.errors import DatabaseUnavailableError, DatabaseUrlError

ENV = "PROVENANCE_DATABASE_URL"
CONNECT_TIMEOUT_S = 10
"""libpq's connect_timeout unless the URL sets one: an unreachable host fails in seconds, not minutes."""
EXAMPLE = "postgresql://user:password@host:5432/dbname"
UNSET = f"unset {ENV} to keep the embedded SQLite files in $PROVENANCE_HOME"


def redact(url: str) -> str:
    """The URL without its password (in the authority or as a query parameter)."""
    url = re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", url)
    return re.sub(r"(password=)[^&]*", r"\1***", url)


def postgres_url(raw: str) -> str:
    """The libpq URI of PROVENANCE_DATABASE_URL, checked: `postgres://` and SQLAlchemy's `postgresql+driver://`
    are accepted and normalised to `postgresql://`. Raises DatabaseUrlError for anything else."""
    raw = raw.strip()
    try:
        parts = urlsplit(raw)
    except ValueError as exc:  # e.g. an unclosed [IPv6 address
        raise DatabaseUrlError(f"{ENV}={redact(raw)!r} cannot be parsed ({exc}); set it like {EXAMPLE}") from None
    scheme = parts.scheme.split("+", 1)[0].lower()
    if scheme not in ("postgresql", "postgres"):
        raise DatabaseUrlError(f"{ENV}={redact(raw)!r} is not a PostgreSQL URL; set it like {EXAMPLE}, or {UNSET}")
    url = urlunsplit(parts._replace(scheme="postgresql"))
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise DatabaseUrlError(
            f"{ENV}={redact(raw)!r} cannot be parsed ({_first_line(exc)}); set it like {EXAMPLE}, or {UNSET}"
        ) from None
    ports = str(params.get("port") or "")
    if ports and not all(port.strip().isdigit() for port in ports.split(",")):
        raise DatabaseUrlError(f"{ENV}={redact(raw)!r} has a port that is not a number; set it like {EXAMPLE}")
    return url


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].rstrip(".") if text else type(exc).__name__


def _timeout(url: str) -> dict[str, Any]:
    return {} if "connect_timeout" in conninfo_to_dict(url) else {"connect_timeout": CONNECT_TIMEOUT_S}


def connect_options(url: str) -> dict[str, Any]:
    """What every connection of ours passes to psycopg besides the URL."""
    return {"autocommit": True, **_timeout(url)}


def unavailable(url: str, exc: BaseException) -> DatabaseUnavailableError:
    return DatabaseUnavailableError(
        f"cannot use the PostgreSQL database of {ENV}={redact(url)!r}: {_first_line(exc)}. "
        f"Start the server or fix the URL ({EXAMPLE}; the user needs CREATE on the database), or {UNSET}"
    )


async def connect(url: str) -> psycopg.AsyncConnection[Any]:
    """An autocommit connection, or DatabaseUnavailableError naming the variable."""
    try:
        return await psycopg.AsyncConnection.connect(url, **connect_options(url))
    except psycopg.Error as exc:
        raise unavailable(url, exc) from None


def connect_sync(url: str) -> psycopg.Connection[Any]:
    try:
        return psycopg.Connection.connect(url, **connect_options(url))
    except psycopg.Error as exc:
        raise unavailable(url, exc) from None


def lock_key(name: str) -> int:
    """A stable signed 64-bit key for pg_advisory_lock, from a readable name."""
    return int.from_bytes(hashlib.sha256(f"provenance:{name}".encode()).digest()[:8], "big", signed=True)


@asynccontextmanager
async def advisory_lock(url: str, name: str, *, poll_s: float | None = None) -> AsyncIterator[None]:
    """Hold PostgreSQL's session advisory lock `name` (waiting for it) on a connection of its own; every process on
    the database is serialised by it. A process that dies while holding it loses its connection, and with it the
    lock.

    With `poll_s` it waits by retrying pg_try_advisory_lock instead of inside pg_advisory_lock: a waiting
    statement holds a snapshot, and the holder's CREATE INDEX CONCURRENTLY (LangGraph's migrations) would wait for
    that snapshot while the waiter waits for the holder, forever."""
    key = lock_key(name)
    conn = await connect(url)
    async with conn:
        try:
            if poll_s is None:
                await conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            else:
                while not await _try_lock(conn, key):
                    await asyncio.sleep(poll_s)
        except psycopg.Error as exc:
            raise unavailable(url, exc) from None
        yield


async def _try_lock(conn: psycopg.AsyncConnection[Any], key: int) -> bool:
    cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))
    row = await cursor.fetchone()
    return bool(row and row[0])
