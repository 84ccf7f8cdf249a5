"""One decision and one publication per run, however many processes share the runs.

`run_claim(settings, run_id)` serialises everything that decides or publishes one run: with
PROVENANCE_DATABASE_URL a PostgreSQL advisory lock (every process on the database), otherwise a file lock in the
run folder (`runs/<run_id>/.evidence.json.lock`, every process on this machine). Whoever holds it re-reads what it
is about to change: `Session.decide` whether the approval is still pending, `publish_run` whether the evidence
already says `published`. So two processes answering the same approval publish once, and the second learns that
the run was decided.

The claim is reentrant within one asyncio task and the tasks it starts (a context variable): `decide` holds it
while the graph runs, and the graph's `publish` node takes it again without waiting for itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar
from pathlib import Path

from agent import database
from tools import atomic
from tools.evidence.store import EVIDENCE_FILE, runs_dir
from tools.settings import ProvenanceSettings

_held: ContextVar[frozenset[str]] = ContextVar("provenance_run_claims", default=frozenset())


@contextlib.asynccontextmanager
async def _file_claim(path: Path) -> AsyncIterator[None]:
    """atomic.file_lock (a blocking flock) taken in a worker thread, so the event loop keeps serving other chats
    while this one waits."""
    stack = contextlib.ExitStack()
    waiting = asyncio.ensure_future(asyncio.to_thread(stack.enter_context, atomic.file_lock(path)))
    try:
        await asyncio.shield(waiting)
    except asyncio.CancelledError:
        waiting.add_done_callback(lambda _: stack.close())  # release it as soon as the thread gets it
        raise
    with stack:
        yield


@contextlib.asynccontextmanager
async def run_claim(settings: ProvenanceSettings, run_id: str) -> AsyncIterator[None]:
    """Hold the claim on `run_id` (waiting for another holder to finish). Raises DatabaseError when
    PROVENANCE_DATABASE_URL is set and its server cannot be used."""
    held = _held.get()
    if run_id in held:
        yield
        return
    token = _held.set(held | {run_id})
    try:
        if settings.database_url is not None:
            async with database.advisory_lock(database.postgres_url(settings.database_url), f"run:{run_id}"):
                yield
        else:
            folder = runs_dir(settings.home) / run_id
            if not folder.is_dir():  # no such run: nothing to decide or publish, and no folder to create for it
                yield
                return
            async with _file_claim(folder / EVIDENCE_FILE):
                yield
    finally:
        _held.reset(token)
