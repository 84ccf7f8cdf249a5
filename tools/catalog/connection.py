"""Open the catalog: the embedded Lite-backed endpoint (default) or a real DataHub, always through MCP."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from tools.catalog.session import CatalogError, CatalogSession, McpServerSpec, mcp_session
from tools.embedded.server import RunningCatalog, start_embedded_catalog
from tools.settings import ProvenanceSettings


@dataclass
class Catalog:
    session: CatalogSession
    embedded: RunningCatalog | None
    description: str
    startup_seconds: float


@asynccontextmanager
async def open_catalog(settings: ProvenanceSettings) -> AsyncIterator[Catalog]:
    started = time.perf_counter()
    embedded: RunningCatalog | None = None
    if settings.provenance_catalog == "datahub":
        if not settings.datahub_gms_url:
            raise CatalogError("PROVENANCE_CATALOG=datahub needs DATAHUB_GMS_URL (and usually DATAHUB_GMS_TOKEN)")
        url, token = settings.datahub_gms_url, settings.datahub_gms_token or ""
        description = f"DataHub at {url}"
    else:
        embedded = start_embedded_catalog(settings.lite_db)
        url, token = embedded.url, embedded.token
        description = f"embedded DataHub Lite catalog {settings.lite_db}"
    spec = McpServerSpec(
        gms_url=url,
        gms_token=token,
        log_file=settings.logs / "mcp-server-datahub.log",
        home=settings.home / "mcp-home",
        fail_fast=embedded is not None,
    )
    try:
        async with mcp_session(spec) as session:
            yield Catalog(session, embedded, description, time.perf_counter() - started)
    finally:
        if embedded is not None:
            embedded.stop()
