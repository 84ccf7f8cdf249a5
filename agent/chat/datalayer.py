"""The chat history database for Chainlit's SQLAlchemy data layer: $PROVENANCE_HOME/chat.db, or the PostgreSQL
database of PROVENANCE_DATABASE_URL (the one the checkpoints use), which many chat processes share."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.element import Element

from agent import database
from agent.chat.chainlit_names import repair_chainlit_getattr
from tools.settings import ProvenanceSettings

repair_chainlit_getattr()  # before anything loads a skops model in this process (agent/chat/chainlit_names.py)

CHAT_DB = "chat.db"

# The Chainlit SQLAlchemy data layer does not create its schema; this is its SQLite form (quoted camelCase).
CHAT_DDL = """
CREATE TABLE IF NOT EXISTS users ("id" TEXT PRIMARY KEY, "identifier" TEXT NOT NULL UNIQUE,
  "metadata" TEXT NOT NULL, "createdAt" TEXT);
CREATE TABLE IF NOT EXISTS threads ("id" TEXT PRIMARY KEY, "createdAt" TEXT, "name" TEXT,
  "userId" TEXT, "userIdentifier" TEXT, "tags" TEXT, "metadata" TEXT,
  FOREIGN KEY ("userId") REFERENCES users("id") ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS steps ("id" TEXT PRIMARY KEY, "name" TEXT NOT NULL, "type" TEXT NOT NULL,
  "threadId" TEXT NOT NULL, "parentId" TEXT, "streaming" BOOLEAN NOT NULL, "waitForAnswer" BOOLEAN,
  "isError" BOOLEAN, "metadata" TEXT, "tags" TEXT, "input" TEXT, "output" TEXT, "createdAt" TEXT,
  "command" TEXT, "modes" TEXT, "start" TEXT, "end" TEXT, "generation" TEXT, "showInput" TEXT,
  "language" TEXT, "indent" INT, "defaultOpen" BOOLEAN, "autoCollapse" BOOLEAN, "icon" TEXT,
  FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS elements ("id" TEXT PRIMARY KEY, "threadId" TEXT, "type" TEXT, "url" TEXT,
  "chainlitKey" TEXT, "name" TEXT NOT NULL, "display" TEXT, "objectKey" TEXT, "size" TEXT,
  "page" INT, "language" TEXT, "forId" TEXT, "path" TEXT, "mime" TEXT, "props" TEXT, "autoPlay" BOOLEAN,
  "playerConfig" TEXT, FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS feedbacks ("id" TEXT PRIMARY KEY, "forId" TEXT NOT NULL, "threadId" TEXT NOT NULL,
  "value" INT NOT NULL, "comment" TEXT, FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
"""


# Its PostgreSQL form: the same tables and columns. JSON stays TEXT (Chainlit writes json.dumps strings, reads
# them back as strings, and searches favourites with LIKE), tags are TEXT[] (Chainlit passes lists). Ids stay TEXT:
# LangGraph thread ids need not be UUIDs.
CHAT_DDL_POSTGRES = """
CREATE TABLE IF NOT EXISTS users ("id" TEXT PRIMARY KEY, "identifier" TEXT NOT NULL UNIQUE,
  "metadata" TEXT NOT NULL, "createdAt" TEXT);
CREATE TABLE IF NOT EXISTS threads ("id" TEXT PRIMARY KEY, "createdAt" TEXT, "name" TEXT,
  "userId" TEXT REFERENCES users("id") ON DELETE CASCADE, "userIdentifier" TEXT, "tags" TEXT[], "metadata" TEXT);
CREATE TABLE IF NOT EXISTS steps ("id" TEXT PRIMARY KEY, "name" TEXT NOT NULL, "type" TEXT NOT NULL,
  "threadId" TEXT NOT NULL REFERENCES threads("id") ON DELETE CASCADE, "parentId" TEXT, "streaming" BOOLEAN NOT NULL,
  "waitForAnswer" BOOLEAN, "isError" BOOLEAN, "metadata" TEXT, "tags" TEXT[], "input" TEXT, "output" TEXT,
  "createdAt" TEXT, "command" TEXT, "modes" TEXT, "start" TEXT, "end" TEXT, "generation" TEXT, "showInput" TEXT,
  "language" TEXT, "indent" INT, "defaultOpen" BOOLEAN, "autoCollapse" BOOLEAN, "icon" TEXT);
CREATE TABLE IF NOT EXISTS elements ("id" TEXT PRIMARY KEY,
  "threadId" TEXT REFERENCES threads("id") ON DELETE CASCADE, "type" TEXT, "url" TEXT,
  "chainlitKey" TEXT, "name" TEXT NOT NULL, "display" TEXT, "objectKey" TEXT, "size" TEXT,
  "page" INT, "language" TEXT, "forId" TEXT, "path" TEXT, "mime" TEXT, "props" TEXT, "autoPlay" BOOLEAN,
  "playerConfig" TEXT);
CREATE TABLE IF NOT EXISTS feedbacks ("id" TEXT PRIMARY KEY, "forId" TEXT NOT NULL,
  "threadId" TEXT NOT NULL REFERENCES threads("id") ON DELETE CASCADE, "value" INT NOT NULL, "comment" TEXT);
CREATE INDEX IF NOT EXISTS steps_thread_idx ON steps ("threadId");
CREATE INDEX IF NOT EXISTS threads_user_idx ON threads ("userId");
"""


def init_chat_db(home: Path) -> Path:
    """Create (idempotently) the chat history database $PROVENANCE_HOME/chat.db and return its path."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / CHAT_DB
    with sqlite3.connect(path) as conn:
        conn.executescript(CHAT_DDL)
    conn.close()
    return path


def init_postgres_chat_db(url: str) -> None:
    """Create (idempotently) the chat tables in PROVENANCE_DATABASE_URL's database; processes starting together
    take turns (CREATE TABLE IF NOT EXISTS is not safe against a concurrent one). Raises DatabaseError."""
    url = database.postgres_url(url)
    with database.connect_sync(url) as conn:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (database.lock_key("chat-schema"),))
                for statement in filter(str.strip, CHAT_DDL_POSTGRES.split(";")):
                    conn.execute(statement)
        except psycopg.Error as exc:
            raise database.unavailable(url, exc) from None


def chat_data_layer_args(settings: ProvenanceSettings) -> dict[str, Any]:
    """Create the chat database of these settings and return the keyword arguments for Chainlit's
    SQLAlchemyDataLayer: `conninfo` (SQLAlchemy URL) and, for PostgreSQL, `connect_args`. asyncpg gets the whole
    PROVENANCE_DATABASE_URL as its DSN, so libpq-style parameters (sslmode, host=/socket/dir, ...) keep working."""
    if settings.database_url is None:
        return {"conninfo": f"sqlite+aiosqlite:///{init_chat_db(settings.home)}"}
    url = database.postgres_url(settings.database_url)
    init_postgres_chat_db(url)
    # asyncpg would send an unknown URL parameter to the server as a setting; its timeout is an argument.
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    timeout = next((float(v) for k, v in query if k == "connect_timeout"), float(database.CONNECT_TIMEOUT_S))
    dsn = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k != "connect_timeout"])))
    return {"conninfo": "postgresql+asyncpg://", "connect_args": {"dsn": dsn, "timeout": timeout}}


class ChatDataLayer(SQLAlchemyDataLayer):
    """Chainlit's SQLAlchemy data layer, for a chat that keeps no files: a plot or an attached report is part of
    the run's evidence folder, and the stored conversation shows its path (README, "Chat"). Chainlit's own layer
    logs a warning for every element it is handed without a blob store; this one does not hand them over."""

    async def create_element(self, element: Element) -> None:
        if self.storage_provider is not None:
            await super().create_element(element)
