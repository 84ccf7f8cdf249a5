"""The chat history database that Chainlit's SQLAlchemy data layer uses: SQLite in the home by default, the
PostgreSQL database of PROVENANCE_DATABASE_URL (a real server, tests/postgres.py) for many chat processes."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from chainlit.context import init_http_context
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.types import Pagination, ThreadFilter
from chainlit.user import User

from agent.chat.datalayer import chat_data_layer_args, init_chat_db
from tests.agent.helpers import REPO, runner_env
from tools.settings import ProvenanceSettings

TABLES = {"users", "threads", "steps", "elements", "feedbacks"}


def test_chat_db_schema_is_created_idempotently(tmp_path: Path) -> None:
    path = init_chat_db(tmp_path / "home")
    assert init_chat_db(tmp_path / "home") == path == tmp_path / "home" / "chat.db"
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        columns = {row[1] for row in conn.execute("PRAGMA table_info(steps)")}
    conn.close()
    assert tables == {"users", "threads", "steps", "elements", "feedbacks"}
    assert {"threadId", "parentId", "showInput", "defaultOpen"} <= columns


def test_sqlite_is_the_default_chat_database(tmp_path: Path) -> None:
    args = chat_data_layer_args(ProvenanceSettings(provenance_home=tmp_path / "home", provenance_database_url=None))
    assert args == {"conninfo": f"sqlite+aiosqlite:///{tmp_path / 'home' / 'chat.db'}"}
    assert (tmp_path / "home" / "chat.db").is_file()


def _step(thread_id: str, step_id: str, kind: str, output: str, at: str) -> dict[str, Any]:
    return {
        "id": step_id,
        "threadId": thread_id,
        "name": "provenance" if kind == "assistant_message" else "provenance-user",
        "type": kind,
        "streaming": False,
        "isError": False,
        "metadata": {"source": "test"},
        "tags": ["chat"],
        "input": "",
        "output": output,
        "createdAt": at,
        "start": at,
        "end": at,
        "showInput": False,
        "defaultOpen": False,
        "autoCollapse": False,
        "language": None,
    }


@pytest.mark.slow
def test_postgres_chat_history_is_shared_between_data_layers(tmp_path: Path, postgres_url: str) -> None:
    settings = ProvenanceSettings(provenance_home=tmp_path / "home", provenance_database_url=postgres_url)
    with ThreadPoolExecutor(3) as pool:  # chat processes starting together create the schema once, without errors
        created = list(pool.map(lambda _: chat_data_layer_args(settings), range(3)))
    assert created[0] == created[1] == created[2] == chat_data_layer_args(settings)  # and again: idempotent
    assert created[0]["conninfo"] == "postgresql+asyncpg://" and created[0]["connect_args"]["dsn"] == postgres_url
    assert not (tmp_path / "home" / "chat.db").exists()
    with psycopg.connect(postgres_url) as conn:
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        columns = {
            row[0]
            for row in conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'steps'")
        }
    assert TABLES <= tables and {"threadId", "parentId", "showInput", "defaultOpen", "autoCollapse"} <= columns
    thread_id = str(uuid.uuid4())

    async def scenario() -> tuple[Any, Any, Any, str]:
        init_http_context(thread_id=thread_id)  # Chainlit's data layer defers step writes outside a request
        writer, reader = SQLAlchemyDataLayer(**created[0]), SQLAlchemyDataLayer(**created[1])
        try:
            user = await writer.create_user(User(identifier="provenance", metadata={"role": "admin"}))
            assert user is not None
            await writer.update_thread(thread_id, name="first question", user_id=user.id, tags=["provenance"])
            await writer.create_step(
                _step(thread_id, "s-1", "user_message", "What depends on amount?", "2026-01-01T10:00:00Z")
            )
            await writer.create_step(
                _step(thread_id, "s-2", "assistant_message", "fraud_detector", "2026-01-01T10:00:01Z")
            )
            persisted = await reader.get_user("provenance")
            thread = await reader.get_thread(thread_id)
            listed = await reader.list_threads(Pagination(first=10), ThreadFilter(userId=user.id))
            return persisted, thread, listed, await reader.get_thread_author(thread_id)
        finally:
            await writer.close()
            await reader.close()

    persisted, thread, listed, author = asyncio.run(scenario())
    assert persisted is not None and persisted.metadata == {"role": "admin"}
    assert thread is not None and thread["name"] == "first question" and thread["tags"] == ["provenance"]
    assert [(s["type"], s["output"]) for s in thread["steps"]] == [
        ("user_message", "What depends on amount?"),
        ("assistant_message", "fraud_detector"),
    ]
    assert [t["id"] for t in listed.data] == [thread_id] and author == "provenance"


@pytest.mark.slow
def test_the_chat_refuses_to_start_on_a_bad_database_url(tmp_path: Path) -> None:
    env = runner_env(tmp_path / "home", "postgresql://chat:secret@127.0.0.1:1/provenance")
    done = subprocess.run(
        [sys.executable, "-c", "import chainlit_app"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: cannot use the PostgreSQL database of PROVENANCE_DATABASE_URL="), done.stderr
    assert "Traceback" not in done.stderr and "secret" not in done.stderr
