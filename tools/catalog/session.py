"""MCP sessions to the official mcp-server-datahub: spawned over stdio, or a running one over streamable HTTP.

Least privilege: the process-wide reader session starts the server with its mutation tools off
(`TOOLS_IS_MUTATION_ENABLED=false`) and loads only the read tools, so it cannot write whatever code calls it.
Only the publish step, after a person approved, opens a `WriterSession` (mutations on, only the write tools)
against the same endpoint, and closes it once the publication is written.

`MultiServerMCPClient.get_tools()` would spawn a server per call (~1.4 s each); a session spawns it once, and
`mcp_http_session` spawns none: it reads through a server `provenance catalog serve` keeps running (tools/catalog/
served.py), which must run with mutations off as well.
Every call is recorded (name, arguments, result, duration) for the evidence, the traces and the call count.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp.shared.exceptions import McpError
from mcp.types import CONNECTION_CLOSED

from tools.catalog.calls import CallLog, ToolCallRecord
from tools.catalog.mcp_forkserver import FORKSERVER_ENV
from tools.catalog.output_schemas import validate_outputs_once
from tools.catalog.sdk_tools import SDK_ASPECTS_TOOL, sdk_aspects_tool
from tools.errors import ServiceFailure
from tools.runtime.lanes import BULK_IN_FLIGHT, Lanes

READ_TOOLS = frozenset(
    {"get_entities", "list_schema_fields", "get_lineage", "search", "get_aspect_history", "get_lineage_paths_between"}
)
WRITE_TOOLS = frozenset({"add_tags", "remove_tags", "save_document", "add_structured_properties"})
OPTIONAL_TOOLS = frozenset({"get_lineage_paths_between"})  # not offered by every server version
CALL_TIMEOUT_SECONDS = 120.0


class CatalogError(ServiceFailure):
    """The catalog could not answer; the message says what to do next."""

    service = "catalog"


class CatalogToolError(CatalogError):
    """A DataHub MCP tool returned an error."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"DataHub tool {tool} failed: {message}")
        self.tool = tool
        self.detail = message


@dataclass(frozen=True)
class McpServerSpec:
    gms_url: str
    gms_token: str
    log_file: Path
    home: Path  # HOME for the server: the DataHub SDK writes ~/.datahub files there
    fail_fast: bool = True
    bulk_calls: int = BULK_IN_FLIGHT  # PROVENANCE_CATALOG_BULK_CALLS (tools/runtime/lanes.py)
    forkserver: str | None = None  # PROVENANCE_MCP_FORKSERVER (tools/catalog/mcp_forkserver.py)

    def server_env(self, *, mutations: bool = False) -> dict[str, str]:
        """The server's environment; its mutation tools (add_tags, save_document, ...) exist only with `mutations`."""
        env = {
            "DATAHUB_GMS_URL": self.gms_url,
            "DATAHUB_GMS_TOKEN": self.gms_token,
            "TOOLS_IS_MUTATION_ENABLED": "true" if mutations else "false",
            "SAVE_DOCUMENT_TOOL_ENABLED": "true" if mutations else "false",
            "DATAHUB_TELEMETRY_ENABLED": "false",
            "DATAHUB_REST_EMITTER_DEFAULT_ENDPOINT": "RESTLI",
            "DATAHUB_MCP_DISABLE_DEFAULT_VIEW": "true",
            "LOGURU_LEVEL": "WARNING",
            "HOME": str(self.home),
        }
        if self.fail_fast:
            env["DATAHUB_REST_EMITTER_DEFAULT_RETRY_MAX_TIMES"] = "0"
        if self.forkserver:  # the launcher (tools/catalog/mcp_launcher.py) forks the server from it
            env[FORKSERVER_ENV] = self.forkserver
        return env

    def connection(self, *, mutations: bool = False) -> dict[str, Any]:
        """How to start the server over stdio."""
        return {
            "transport": "stdio",
            "command": sys.executable,
            "args": ["-m", "tools.catalog.mcp_launcher", str(self.log_file)],
            "env": self.server_env(mutations=mutations),
        }

    def http_connection(self, mcp_url: str) -> dict[str, Any]:
        """How to reach a running server over streamable HTTP: mcp-server-datahub-http takes the DataHub token per
        request, as a bearer token."""
        return {
            "transport": "streamable_http",
            "url": mcp_url,
            "headers": {"Authorization": f"Bearer {self.gms_token}"},
        }


