"""The MCP tool `diff_models`: another agent runs `provenance diff` on the warehouse the server's own
PROVENANCE_WAREHOUSE_URL names (the demo's DuckDB file), gets the same evidence, and writes nothing to DataHub."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN
from seed.diff_warehouse import HEAD_SCHEMA, build_demo_warehouse
from tests.agent.helpers import catalog_write_count
from tests.agent.mcp.test_server import PROVENANCE
from tests.warm_start import cleared


@pytest.mark.slow
def test_another_agent_diffs_a_pull_requests_relations(seeded_home: Path) -> None:
    warehouse = build_demo_warehouse(seeded_home / "demo")
    before = catalog_write_count(seeded_home / "catalog.db")
    env = {k: v for k, v in os.environ.items() if not cleared(k, ("PROVENANCE_", "DATAHUB_"))}
    env |= {"PROVENANCE_HOME": str(seeded_home), "PROVENANCE_WAREHOUSE_URL": f"duckdb:///{warehouse}"}

    async def call() -> tuple[dict[str, object], str]:
        params = StdioServerParameters(command=PROVENANCE, args=["mcp"], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            done = await session.call_tool(
                "diff_models", {"datasets": [POSTGRES_TABLE_URN], "head_schema": HEAD_SCHEMA}
            )
            refused = await session.call_tool("diff_models", {"datasets": [POSTGRES_TABLE_URN]})
            return done.structuredContent or {}, refused.content[0].text  # type: ignore[union-attr]

    evidence, refusal = asyncio.run(call())
    assert evidence["verdict"] == "BLOCK"
    verdicts = {m["urn"]: m["verdict"] for m in evidence["models"]}  # type: ignore[attr-defined]
    assert verdicts[FRAUD_MODEL_URN] == "BLOCK" and len(verdicts) == 3
    assert refusal.startswith("[exit 2]") and "--head-schema" in refusal
    assert (seeded_home / "diffs" / str(evidence["run_id"]) / "diff.json").is_file()
    assert catalog_write_count(seeded_home / "catalog.db") == before
