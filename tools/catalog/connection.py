"""Open the catalog: the embedded Lite-backed endpoint (default) or a real DataHub, always through MCP.

`open_catalog` is the reader every command and the agent use: its MCP server runs with mutations off. A writer
is opened with `open_writer` from an open catalog, against the same endpoint (the embedded one is reused, never
started twice on one Lite file), by the publish step only.

A catalog kept running by `provenance catalog serve` (or named by PROVENANCE_CATALOG_URL) is read through instead
of starting one: the reader connects to its MCP server over streamable HTTP and spawns nothing (tools/catalog/
served.py); a writer still starts its own stdio server against the served endpoint.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tools.catalog.presence import require_embedded_catalog
from tools.catalog.served import HTTP_LOG, find_served
from tools.catalog.session import (
    CatalogError,
    CatalogSession,
    McpServerSpec,
    WriterSession,
    mcp_http_session,
    mcp_session,
    mcp_writer_session,
)
from tools.settings import ProvenanceSettings

if TYPE_CHECKING:
    from tools.embedded.server import RunningCatalog

WRITER_LOG_SUFFIX = "-writer"


@dataclass
class Catalog:
    session: CatalogSession
    embedded: RunningCatalog | None
    description: str
    startup_seconds: float
    spec: McpServerSpec | None = None
    """The endpoint the reader's MCP server talks to, which a writer reuses; None for a recorded (replay) catalog."""


@asynccontextmanager
async def open_catalog(settings: ProvenanceSettings) -> AsyncIterator[Catalog]:
    started = time.perf_counter()
    served = find_served(settings)
    if served is not None:
        spec = McpServerSpec(
            gms_url=served.gms_url,
            gms_token=served.gms_token,
            log_file=settings.logs / "mcp-server-datahub.log",  # a writer's, derived from it; the reader has none
            home=settings.home / "mcp-home",
            bulk_calls=settings.provenance_catalog_bulk_calls,
            forkserver=settings.forkserver,
        )
        async with mcp_http_session(spec, served.mcp_url, settings.logs / HTTP_LOG) as session:
            yield Catalog(session, None, served.describe(), time.perf_counter() - started, spec)
        return
    embedded: RunningCatalog | None = None
    if settings.provenance_catalog == "datahub":
        if not settings.datahub_gms_url:
            raise CatalogError("PROVENANCE_CATALOG=datahub needs DATAHUB_GMS_URL (and usually DATAHUB_GMS_TOKEN)")
        url, token = settings.datahub_gms_url, settings.datahub_gms_token or ""
        description = f"DataHub at {url}"
    else:
        from tools.embedded.server import start_embedded_catalog  # not needed when a served catalog is reused

        require_embedded_catalog(settings)
        embedded = start_embedded_catalog(settings.lite_db)
        url, token = embedded.url, embedded.token
        description = f"embedded DataHub Lite catalog {settings.lite_db}"
    spec = McpServerSpec(
        gms_url=url,
        gms_token=token,
        log_file=settings.logs / "mcp-server-datahub.log",
        home=settings.home / "mcp-home",
        fail_fast=embedded is not None,
        bulk_calls=settings.provenance_catalog_bulk_calls,
        forkserver=settings.forkserver,
    )
    try:
        async with mcp_session(spec) as session:
            yield Catalog(session, embedded, description, time.perf_counter() - started, spec)
    finally:
        if embedded is not None:
            embedded.stop()


@asynccontextmanager
async def open_writer(catalog: Catalog) -> AsyncIterator[WriterSession]:
    """A writer session (a second MCP server, mutations on) against the endpoint `catalog` reads from.

    For the publish step only, after approval; close it once the publication is written. The caller keeps
    `catalog` open meanwhile: an embedded endpoint lives as long as the catalog that started it.
    """
    if catalog.spec is None:
        raise CatalogError(f"{catalog.description} has no endpoint to write to")
    log = catalog.spec.log_file
    spec = dataclasses.replace(catalog.spec, log_file=log.with_name(f"{log.stem}{WRITER_LOG_SUFFIX}{log.suffix}"))
    async with mcp_writer_session(spec) as session:
        yield session