class CatalogSession:
    """Calls allowlisted DataHub MCP tools and returns their structured JSON. Opened by `mcp_session`, it is a
    reader: its server runs with mutations off and it offers no write tool."""

    def __init__(
        self,
        tools: dict[str, BaseTool],
        startup_seconds: float,
        *,
        server_tools: frozenset[str] | None = None,
        bulk_calls: int = BULK_IN_FLIGHT,
    ) -> None:
        self._tools = tools
        self.startup_seconds = startup_seconds
        self.server_tools = frozenset(tools) if server_tools is None else server_tools
        """Every tool the MCP server offered, of which `tools` is the allowlisted part."""
        self.calls = CallLog()
        self.lost: str | None = None
        """Set when the MCP server went away (killed, crashed): no later call on this session can succeed."""
        self.call_timeout = CALL_TIMEOUT_SECONDS
        self.lanes = Lanes(bulk_calls)

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    def tool(self, name: str) -> BaseTool:
        return self._tools[name]

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        if name not in self._tools:
            if name in WRITE_TOOLS and not isinstance(self, WriterSession):
                raise CatalogError(
                    f"DataHub MCP tool {name} writes to the catalog and this read-only session does not offer it "
                    "(its MCP server runs with mutations off); only the publish step, after approval, opens a "
                    "writer session"
                )
            raise CatalogError(f"DataHub MCP tool {name} is not available; server offers {self.tool_names}")
        async with self.lanes.slot():  # a bulk call waits here for a slot; the recorded duration is the server's
            return await self._call(name, arguments)

    async def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        started = time.perf_counter()
        try:
            # Bounded: a request sent just as the server process dies may never be answered nor failed.
            message = await asyncio.wait_for(
                self._tools[name].ainvoke(
                    {"type": "tool_call", "id": f"call-{len(self.calls)}", "name": name, "args": arguments}
                ),
                self.call_timeout,
            )
        except TimeoutError as exc:
            self._record(name, arguments, started, error=f"no answer in {self.call_timeout:g} s")
            self.lost = f"{name} got no answer in {self.call_timeout:g} s"
            raise CatalogError(
                f"the DataHub MCP server did not answer {name} within {self.call_timeout:g} s; "
                "check that the catalog endpoint is running (see the log under $PROVENANCE_HOME/logs)"
            ) from exc
        except Exception as exc:
            self._record(name, arguments, started, error=f"{type(exc).__name__}: {exc}")
            if _transport_lost(exc):
                self.lost = f"{type(exc).__name__}: {exc}"
            raise CatalogError(
                f"the DataHub MCP server did not answer {name} ({type(exc).__name__}: {exc}); "
                "check that the catalog endpoint is running (see the log under $PROVENANCE_HOME/logs)"
            ) from exc
        if not isinstance(message, ToolMessage):
            raise CatalogError(f"unexpected reply type {type(message).__name__} from {name}")
        if message.status == "error":
            text = _text(message)
            self._record(name, arguments, started, error=text)
            raise CatalogToolError(name, text)
        structured = (message.artifact or {}).get("structured_content")
        result = structured if structured is not None else json.loads(_text(message))
        if isinstance(result, dict) and set(result) == {"result"}:
            result = result["result"]
        self._record(name, arguments, started, result=result)
        return result

    def _record(
        self, name: str, arguments: dict[str, Any], started: float, *, result: Any = None, error: str | None = None
    ) -> None:
        self.calls.record(
            ToolCallRecord(
                tool=name,
                arguments=arguments,
                ok=error is None,
                result=result,
                error=error,
                duration_ms=(time.perf_counter() - started) * 1e3,
            )
        )


class WriterSession(CatalogSession):
    """A session whose MCP server runs with mutations on, offering only the write tools. Opened by
    `mcp_writer_session` for one publication; the only session a `CatalogWriter` accepts."""


def _transport_lost(exc: BaseException) -> bool:
    if isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream):
        return True
    if isinstance(exc, httpx.TransportError):  # a served (HTTP) MCP server that went away
        return True
    return isinstance(exc, McpError) and exc.error.code == CONNECTION_CLOSED


