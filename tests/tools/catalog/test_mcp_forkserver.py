"""The warm fork server for DataHub MCP servers (tools/catalog/mcp_forkserver.py), with the real server, the real
launcher and the embedded endpoint: a forked server answers like a cold one, dies with its launcher, and a launch
it must refuse starts cold."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_forkserver import spawn_forkserver
from tools.catalog.mcp_forkserver import _refusal
from tools.catalog.session import McpServerSpec, mcp_session
from tools.embedded.server import start_embedded_catalog
from tools.settings import ProvenanceSettings


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            found += [int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except FileNotFoundError:
            continue
    return found


def command(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except FileNotFoundError:
        return b""


@pytest.fixture
def forkserver(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    folder = Path(tempfile.mkdtemp(prefix="pv-fs-test-"))
    socket_path = str(folder / "s")
    server = spawn_forkserver(Path(socket_path), tmp_path / "forkserver.log")
    deadline = time.monotonic() + 120
    while not os.path.exists(socket_path):
        assert server.poll() is None, "the fork server ended before listening"
        assert time.monotonic() < deadline, "the fork server did not listen within 120 s"
        time.sleep(0.1)
    yield server, socket_path
    server.terminate()
    server.wait(timeout=10)


def test_a_launch_is_refused_only_for_a_variable_read_at_import_time() -> None:
    base = {"PATH": "/usr/bin", "DATAHUB_REST_EMITTER_DEFAULT_RETRY_MAX_TIMES": "0"}
    runtime = {"DATAHUB_GMS_URL": "http://127.0.0.1:1", "HOME": "/elsewhere", "TOOLS_IS_MUTATION_ENABLED": "true"}
    assert _refusal(base, {**base, **runtime}) is None
    assert _refusal(base, {**base, "DATAHUB_REST_EMITTER_DEFAULT_RETRY_MAX_TIMES": "4"}) == (
        "environment differs in DATAHUB_REST_EMITTER_DEFAULT_RETRY_MAX_TIMES"
    )


@pytest.mark.slow
def test_a_forked_server_answers_and_dies_with_its_launcher(
    forkserver: tuple[subprocess.Popen[bytes], str], settings: ProvenanceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, socket_path = forkserver
    embedded, spec = endpoint_and_spec(settings, "mcp-forked.log", forkserver=socket_path)
    log = spec.log_file

    def launchers() -> set[int]:
        return {p for p in children(os.getpid()) if b"tools.catalog.mcp_launcher" in command(p)}

    async def scenario() -> None:
        others = launchers()  # e.g. the worker's shared read-only catalog (tests/shared_catalog.py)
        async with mcp_session(spec) as session:
            forked = children(server.pid)
            assert len(forked) == 1, "the MCP server is the fork server's child"
            found = await session.call("search", {"query": "transactions"})
            assert found["total"] >= 1
            (launcher,) = launchers() - others
            os.kill(launcher, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while forked[0] in children(server.pid):
                assert time.monotonic() < deadline, "the forked server outlived its launcher"
                await asyncio.sleep(0.05)

    try:
        asyncio.run(scenario())
    except BaseException as exc:  # the session's transport is gone after the kill: only that may fail here
        if not _transport_closed(exc):
            raise
    finally:
        embedded.stop()
    assert "starting cold" not in log.read_text()


def _transport_closed(exc: BaseException) -> bool:
    """Only the session's own end after the kill: every exception of a group is one, and none is an assertion."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_transport_closed(inner) for inner in exc.exceptions)
    if isinstance(exc, AssertionError):
        return False
    text = repr(exc)
    return any(word in text for word in ("Closed", "EndOfStream", "BrokenResource", "Connection closed", "lost"))


def endpoint_and_spec(
    settings: ProvenanceSettings, log_name: str, *, fail_fast: bool = True, forkserver: str | None = None
) -> tuple[Any, McpServerSpec]:
    embedded = start_embedded_catalog(settings.lite_db)
    spec = McpServerSpec(
        gms_url=embedded.url,
        gms_token=embedded.token,
        log_file=settings.logs / log_name,
        home=settings.home / "mcp",
        fail_fast=fail_fast,
        forkserver=forkserver,
    )
    return embedded, spec


@pytest.mark.slow
def test_a_refused_launch_starts_cold_and_says_why(
    forkserver: tuple[subprocess.Popen[bytes], str], settings: ProvenanceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, socket_path = forkserver
    # fail_fast=False: the emitter retries, which the fork server imported differently
    embedded, spec = endpoint_and_spec(settings, "mcp-cold.log", fail_fast=False, forkserver=socket_path)
    log = spec.log_file

    async def scenario() -> None:
        async with mcp_session(spec) as session:
            assert children(server.pid) == []
            assert (await session.call("search", {"query": "transactions"}))["total"] >= 1

    try:
        asyncio.run(scenario())
    finally:
        embedded.stop()
    assert "fork server refused (environment differs in DATAHUB_REST_EMITTER_DEFAULT_RETRY_MAX_TIMES)" in (
        log.read_text()
    )
