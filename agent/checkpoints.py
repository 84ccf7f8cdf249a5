"""Checkpoint serialization: an explicit allowlist of the types our state holds, so a tampered checkpoint
cannot make the deserializer construct arbitrary classes (LangGraph warns about unregistered types)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

STATE_TYPES: list[tuple[str, str]] = [
    ("agent.schemas", "RouteDecision"),
    ("agent.schemas", "FieldContext"),
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
    ("policies.engine", "Reason"),
    ("policies.engine", "Verdict"),
]


def serializer() -> JsonPlusSerializer:
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


@asynccontextmanager
async def sqlite_checkpointer(path: Path) -> AsyncIterator[AsyncSqliteSaver]:
    path.parent.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(str(path)) as conn:
        yield AsyncSqliteSaver(conn, serde=serializer())