def _text(message: ToolMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(block.get("text", "") if isinstance(block, dict) else str(block) for block in message.content)


@asynccontextmanager
async def mcp_session(spec: McpServerSpec) -> AsyncIterator[CatalogSession]:
    """The reader: mutations off, the read tools plus the SDK read of mlModelProperties."""
    async with _open_server(spec, mutations=False) as (loaded, started):
        yield _reader(spec, loaded, started)


@asynccontextmanager
async def mcp_http_session(spec: McpServerSpec, mcp_url: str, log_file: Path) -> AsyncIterator[CatalogSession]:
    """The reader through a running server (`provenance catalog serve`) over streamable HTTP, against the endpoint of
    `spec`. Refused when that server offers write tools: a reader's server runs with mutations off."""
    connection = spec.http_connection(mcp_url)
    async with _open_server(spec, mutations=False, connection=connection, log_file=log_file) as (loaded, started):
        writes = sorted(WRITE_TOOLS & set(loaded))
        if writes:
            raise CatalogError(
                f"the DataHub MCP server at {mcp_url} offers the write tools {writes}; the reader needs one started "
                "with TOOLS_IS_MUTATION_ENABLED=false (as `provenance catalog serve` does)"
            )
        yield _reader(spec, loaded, started)


def _reader(spec: McpServerSpec, loaded: dict[str, BaseTool], started: float) -> CatalogSession:
    tools = {name: tool for name, tool in loaded.items() if name in READ_TOOLS}
    _require(spec, READ_TOOLS - OPTIONAL_TOOLS - set(tools), "read")
    tools[SDK_ASPECTS_TOOL] = sdk_aspects_tool(spec.gms_url, spec.gms_token)
    return CatalogSession(
        tools, time.perf_counter() - started, server_tools=frozenset(loaded), bulk_calls=spec.bulk_calls
    )


@asynccontextmanager
async def mcp_writer_session(spec: McpServerSpec) -> AsyncIterator[WriterSession]:
    """The writer: a server of its own with mutations on, of which only the write tools are loaded."""
    async with _open_server(spec, mutations=True) as (loaded, started):
        tools = {name: tool for name, tool in loaded.items() if name in WRITE_TOOLS}
        _require(spec, WRITE_TOOLS - set(tools), "write")
        yield WriterSession(tools, time.perf_counter() - started, server_tools=frozenset(loaded))


def _require(spec: McpServerSpec, missing: set[str] | frozenset[str], kind: str) -> None:
    if missing:
        raise CatalogError(
            f"the DataHub MCP server at {spec.gms_url} does not offer the {kind} tools {sorted(missing)}; it needs "
            "DataHub OSS >= 1.4 for write tools (and TOOLS_IS_MUTATION_ENABLED=true, which Provenance sets for "
            "the publish step's writer session)"
        )


@asynccontextmanager
async def _open_server(
    spec: McpServerSpec, *, mutations: bool, connection: dict[str, Any] | None = None, log_file: Path | None = None
) -> AsyncIterator[tuple[dict[str, BaseTool], float]]:
    """Start the server over stdio (or connect to `connection`) and list its tools; errors before the caller is
    ready name the server's log."""
    log_file = log_file or spec.log_file
    if connection is None:
        spec.log_file.parent.mkdir(parents=True, exist_ok=True)
        spec.home.mkdir(parents=True, exist_ok=True)
        connection = spec.connection(mutations=mutations)
    what = f"reach the DataHub MCP server at {connection['url']}" if "url" in connection else None
    what = what or f"start the DataHub MCP server against {spec.gms_url}"
    client = MultiServerMCPClient({"datahub": connection})  # type: ignore[dict-item]
    started = time.perf_counter()
    ready = False
    try:
        async with client.session("datahub") as session:
            validate_outputs_once(session)
            loaded = await load_mcp_tools(session, server_name="datahub")
            ready = True
            yield {tool.name: tool for tool in loaded}, started
    except BaseException as exc:
        inner = _unwrap(exc)
        if ready or isinstance(inner, CatalogError):
            # anyio task groups wrap the caller's own exception; hand it back as raised
            if inner is not exc:
                raise inner from None
            raise
        raise CatalogError(f"could not {what} ({_first(exc)}); its log is {log_file}: {_tail(log_file)}") from exc


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _first(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _tail(path: Path, lines: int = 3) -> str:
    if not path.exists():
        return "(no log written)"
    return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
