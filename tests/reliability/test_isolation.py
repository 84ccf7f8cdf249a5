"""Isolation and load.

Conversations: 20 assessment turns run at once through one graph (one Session, one catalog session, separate
thread ids, `asyncio.gather`), mixing questions on different fields and operators. Each thread's final state must
match what the same question gives when asked alone (field, validated mutation, overall and per-model verdicts,
metrics), its pending approval must name its own run and question, and its evidence file its own request: no
state bleeds between threads. Figures: assessment turns per second and the p95 latency of a turn under that load
(and the median latency of a turn alone, for comparison).

Catalog writes: 4 MCP sessions (4 official MCP server processes) and 2 direct-HTTP writers hit the embedded
endpoint at once with add/remove tag operations on their own entities, and all of them also add tags to one
shared entity (the read-modify-write race). Read back from the Lite file: no write may be lost or duplicated.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.urns import DatasetUrn, TagUrn

from agent.conversation import TurnResult, open_session
from seed.catalog import write_to_lite
from tests.reliability.common import fresh_home, percentile, settings_for, snapshot
from tools.catalog.datahub import CatalogWriter
from tools.catalog.session import McpServerSpec, mcp_writer_session
from tools.embedded.server import start_embedded_catalog
from tools.evidence.store import read_evidence

QUESTIONS = [
    "What happens if payments.transactions.amount is sent in cents instead of dollars?",
    "What happens if payments.transactions.country has 20% nulls?",
    "What happens if payments.transactions.merchant_category gets a new category 'crypto'?",
    "What happens if payments.transactions.hour is shifted from UTC to CET?",
    "What happens if payments.transactions.amount is rounded to whole dollars?",
    "What happens if payments.transactions.txn_count_1h is multiplied by 10?",
    "What happens if payments.transactions.account_age_days is capped at 30?",
    "What happens if payments.transactions.country 'US' is renamed to 'USA'?",
    "What happens if payments.transactions.hour is sent as null on 5% of rows?",
    "What happens if payments.transactions.amount has noise of 5%?",
]


def _signature(values: dict[str, Any]) -> dict[str, Any]:
    """What a turn concluded, comparable across threads (run ids and timings left out)."""
    return {
        "question": values.get("question"),
        "field": values["field_context"].field if values.get("field_context") else None,
        "mutation": values["plan_record"].mutation if values.get("plan_record") else None,
        "verdict": str(values.get("verdict")),
        "models": {
            r.urn: (str(r.verdict), r.metrics.model_dump(mode="json") if r.metrics else None)
            for r in values.get("model_results") or []
        },
    }


@dataclass
class ConversationFigures:
    threads: int
    distinct_questions: int
    bled: list[str]
    """Threads whose state, approval request or evidence did not match their own question alone."""
    duplicate_run_ids: int
    catalog_writes: int
    wall_seconds: float
    turns_per_second: float
    p95_seconds: float
    median_seconds: float
    alone_median_seconds: float
    verdicts: dict[str, int] = field(default_factory=dict)


async def _conversations(home: Path, threads: int) -> ConversationFigures:
    settings = settings_for(home)
    async with open_session(settings) as session:
        await session.context.handle.get()  # the catalog start is not part of a turn
        expected: dict[str, dict[str, Any]] = {}
        alone: list[float] = []
        for index, question in enumerate(QUESTIONS):
            started = time.perf_counter()
            turn = await session.ask(question, thread_id=f"alone-{index}")
            alone.append(time.perf_counter() - started)
            expected[question] = _signature(turn.values)
        before = snapshot(settings.lite_db)

        async def timed(index: int) -> tuple[TurnResult, float, str]:
            question = QUESTIONS[index % len(QUESTIONS)]
            started = time.perf_counter()
            turn = await session.ask(question, thread_id=f"load-{index}")
            return turn, time.perf_counter() - started, question

        started = time.perf_counter()
        results = await asyncio.gather(*(timed(i) for i in range(threads)))
        wall = time.perf_counter() - started
        writes = snapshot(settings.lite_db).writes_since(before)

    bled = []
    run_ids = []
    for turn, _, question in results:
        values = turn.values
        run_id = values.get("run_id")
        run_ids.append(run_id)
        problems = []
        if _signature(values) != expected[question]:
            problems.append("state differs from the question asked alone")
        if turn.pending is None or turn.pending.run_id != run_id or turn.pending.question != question:
            problems.append("the approval request is not this thread's")
        elif read_evidence(home, run_id).request.question != question:
            problems.append("the evidence holds another request")
        if problems:
            bled.append(f"{turn.thread_id}: {'; '.join(problems)}")
    latencies = [seconds for _, seconds, _ in results]
    verdicts: dict[str, int] = {}
    for turn, _, _ in results:
        key = str(turn.values.get("verdict"))
        verdicts[key] = verdicts.get(key, 0) + 1
    return ConversationFigures(
        threads=threads,
        distinct_questions=len({q for _, _, q in results}),
        bled=bled,
        duplicate_run_ids=len(run_ids) - len(set(run_ids)),
        catalog_writes=writes,
        wall_seconds=wall,
        turns_per_second=threads / wall,
        p95_seconds=percentile(latencies, 95),
        median_seconds=statistics.median(latencies),
        alone_median_seconds=statistics.median(alone),
        verdicts=verdicts,
    )


def measure_conversations(template: Path, workdir: Path | None = None, threads: int = 20) -> ConversationFigures:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        home = fresh_home(template, Path(tmp) / "home")
        return asyncio.run(_conversations(home, threads))


# ------------------------------------------------------------------------------------------ concurrent writers


@dataclass
class WriteLoadFigures:
    mcp_sessions: int
    http_writers: int
    operations: int
    lost_writes: int
    unexpected_tags: int
    duplicate_tags: int
    errors: list[str]
    seconds: float
    operations_per_second: float


def _dataset(name: str) -> str:
    return str(DatasetUrn("hive", f"load.{name}", "PROD"))


def _tag(name: str) -> str:
    return str(TagUrn(name))


def _prepare(db: Path, writers: list[str], ops: int, shared: str) -> None:
    mcps = []
    for writer in writers:
        mcps.append(MetadataChangeProposalWrapper(entityUrn=_dataset(writer), aspect=m.StatusClass(removed=False)))
        for k in range(ops):
            tag = _tag(f"load-{writer}-{k}")
            mcps.append(MetadataChangeProposalWrapper(entityUrn=tag, aspect=m.TagPropertiesClass(name=tag[11:])))
    mcps.append(MetadataChangeProposalWrapper(entityUrn=shared, aspect=m.StatusClass(removed=False)))
    write_to_lite(mcps, db)


def _tags_of(db: Path, urn: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT metadata FROM metadata_aspect_v2 WHERE urn = ? AND aspect_name = 'globalTags' AND version = 0",
            (urn,),
        ).fetchone()
    return [t["tag"] for t in json.loads(row[0])["tags"]] if row else []


def _graphql(url: str, token: str, operation: str, tags: list[str], urn: str) -> None:
    body = json.dumps(
        {
            "query": f"mutation {operation}($input: BatchAddTagsInput!) {{ {operation}(input: $input) }}",
            "variables": {"input": {"tagUrns": tags, "resources": [{"resourceUrn": urn}]}},
        }
    ).encode()
    request = urllib.request.Request(
        f"{url}/api/graphql",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        reply = json.loads(response.read())
    if reply.get("errors"):
        raise RuntimeError(f"{operation}: {reply['errors']}")


async def _write_load(home: Path, sessions: int, http_writers: int, ops: int) -> WriteLoadFigures:
    settings = settings_for(home)
    db = settings.lite_db
    mcp_names = [f"mcp{i}" for i in range(sessions)]
    http_names = [f"http{i}" for i in range(http_writers)]
    shared = _dataset("shared")
    _prepare(db, mcp_names + http_names, ops, shared)
    running = start_embedded_catalog(db)
    errors: list[str] = []
    count = [0]
    lock = threading.Lock()

    def done() -> None:
        with lock:
            count[0] += 1

    async def mcp_client(name: str, ready: asyncio.Event, go: asyncio.Event, opened: list[str]) -> None:
        spec = McpServerSpec(
            gms_url=running.url,
            gms_token=running.token,
            log_file=settings.logs / f"load-{name}.log",
            home=settings.home / "mcp-home",
            forkserver=settings.forkserver,
        )
        async with mcp_writer_session(spec) as session:
            writer = CatalogWriter(session)
            opened.append(name)
            if len(opened) == sessions:
                ready.set()
            await go.wait()
            own = _dataset(name)
            for k in range(ops):
                tag = _tag(f"load-{name}-{k}")
                try:
                    await writer.add_tags([tag], [own])
                    done()
                    await writer.add_tags([tag], [shared])
                    done()
                    if k % 2 == 0:
                        await writer.remove_tags([tag], [own])
                        done()
                except Exception as exc:
                    errors.append(f"{name} op {k}: {exc}")

    def http_client(name: str) -> None:
        own = _dataset(name)
        for k in range(ops):
            tag = _tag(f"load-{name}-{k}")
            try:
                _graphql(running.url, running.token, "batchAddTags", [tag], own)
                done()
                _graphql(running.url, running.token, "batchAddTags", [tag], shared)
                done()
                if k % 2 == 0:
                    _graphql(running.url, running.token, "batchRemoveTags", [tag], own)
                    done()
            except Exception as exc:
                errors.append(f"{name} op {k}: {exc}")

    try:
        ready, go = asyncio.Event(), asyncio.Event()
        opened: list[str] = []
        clients = [asyncio.create_task(mcp_client(name, ready, go, opened)) for name in mcp_names]
        await asyncio.wait_for(ready.wait(), 120)  # all MCP servers up: the load starts together
        started = time.perf_counter()
        go.set()
        await asyncio.gather(*clients, *(asyncio.to_thread(http_client, name) for name in http_names))
        seconds = time.perf_counter() - started
    finally:
        running.stop()

    lost = unexpected = duplicated = 0
    for name in mcp_names + http_names:
        actual = _tags_of(db, _dataset(name))
        wanted = {_tag(f"load-{name}-{k}") for k in range(ops) if k % 2 == 1}
        lost += len(wanted - set(actual))
        unexpected += len(set(actual) - wanted)
        duplicated += len(actual) - len(set(actual))
    actual = _tags_of(db, shared)
    wanted = {_tag(f"load-{name}-{k}") for name in mcp_names + http_names for k in range(ops)}
    lost += len(wanted - set(actual))
    unexpected += len(set(actual) - wanted)
    duplicated += len(actual) - len(set(actual))
    return WriteLoadFigures(
        mcp_sessions=sessions,
        http_writers=http_writers,
        operations=count[0],
        lost_writes=lost,
        unexpected_tags=unexpected,
        duplicate_tags=duplicated,
        errors=errors[:5],
        seconds=seconds,
        operations_per_second=count[0] / seconds,
    )


def measure_write_load(
    template: Path, workdir: Path | None = None, sessions: int = 4, http_writers: int = 2, ops: int = 15
) -> WriteLoadFigures:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        home = fresh_home(template, Path(tmp) / "home")
        return asyncio.run(_write_load(home, sessions, http_writers, ops))


@pytest.mark.slow
def test_concurrent_conversations_do_not_bleed_into_each_other(seeded_template: Path, tmp_path: Path) -> None:
    figures = measure_conversations(seeded_template, tmp_path)
    assert figures.threads == 20 and figures.distinct_questions == len(QUESTIONS)
    assert not figures.bled, figures.bled
    assert figures.duplicate_run_ids == 0 and figures.catalog_writes == 0
    assert len(figures.verdicts) > 1  # the mix really has different outcomes
    assert figures.turns_per_second > 0


@pytest.mark.slow
def test_concurrent_mcp_sessions_and_http_writers_lose_no_write(seeded_template: Path, tmp_path: Path) -> None:
    figures = measure_write_load(seeded_template, tmp_path)
    assert not figures.errors, figures.errors
    assert figures.operations == 6 * 15 * 2 + 6 * 8
    assert figures.lost_writes == figures.unexpected_tags == figures.duplicate_tags == 0, figures
