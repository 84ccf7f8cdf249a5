"""The chat history database, $PROVENANCE_HOME/chat.db, for Chainlit's SQLAlchemy data layer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

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


def init_chat_db(home: Path) -> Path:
    """Create (idempotently) the chat history database $PROVENANCE_HOME/chat.db and return its path."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / CHAT_DB
    with sqlite3.connect(path) as conn:
        conn.executescript(CHAT_DDL)
    conn.close()
    return path
