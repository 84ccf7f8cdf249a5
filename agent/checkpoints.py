"""Where the LangGraph checkpoints live, and how they are serialized.

`open_checkpointer(settings)` is the one factory: SQLite in $PROVENANCE_HOME/checkpoints.db by default, or the
PostgreSQL database of PROVENANCE_DATABASE_URL (langgraph-checkpoint-postgres), which many processes share so a
pending approval can be answered from any of them.

Serialization: an explicit allowlist of the types our state holds, so a tampered checkpoint cannot make the
deserializer construct arbitrary classes (LangGraph warns about unregistered types)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Durability
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from agent import database
from tools.runtime.checkpoint_pool import PooledSaver
from tools.settings import ProvenanceSettings

CHECKPOINTS_DB = "checkpoints.db"
DURABILITY: Durability = "sync"
"""Every graph run over these checkpointers waits for a step's checkpoint before starting the next step: a process
killed at any node then resumes from the step before it. LangGraph's default ("async") saves while the next step
runs; under load a kill at the first node after discovery left the thread with no checkpoint at all."""
POOL_MAX_SIZE = 10
"""Connections per process to PostgreSQL: one chat process serves many chats, each turn borrows one at a time."""

STATE_TYPES: list[tuple[str, str]] = [
    ("agent.schemas", "RouteDecision"),
    ("agent.schemas", "FieldContext"),
    ("agent.schemas", "FieldTarget"),
    ("agent.schemas", "ExperimentPlan"),
    ("agent.schemas", "Intent"),
    ("agent.state", "ApprovalDecision"),
    ("agent.state", "ApprovalRequest"),
    ("tools.catalog.discovery", "Discovery"),
    ("tools.catalog.discovery", "AffectedFeature"),
    ("tools.catalog.discovery", "AffectedModel"),
    ("tools.catalog.discovery", "LineageStep"),
    ("tools.catalog.coverage", "Coverage"),
    ("tools.catalog.coverage", "ModelReach"),
    ("tools.catalog.datahub", "EntitySummary"),
    ("tools.evidence.schema", "PlanRecord"),
    ("tools.evidence.schema", "ModelEvidence"),
    ("tools.evidence.schema", "BindingRecord"),
    ("tools.evidence.schema", "ExperimentRecord"),
    ("tools.evidence.schema", "PublicationRecord"),
    ("tools.evidence.schema", "StageFailure"),
    ("policies.metrics", "ModelMetrics"),
    ("tools.experiment.metrics", "ModelMetrics"),  # checkpoints written before the type moved to policies
    ("policies.verdicts", "Reason"),
    ("policies.verdicts", "Verdict"),
    ("policies.engine", "Reason"),  # checkpoints written before the types moved to policies/verdicts.py
    ("policies.engine", "Verdict"),
]


def serializer() -> JsonPlusSerializer:
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


# Conversations saving at once before one waits for another's save (tools/runtime/checkpoint_pool.py); the
# default of PROVENANCE_CHECKPOINT_CONNECTIONS.
SQLITE_CONNECTIONS = ProvenanceSettings.model_fields["provenance_checkpoint_connections"].default


@asynccontextmanager
async def sqlite_checkpointer(path: Path, connections: int = SQLITE_CONNECTIONS) -> AsyncIterator[PooledSaver]:
    path.parent.mkdir(parents=True, exist_ok=True)
    async with contextlib.AsyncExitStack() as stack:
        savers = [
            AsyncSqliteSaver(await stack.enter_async_context(aiosqlite.connect(str(path))), serde=serializer())
            for _ in range(connections)
        ]
        pooled = PooledSaver(savers)
        await pooled.setup()
        yield pooled


@asynccontextmanager
async def postgres_checkpointer(url: str) -> AsyncIterator[AsyncPostgresSaver]:
    """An AsyncPostgresSaver on a small connection pool, its tables created or migrated (idempotently, and one
    process at a time). Raises DatabaseError when the URL is bad or the server cannot be used."""
    url = database.postgres_url(url)
    async with await database.connect(url):  # a clear error now, rather than a pool timeout later
        pass
    pool: AsyncConnectionPool[psycopg.AsyncConnection[DictRow]] = AsyncConnectionPool(
        url,
        open=False,
        min_size=1,
        max_size=POOL_MAX_SIZE,
        kwargs={**database.connect_options(url), "prepare_threshold": 0, "row_factory": dict_row},
        check=AsyncConnectionPool.check_connection,  # a connection the server dropped is replaced, not used
        name="provenance-checkpoints",
    )
    try:
        await pool.open(wait=True, timeout=database.CONNECT_TIMEOUT_S)
    except PoolTimeout as exc:
        await pool.close()
        raise database.unavailable(url, exc) from None
    try:
        saver = AsyncPostgresSaver(pool, serde=serializer())
        # setup() runs the migrations; two processes starting together would both insert the same version.
        async with database.advisory_lock(url, "checkpoint-setup", poll_s=0.1):
            try:
                await saver.setup()
            except psycopg.Error as exc:
                raise database.unavailable(url, exc) from None
        yield saver
    finally:
        await pool.close()


@asynccontextmanager
async def open_checkpointer(settings: ProvenanceSettings) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The checkpointer of these settings: PostgreSQL when PROVENANCE_DATABASE_URL is set, else SQLite in
    $PROVENANCE_HOME."""
    if settings.database_url is not None:
        async with postgres_checkpointer(settings.database_url) as saver:
            yield saver
    else:
        connections = settings.provenance_checkpoint_connections
        async with sqlite_checkpointer(settings.home / CHECKPOINTS_DB, connections) as sqlite_saver:
            yield sqlite_saver
