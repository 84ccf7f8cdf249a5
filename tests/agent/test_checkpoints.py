"""Where the checkpoints live: SQLite in $PROVENANCE_HOME by default, PostgreSQL with PROVENANCE_DATABASE_URL (a
real server, tests/postgres.py). A pending approval written by one process is answered by another, and a bad URL
is a clear error, never a traceback."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from agent.checkpoints import open_checkpointer
from agent.conversation import open_session
from agent.errors import DatabaseUnavailableError, DatabaseUrlError, UsageError
from agent.state import ApprovalDecision
from tests.agent.helpers import (
    DEMO_QUESTION,
    REPO,
    catalog_write_count,
    documents,
    model_tags,
    run_runner,
    runner_env,
)
from tests.postgres import Cluster
from tools.evidence.store import read_evidence
from tools.runtime.checkpoint_pool import PooledSaver
from tools.settings import ProvenanceSettings

BLOCK = "urn:li:tag:provenance:BLOCK"


def test_sqlite_in_the_home_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROVENANCE_DATABASE_URL", "  ")  # set but empty counts as unset
    settings = ProvenanceSettings(provenance_home=tmp_path / "home")
    assert settings.database_url is None

    async def go() -> str:
        async with open_checkpointer(settings) as saver:
            return type(saver).__name__

    assert asyncio.run(go()) == PooledSaver.__name__
    assert (tmp_path / "home" / "checkpoints.db").is_file()


def test_postgres_tables_are_set_up_once_by_processes_starting_together(tmp_path: Path, postgres_url: str) -> None:
    settings = ProvenanceSettings(provenance_home=tmp_path / "home", provenance_database_url=postgres_url)

    async def one() -> str:
        async with open_checkpointer(settings) as saver:
            assert isinstance(saver, AsyncPostgresSaver)
            assert await saver.aget_tuple({"configurable": {"thread_id": "none", "checkpoint_ns": ""}}) is None
            return type(saver).__name__

    async def together() -> list[str]:
        return list(await asyncio.gather(*(one() for _ in range(4))))

    assert asyncio.run(together()) == [AsyncPostgresSaver.__name__] * 4
    assert asyncio.run(one()) == AsyncPostgresSaver.__name__  # and again on set-up tables
    with psycopg.connect(postgres_url) as conn:
        versions = [row[0] for row in conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
    assert versions == list(range(len(AsyncPostgresSaver.MIGRATIONS)))  # each migration exactly once
    assert not (tmp_path / "home" / "checkpoints.db").exists()


@pytest.mark.slow
def test_a_pending_approval_is_approved_from_another_process(seeded_home: Path, postgres_url: str) -> None:
    settings = ProvenanceSettings(provenance_home=seeded_home, provenance_database_url=postgres_url)
    before = catalog_write_count(settings.lite_db)

    (asked,) = asyncio.run(run_runner(seeded_home, postgres_url, "ask", "t-pg", DEMO_QUESTION))
    assert asked["pending"] is True and asked["verdict"] == "BLOCK", asked
    run_id = str(asked["run_id"])
    assert read_evidence(seeded_home, run_id).publication.status == "pending_approval"
    assert catalog_write_count(settings.lite_db) == before
    assert not (seeded_home / "checkpoints.db").exists()  # the checkpoint is in PostgreSQL
    with psycopg.connect(postgres_url) as conn:
        (rows,) = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 't-pg'").fetchone() or (0,)
    assert rows > 0

    ready, outcome = asyncio.run(run_runner(seeded_home, postgres_url, "decide", "t-pg", "approve"))
    assert ready == {"ready": run_id}  # the second process sees the approval the first one left pending
    assert outcome == {"outcome": "decided", "publication": "published"}
    evidence = read_evidence(seeded_home, run_id)
    assert evidence.publication.status == "published" and evidence.publication.attempts == 1
    assert model_tags(settings.lite_db) == [BLOCK] and len(documents(settings.lite_db)) == 1

    async def a_third_process() -> None:  # in-process, on the same database: nothing left to decide
        async with open_session(settings) as session:
            assert await session.pending("t-pg") is None
            with pytest.raises(UsageError, match="no pending approval"):
                await session.decide("t-pg", ApprovalDecision(decision="approve", by="test"))

    asyncio.run(a_third_process())
    assert read_evidence(seeded_home, run_id).publication.attempts == 1


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # nothing listens there once the socket is closed


def _open(settings: ProvenanceSettings) -> None:
    async def go() -> None:
        async with open_checkpointer(settings):
            pass

    asyncio.run(go())


@pytest.mark.parametrize(
    "url",
    ["mysql://user:secret@db.example/provenance", "sqlite:///tmp/checkpoints.db", "postgresql://[::1/x", "http://x"],
)
def test_a_url_that_is_not_postgresql_is_refused_clearly(tmp_path: Path, url: str) -> None:
    settings = ProvenanceSettings(provenance_home=tmp_path, provenance_database_url=url)
    with pytest.raises(DatabaseUrlError) as raised:
        _open(settings)
    message = str(raised.value)
    assert "PROVENANCE_DATABASE_URL" in message and "postgresql://user:password@host:5432/dbname" in message
    assert "unset PROVENANCE_DATABASE_URL" in message or "set it like" in message
    assert "secret" not in message
    assert isinstance(raised.value, UsageError)  # the CLI's bad-input exit code


def test_an_unreachable_server_or_missing_database_is_a_clear_error(tmp_path: Path, postgres_cluster: Cluster) -> None:
    unreachable = f"postgresql://provenance:secret@127.0.0.1:{_closed_port()}/provenance"
    for url, detail in ((unreachable, "Connection refused"), (postgres_cluster.url("nowhere"), "does not exist")):
        with pytest.raises(DatabaseUnavailableError) as raised:
            _open(ProvenanceSettings(provenance_home=tmp_path, provenance_database_url=url))
        message = str(raised.value)
        assert message.startswith("cannot use the PostgreSQL database of PROVENANCE_DATABASE_URL="), message
        assert detail in message and "Start the server or fix the URL" in message, message
        assert "unset PROVENANCE_DATABASE_URL" in message and "secret" not in message
    assert isinstance(raised.value, ConnectionError)  # the CLI's failure exit code, like an unreachable catalog


@pytest.mark.slow
def test_the_cli_reports_a_bad_database_url_without_a_traceback(seeded_home: Path) -> None:
    for url, code in (("mysql://x/y", 2), (f"postgresql://u:secret@127.0.0.1:{_closed_port()}/db", 1)):
        env = runner_env(seeded_home, url)
        done = subprocess.run(
            [sys.executable, "-m", "agent.cli", "ask", "hi"],  # forked by the session's command-line fork server
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == code, done.stderr
        assert done.stderr.startswith("error: ") and "PROVENANCE_DATABASE_URL" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and "secret" not in done.stderr


@pytest.mark.slow
def test_each_step_is_on_disk_before_the_next_step_starts(
    settings: ProvenanceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed as the plan node starts must find discovery checkpointed (tests/reliability kills it there).
    The saver is slowed so that a save running alongside the next step, LangGraph's default, loses this race."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from agent.checkpoints import serializer
    from agent.planning.planner import DeterministicPlanner

    real_aput = AsyncSqliteSaver.aput
    real_plan = DeterministicPlanner.plan
    seen_at_plan: list[bool] = []

    async def slow_aput(self: AsyncSqliteSaver, *args: object, **kwargs: object) -> object:
        await asyncio.sleep(0.3)
        return await real_aput(self, *args, **kwargs)  # type: ignore[arg-type]

    async def plan_reading_the_disk(self: DeterministicPlanner, *args: object) -> object:
        import aiosqlite

        async with aiosqlite.connect(str(settings.home / "checkpoints.db")) as conn:
            saved = await AsyncSqliteSaver(conn, serde=serializer()).aget_tuple(
                {"configurable": {"thread_id": "durable", "checkpoint_ns": ""}}
            )
        seen_at_plan.append(saved is not None and saved.checkpoint["channel_values"].get("discovery") is not None)
        return await real_plan(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(AsyncSqliteSaver, "aput", slow_aput)
    monkeypatch.setattr(DeterministicPlanner, "plan", plan_reading_the_disk)

    async def scenario() -> None:
        async with open_session(settings) as session:
            await session.ask(DEMO_QUESTION, thread_id="durable", mode="no_publish")

    asyncio.run(scenario())
    assert seen_at_plan == [True]
