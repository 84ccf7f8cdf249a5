"""The warm fork server for DataHub MCP servers (tools/catalog/mcp_forkserver.py), with the real server, the real
launcher and the embedded endpoint: a forked server answers like a cold one, dies with its launcher, and a launch
it must refuse starts cold."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.stdio import get_default_environment

from tools.catalog.mcp_forkserver import FORKSERVER_ENV, _refusal, server_environment
from tools.catalog.session import McpServerSpec, mcp_session
from tools.embedded.server import start_embedded_catalog
from tools.settings import ProvenanceSettings

REPO = Path(__file__).resolve().parents[3]


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
    spec = McpServerSpec(gms_url="", gms_token="", log_file=tmp_path / "unused.log", home=tmp_path)
    env = server_environment({**get_default_environment(), **spec.server_env()})
    with open(tmp_path / "forkserver.log", "wb") as log:  # a seekable file: the children must not inherit it
        server = subprocess.Popen(
            [sys.executable, "-m", "tools.catalog.mcp_forkserver", socket_path],
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
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


def test_a_forked_server_answers_and_dies_with_its_launcher(
    forkserver: tuple[subprocess.Popen[bytes], str], settings: ProvenanceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, socket_path = forkserver
    monkeypatch.setenv(FORKSERVER_ENV, socket_path)
    embedded = start_embedded_catalog(settings.lite_db)
    log = settings.logs / "mcp-forked.log"
    spec = McpServerSpec(gms_url=embedded.url, gms_token=embedded.token, log_file=log, home=settings.home / "mcp")

    async def scenario() -> None:
        async with mcp_session(spec) as session:
            forked = children(server.pid)
            assert len(forked) == 1, "the MCP server is the fork server's child"
            found = await session.call("search", {"query": "transactions"})
            assert found["total"] >= 1
            (launcher,) = [p for p in children(os.getpid()) if b"tools.catalog.mcp_launcher" in command(p)]
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
    text = repr(exc)
    return any(word in text for word in ("Closed", "EndOfStream", "BrokenResource", "Connection closed", "lost"))


def test_a_refused_launch_starts_cold_and_says_why(
    forkserver: tuple[subprocess.Popen[bytes], str], settings: ProvenanceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, socket_path = forkserver
    monkeypatch.setenv(FORKSERVER_ENV, socket_path)
    embedded = start_embedded_catalog(settings.lite_db)
    log = settings.logs / "mcp-cold.log"
    spec = McpServerSpec(  # fail_fast=False: the emitter retries, which the fork server imported differently
        gms_url=embedded.url, gms_token=embedded.token, log_file=log, home=settings.home / "mcp", fail_fast=False
    )

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
