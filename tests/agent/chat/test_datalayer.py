"""The chat history database that Chainlit's SQLAlchemy data layer uses."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent.chat.datalayer import init_chat_db


def test_chat_db_schema_is_created_idempotently(tmp_path: Path) -> None:
    path = init_chat_db(tmp_path / "home")
    assert init_chat_db(tmp_path / "home") == path == tmp_path / "home" / "chat.db"
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        columns = {row[1] for row in conn.execute("PRAGMA table_info(steps)")}
    conn.close()
    assert tables == {"users", "threads", "steps", "elements", "feedbacks"}
    assert {"threadId", "parentId", "showInput", "defaultOpen"} <= columns
