"""A served catalog (tools/catalog/served.py): the pinned mcp-server-datahub over streamable HTTP, with mutations off,
read through by `open_catalog` instead of starting an endpoint and a stdio server; the state file's rules."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN, STATUS_TAG_URNS
from tools.catalog.connection import open_catalog, open_writer
from tools.catalog.datahub import CatalogReader, CatalogWriter
from tools.catalog.sdk_tools import SDK_ASPECTS_TOOL
from tools.catalog.serve_state import STATE_FILE, state_path
from tools.catalog.served import ServedCatalog, find_served, serve_catalog
from tools.catalog.session import READ_TOOLS, WRITE_TOOLS, CatalogError, WriterSession
from tools.settings import ProvenanceSettings


@pytest.mark.slow
def test_the_reader_over_http_cannot_write_only_a_writer_session_can(settings: ProvenanceSettings) -> None:
    """As test_mcp_integration's stdio test: the served MCP server itself runs without its mutation tools."""

    async def scenario(served: ServedCatalog) -> None:
        async with open_catalog(settings) as catalog:
            assert catalog.embedded is None and catalog.description == served.describe()
            session = catalog.session
            assert not isinstance(session, WriterSession)
            assert set(session.tool_names) <= READ_TOOLS | {SDK_ASPECTS_TOOL}
            assert not WRITE_TOOLS & session.server_tools and "get_entities" in session.server_tools
            with pytest.raises(CatalogError, match="DataHub MCP tool add_tags writes to the catalog.*read-only"):
                await session.call(
                    "add_tags", {"tag_urns": [STATUS_TAG_URNS["BLOCK"]], "entity_urns": [FRAUD_MODEL_URN]}
                )
            reader = CatalogReader(session)
            fields = await reader.list_schema_fields(POSTGRES_TABLE_URN)
            assert "amount" in [f.field_path for f in fields]
            # every call is recorded, as over stdio (evidence, traces, call count)
            assert [c.tool for c in session.calls] == ["list_schema_fields"] and session.calls[0].ok

            async with open_writer(catalog) as writer_session:  # a stdio server of its own, mutations on
                assert set(writer_session.tool_names) == WRITE_TOOLS <= writer_session.server_tools
                await CatalogWriter(writer_session).add_tags([STATUS_TAG_URNS["BLOCK"]], [FRAUD_MODEL_URN])
            model = await reader.get_entity(FRAUD_MODEL_URN)
            assert model is not None and model.tags == [STATUS_TAG_URNS["BLOCK"]]  # the served endpoint, written
            assert not [c for c in session.calls if c.tool in WRITE_TOOLS]

    with serve_catalog(settings) as served:
        state = json.loads(state_path(settings).read_text())
        assert state["mcp_url"] == served.mcp_url and state["pid"] == served.pid
        assert state_path(settings).stat().st_mode & 0o077 == 0  # it holds the token
        asyncio.run(scenario(served))
    assert not state_path(settings).exists()  # removed on exit
    assert not (settings.logs / "mcp-server-datahub.log").exists()  # no stdio reader was started


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _write_state(settings: ProvenanceSettings, **overrides: object) -> Path:
    state = {
        "mcp_url": "http://127.0.0.1:9/mcp",
        "gms_url": "http://127.0.0.1:9",
        "gms_token": "t",
        "pid": _dead_pid(),
        "lite_db": str(settings.lite_db),
        **overrides,
    }
    path = settings.home / STATE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state))
    return path


def test_a_stale_state_file_is_ignored_with_a_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = ProvenanceSettings(provenance_home=tmp_path)
    path = _write_state(settings)
    with caplog.at_level(logging.INFO, logger="tools.catalog.served"):
        assert find_served(settings) is None
    assert any("stale" in r.getMessage() and str(path) in r.getMessage() for r in caplog.records)


def test_a_live_pid_that_does_not_answer_is_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import os

    settings = ProvenanceSettings(provenance_home=tmp_path)
    _write_state(settings, pid=os.getpid())  # alive, but nothing listens on port 9
    with caplog.at_level(logging.INFO, logger="tools.catalog.served"):
        assert find_served(settings) is None
    assert any("did not answer" in r.getMessage() for r in caplog.records)


def test_a_state_file_for_another_lite_file_is_not_reused(tmp_path: Path) -> None:
    import os

    settings = ProvenanceSettings(provenance_home=tmp_path)
    _write_state(settings, pid=os.getpid(), lite_db=str(tmp_path / "other.db"))
    assert find_served(settings) is None


def test_provenance_catalog_url_needs_the_endpoint(tmp_path: Path) -> None:
    settings = ProvenanceSettings(provenance_home=tmp_path, provenance_catalog_url="http://127.0.0.1:1/mcp")
    with pytest.raises(CatalogError, match="DATAHUB_GMS_URL"):
        find_served(settings)
    given = ProvenanceSettings(
        provenance_home=tmp_path,
        provenance_catalog_url="http://127.0.0.1:1/mcp",
        datahub_gms_url="http://127.0.0.1:2",
        datahub_gms_token="t",
    )
    assert find_served(given) == ServedCatalog("http://127.0.0.1:1/mcp", "http://127.0.0.1:2", "t")


def _mcp_http_servers(logs: Path) -> list[int]:
    """The pids of the HTTP MCP servers whose log is in `logs`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # not a process, or one that just ended
            continue
        log = str(logs).encode()
        if b"tools.catalog.mcp_launcher" in cmdline and b"http" in cmdline and any(log in a for a in cmdline):
            found.append(int(proc.name))
    return found


@pytest.mark.slow
def test_the_http_mcp_server_ends_with_an_owner_killed_outright(settings: ProvenanceSettings) -> None:
    """A `catalog serve` (or a warm service) stops its HTTP MCP server on the way out; killed with SIGKILL, it has no
    way out, and the server, which has no stdio pipe to lose, served on for good (one was left by every test run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROVENANCE_CATALOG", "DATAHUB_GMS"))}
    env["PROVENANCE_HOME"] = str(settings.home)
    owner = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "catalog", "serve"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not state_path(settings).exists():
        assert owner.poll() is None and time.monotonic() < deadline, "catalog serve did not start"
        time.sleep(0.2)
    servers = _mcp_http_servers(settings.logs)
    assert len(servers) == 1, servers
    owner.kill()
    owner.wait(timeout=30)
    deadline = time.monotonic() + 15
    while _mcp_http_servers(settings.logs):
        assert time.monotonic() < deadline, f"the HTTP MCP server {servers} outlived its killed owner"
        time.sleep(0.2)
