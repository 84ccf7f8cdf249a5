"""Two sessions answering the same pending approval at the same moment: one decides and publishes, the other
learns that the run was decided (AlreadyDecided), and the catalog is written once. On PostgreSQL the two are
processes (the run's claim is an advisory lock); on SQLite they are two sessions of one process (a file lock).

To make "at the same moment" exact rather than likely, the test holds the run's claim itself until both sessions
have checked that the approval is pending and wait for the claim; then it lets go."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import psycopg
import pytest

from agent.claims import run_claim
from agent.conversation import TurnResult, open_session
from agent.errors import AlreadyDecided
from agent.state import ApprovalDecision
from tests.agent.helpers import (
    DEMO_QUESTION,
    catalog_write_count,
    documents,
    model_tags,
    read_json_line,
    run_runner,
    start_runner,
)
from tools.evidence.store import EVIDENCE_FILE, read_evidence, runs_dir
from tools.settings import ProvenanceSettings

BLOCK = "urn:li:tag:provenance:BLOCK"
APPROVE = ApprovalDecision(decision="approve", by="test")


async def _until(what: str, check: Callable[[], Awaitable[bool]], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.05)


def _assert_published_once(settings: ProvenanceSettings, run_id: str, writes_before: int) -> None:
    evidence = read_evidence(settings.home, run_id)
    assert evidence.publication.status == "published"
    assert evidence.publication.attempts == 1  # publish ran once
    assert model_tags(settings.lite_db) == [BLOCK] and len(documents(settings.lite_db)) == 1
    assert catalog_write_count(settings.lite_db) > writes_before


@pytest.mark.slow
def test_two_processes_approving_at_once_publish_once(seeded_home: Path, postgres_url: str) -> None:
    settings = ProvenanceSettings(provenance_home=seeded_home, provenance_database_url=postgres_url)

    async def both_wait() -> bool:
        async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
            cursor = await conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            row = await cursor.fetchone()
            return row is not None and int(row[0]) >= 2

    async def scenario() -> tuple[str, int, list[dict[str, object]]]:
        (asked,) = await run_runner(seeded_home, postgres_url, "ask", "t-race", DEMO_QUESTION)
        assert asked["pending"] is True, asked
        run_id = str(asked["run_id"])
        before = catalog_write_count(settings.lite_db)
        async with run_claim(settings, run_id):
            deciders = [await start_runner(seeded_home, postgres_url, "decide", "t-race", "approve") for _ in "ab"]
            for decider in deciders:  # each saw the approval pending ...
                assert await read_json_line(decider) == {"ready": run_id}
            await _until("both wait for the claim", both_wait)  # ... and waits for the claim
        outcomes = [await read_json_line(decider) for decider in deciders]
        for decider in deciders:
            assert await asyncio.wait_for(decider.wait(), 60) == 0
        return run_id, before, outcomes

    run_id, before, outcomes = asyncio.run(scenario())
    decided = [o for o in outcomes if o["outcome"] == "decided"]
    refused = [o for o in outcomes if o["outcome"] == "already_decided"]
    assert decided == [{"outcome": "decided", "publication": "published"}], outcomes
    assert len(refused) == 1 and f"run {run_id}" in str(refused[0]["message"]), outcomes
    assert "its publication is published" in str(refused[0]["message"])  # the same answer, told to the loser
    _assert_published_once(settings, run_id, before)


def _blocked_flock_waiters(lock: Path) -> int:
    """Waiters queued on `lock` in /proc/locks (lines with "->"), matched by inode."""
    inode = os.stat(lock).st_ino
    waiting = 0
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and "FLOCK" in fields:
            device_inode = fields[fields.index("FLOCK") + 4]
            waiting += int(device_inode.rsplit(":", 1)[1]) == inode
    return waiting


@pytest.mark.slow
def test_two_sessions_approving_at_once_on_sqlite_publish_once(settings: ProvenanceSettings) -> None:
    assert settings.database_url is None

    async def scenario() -> tuple[str, int, list[TurnResult | BaseException]]:
        async with open_session(settings) as session:
            asked = await session.ask(DEMO_QUESTION, thread_id="t-race")
        assert asked.pending is not None
        run_id = asked.pending.run_id
        before = catalog_write_count(settings.lite_db)
        holding, release = asyncio.Event(), asyncio.Event()

        async def hold() -> None:  # a task of its own: the claim is reentrant within the task that holds it
            async with run_claim(settings, run_id):
                holding.set()
                await release.wait()

        holder = asyncio.create_task(hold())
        await holding.wait()
        lock = runs_dir(settings.home) / run_id / f".{EVIDENCE_FILE}.lock"
        async with open_session(settings) as first, open_session(settings) as second:
            deciding = [asyncio.create_task(s.decide("t-race", APPROVE)) for s in (first, second)]

            async def both_wait() -> bool:
                return _blocked_flock_waiters(lock) >= 2

            await _until("both sessions wait for the run's file lock", both_wait)
            release.set()
            await holder
            results = list(await asyncio.gather(*deciding, return_exceptions=True))
        return run_id, before, results

    run_id, before, results = asyncio.run(scenario())
    turns = [r for r in results if isinstance(r, TurnResult)]
    refused = [r for r in results if isinstance(r, AlreadyDecided)]
    assert len(turns) == 1 and len(refused) == 1, results
    publication = turns[0].state.publication
    assert publication is not None and publication.status == "published"
    assert "its publication is published" in str(refused[0])
    _assert_published_once(settings, run_id, before)


@pytest.mark.slow
def test_publishing_a_published_run_again_writes_nothing(settings: ProvenanceSettings) -> None:
    from agent.nodes.approval import publish_run

    async def scenario() -> tuple[int, int]:
        async with open_session(settings) as session:
            asked = await session.ask(DEMO_QUESTION, thread_id="t-again")
            assert asked.pending is not None
            await session.decide("t-again", APPROVE)
            before = catalog_write_count(settings.lite_db)
            # Two more publications at once (`provenance publish` twice, say): both return the record as it is.
            again = await asyncio.gather(
                *(publish_run(session.context, asked.pending.run_id, decided_by="cli") for _ in "ab")
            )
            assert {r.status for r in again} == {"published"} and {r.attempts for r in again} == {1}
            return before, catalog_write_count(settings.lite_db)

    before, after = asyncio.run(scenario())
    assert after == before
