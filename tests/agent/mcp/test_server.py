"""Provenance's own MCP server over stdio, driven by the official MCP client as another agent would: the tools and
their schemas, a lineage answer, an assessment that BLOCKs with its report readable as a resource, the latest
verdict from evidence, a refusal as a tool error — and nothing written to the catalog."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.types import CallToolResult

from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN
from tests.agent.helpers import catalog_write_count
from tests.tools.changes.repo import GitRepo
from tests.warm_start import cleared

pytestmark = pytest.mark.slow
PROVENANCE = str(Path(sys.executable).with_name("provenance"))
TOOLS = [
    "affected_models", "assess_change", "check_changes", "diff_models", "explain_run", "infer_changes",
    "latest_verdict",
]  # fmt: skip
PROGRESS: list[str] = []  # progress notifications heard during the calls
RECORDED: dict[str, Any] = {}  # what explain_run and the evidence resource gave back for the assessment
CHANGES = f"""version: 1
changes:
  - dataset: "{POSTGRES_TABLE_URN}"
    field: amount
    op: scale
    params: {{factor: 100}}
structural:
  - dataset: "{POSTGRES_TABLE_URN}"
    field: account_age_days
    change: dropped
approval: {{by: someone, note: an approval in the file is never used here}}
"""


def server(home: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not cleared(k, ("PROVENANCE_", "DATAHUB_"))}
    return StdioServerParameters(command=PROVENANCE, args=["mcp"], env=env | {"PROVENANCE_HOME": str(home)})


async def session_run(
    home: Path, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[str], list[CallToolResult], list[str]]:
    results: list[CallToolResult] = []
    async with stdio_client(server(home)) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.instructions and "No tool writes to DataHub" in init.instructions
        tools = [t.name for t in (await session.list_tools()).tools]
        for name, args in calls:

            async def heard(progress: float, total: float | None, message: str | None) -> None:
                PROGRESS.append(message or "")

            results.append(await session.call_tool(name, args, progress_callback=heard))
        reports: list[str] = []
        for result in results:
            run_id = (result.structuredContent or {}).get("run_id")
            if run_id and not result.isError:
                read_back = await session.read_resource(f"provenance://runs/{run_id}/report")  # type: ignore[arg-type]
                reports.append(read_back.contents[0].text)  # type: ignore[union-attr]
                if "models" not in (result.structuredContent or {}):
                    continue  # latest_verdict names a run; its plots are read from the assessment
                plot_uri = next(iter(result.structuredContent["models"][0]["plots"].values()))  # type: ignore[index]
                plot = (await session.read_resource(plot_uri)).contents[0]
                assert plot.mimeType == "image/png"
                assert base64.b64decode(plot.blob).startswith(b"\x89PNG")  # type: ignore[union-attr]
                RECORDED["explained"] = await session.call_tool("explain_run", {"run_id": run_id})
                recorded = await session.read_resource(f"provenance://runs/{run_id}/evidence")  # type: ignore[arg-type]
                RECORDED["evidence"] = json.loads(recorded.contents[0].text)  # type: ignore[union-attr]
                escape = await session.call_tool("explain_run", {"run_id": "../" + run_id})
                assert escape.isError and "[exit 2] no run '../" in escape.content[0].text  # type: ignore[union-attr]
                with pytest.raises(McpError, match="is not a plot"):
                    await session.read_resource(f"provenance://runs/{run_id}/plots/evidence.json")  # type: ignore[arg-type]
    return tools, results, reports


def test_another_agent_finds_the_models_assesses_a_change_and_reads_the_evidence(seeded_home: Path) -> None:
    before = catalog_write_count(seeded_home / "catalog.db")
    damaged = seeded_home / "runs" / "99991231T000000Z-damaged"  # sorts after every real run: the "newest"
    damaged.mkdir(parents=True)
    (damaged / "evidence.json").write_text("{not json")
    calls = [
        ("affected_models", {"dataset": POSTGRES_TABLE_URN, "field": "amount"}),
        ("assess_change", {"dataset": POSTGRES_TABLE_URN, "field": "amount", "op": "scale", "params": {"factor": 100}}),
        ("latest_verdict", {"model": "fraud_detector"}),
        ("assess_change", {"dataset": "payments.public.transactions", "field": "amount", "op": "scale",
                           "params": {"factor": 100}}),
        ("assess_change", {"dataset": POSTGRES_TABLE_URN, "field": "amount", "op": "explode", "params": {}}),
        ("latest_verdict", {"model": "merchant_risk_scorer"}),
        ("check_changes", {"changes_yaml": CHANGES}),
        ("check_changes", {"changes_yaml": "version: 1\nchanges:\n  - field: amount\n"}),
        ("affected_models", {"feature": "txn_amount"}),  # an mlFeature by name: the column it reads
        ("affected_models", {"feature": "txn_amount", "dataset": POSTGRES_TABLE_URN}),
    ]  # fmt: skip
    tools, results, reports = asyncio.run(session_run(seeded_home, calls))
    assert sorted(tools) == TOOLS
    affected, assessed, latest, bad_urn, bad_op, never, checked, bad_file, by_feature, both = results
    assert not by_feature.isError, by_feature.content
    assert by_feature.structuredContent["field"] == "txn_amount"  # type: ignore[index]
    assert FRAUD_MODEL_URN in [m["urn"] for m in by_feature.structuredContent["models"]]  # type: ignore[index]
    assert both.isError and "not both" in both.content[0].text  # type: ignore[union-attr]
    models = {m["urn"]: m for m in affected.structuredContent["models"]}  # type: ignore[index]
    assert models[FRAUD_MODEL_URN]["production"] and models[REVIEW_MODEL_URN]["production"]
    assert not any(m["production"] for u, m in models.items() if u not in (FRAUD_MODEL_URN, REVIEW_MODEL_URN))
    assert affected.structuredContent["lineage_complete"] is True  # type: ignore[index]
    run = assessed.structuredContent
    assert run is not None and run["verdict"] == "BLOCK" and run["published"] is False
    assert {m["name"]: m["verdict"] for m in run["models"]} == {
        "fraud_detector": "BLOCK",
        "review_time_estimator": "BLOCK",
    }
    assert Path(run["report_md"]).is_file() and reports and reports[0].startswith("# ")
    explained = RECORDED["explained"]
    assert not explained.isError and explained.structuredContent == run  # the same answer, read back from evidence
    recorded = RECORDED["evidence"]
    assert (recorded["run_id"], recorded["verdict"]) == (run["run_id"], "BLOCK")
    assert recorded["publication"]["status"] == "not_requested"  # assess_change never publishes
    assert "experiment.measure done" in PROGRESS and "write_evidence done" in PROGRESS  # a long call reports progress
    assert latest.structuredContent["run_id"] == run["run_id"] and latest.structuredContent["verdict"] == "BLOCK"  # type: ignore[index]
    assert [u.split(":")[0] for u in latest.structuredContent["unreadable_runs"]] == [damaged.name]  # type: ignore[index]
    assert bad_urn.isError and "[exit 2]" in bad_urn.content[0].text and "URN" in bad_urn.content[0].text  # type: ignore[union-attr]
    assert bad_op.isError and "unknown mutation operator 'explode'" in bad_op.content[0].text  # type: ignore[union-attr]
    unfound = dict(never.structuredContent or {})
    assert [u.split(":")[0] for u in unfound.pop("unreadable_runs")] == [damaged.name]  # said, not skipped silently
    assert unfound == {"model": "merchant_risk_scorer", "found": False, "run_id": None, "created_at": None,
                       "verdict": None, "change_tested": None, "reasons": [], "publication": None}  # fmt: skip
    check = checked.structuredContent
    assert check is not None and (check["verdict"], check["exit_code"], check["published"]) == ("BLOCK", 20, False)
    assert [e["verdict"] for e in check["entries"]] == ["BLOCK", "BLOCK"]  # the scale and the dropped column
    assert bad_file.isError and "[exit 2]" in bad_file.content[0].text and "line" in bad_file.content[0].text  # type: ignore[union-attr]
    assert catalog_write_count(seeded_home / "catalog.db") == before  # no tool writes to DataHub
    assert json.loads(json.dumps(run))  # structured content is plain JSON


BASE_SQL = """{{ config(materialized='table') }}
select transaction_id, amount, merchant_category, account_age_days
from {{ source('payments', 'transactions') }}
"""


def test_an_agent_turns_a_sql_diff_into_changes_and_checks_them(seeded_home: Path, tmp_path: Path) -> None:
    """infer_changes gives what `provenance infer-changes` writes for the same diff, and its YAML goes straight into
    check_changes; a bad ref or share is a tool error with the CLI's exit code."""
    repo = GitRepo.create(tmp_path / "warehouse")
    repo.commit("base", {"models/transactions.sql": BASE_SQL})
    head_sql = BASE_SQL.replace(" amount,", " amount * 100 as amount,").replace(", account_age_days", "")
    repo.commit("amounts in cents", {"models/transactions.sql": head_sql, "models/new.sql": "select 1 as one"})
    before = catalog_write_count(seeded_home / "catalog.db")
    asked = {"base": "main~1", "repo": str(repo.root), "name_prefix": "payments.public"}

    async def go() -> list[CallToolResult]:
        async with stdio_client(server(seeded_home)) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            inferred = await session.call_tool("infer_changes", asked)
            assert not inferred.isError, inferred.content
            yaml_text = (inferred.structuredContent or {})["changes_yaml"]
            checked = await session.call_tool("check_changes", {"changes_yaml": yaml_text})
            unknown = await session.call_tool("infer_changes", asked | {"base": "no-such-branch"})
            share = await session.call_tool("infer_changes", asked | {"null_share": 1.5})
            not_git = await session.call_tool("infer_changes", {"base": "main", "repo": str(tmp_path)})
            not_urn = await session.call_tool("infer_changes", asked | {"datasets": {"transactions": "payments"}})
            return [inferred, checked, unknown, share, not_git, not_urn]

    inferred, checked, unknown, share, not_git, not_urn = asyncio.run(go())
    found = inferred.structuredContent or {}
    cli = subprocess.run(
        [PROVENANCE, "infer-changes", "--repo", str(repo.root), "--base", "main~1", "--name-prefix", "payments.public",
         "--output", "-"], env=server(seeded_home).env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert found["changes_yaml"] == cli.stdout  # the same entries, the same header, as the CLI writes
    assert found["summary"][1:] == cli.stderr.strip().splitlines()[1:]  # the same lines (the first names the output)
    assert [(c["field"], c["op"], c["params"]) for c in found["change_set"]["changes"]] == [
        ("amount", "scale", {"factor": 100.0})
    ]
    assert [(s["field"], s["change"]) for s in found["change_set"]["structural"]] == [("account_age_days", "dropped")]
    assert {f["file"]: f["changed"] for f in found["files"]} == {
        "models/transactions.sql": True,
        "models/new.sql": False,
    }
    assert found["repo"] == str(repo.root.resolve()) and found["unresolved"] == {}
    check = checked.structuredContent or {}
    assert (check["verdict"], check["exit_code"], check["published"]) == ("BLOCK", 20, False)
    assert [e["verdict"] for e in check["entries"]] == ["BLOCK", "BLOCK"]  # amount x100, account_age_days dropped
    assert unknown.isError and "[exit 2]" in unknown.content[0].text  # type: ignore[union-attr]
    assert "unknown git ref 'no-such-branch'" in unknown.content[0].text  # type: ignore[union-attr]
    assert share.isError and "[exit 2] null_share must be in (0, 1]" in share.content[0].text  # type: ignore[union-attr]
    assert not_git.isError and "not inside a git repository" in not_git.content[0].text  # type: ignore[union-attr]
    assert not_urn.isError and "[exit 2] datasets['transactions'] must be a dataset URN" in not_urn.content[0].text  # type: ignore[union-attr]
    assert catalog_write_count(seeded_home / "catalog.db") == before


def test_an_agent_loads_the_tools_through_langchain_mcp_adapters(seeded_home: Path) -> None:
    """As a LangChain/LangGraph agent would: the tools with their schemas, called through the adapter."""
    from langchain_mcp_adapters.client import MultiServerMCPClient

    params = server(seeded_home)
    client = MultiServerMCPClient(
        {"provenance": {"transport": "stdio", "command": params.command, "args": params.args, "env": params.env}}
    )

    async def go() -> tuple[list[str], Any, Any]:
        tools = {t.name: t for t in await client.get_tools()}
        found = await tools["affected_models"].ainvoke({"dataset": POSTGRES_TABLE_URN, "field": "amount"})
        refused = await tools["latest_verdict"].ainvoke({"model": "nobody"})
        return sorted(tools), found, refused

    names, found, refused = asyncio.run(go())
    assert names == TOOLS
    assert FRAUD_MODEL_URN in str(found) and '"found": false' in str(refused).replace("False", "false")
    # each path as `provenance lineage` prints it: platforms, the transform on each edge, ending at the model
    path = ("postgres:payments.public.transactions.amount -> feast:fraud_features.transaction_features.txn_amount "
            "[IDENTITY] -> feature fraud_features.transaction_features.txn_amount -> model fraud_detector")  # fmt: skip
    assert path in str(found), found


def test_the_readmes_client_configuration_starts_the_server(seeded_home: Path, tmp_path: Path) -> None:
    """The configuration block of docs/mcp.md, with this checkout's paths, as a client reads it."""
    readme = (Path(__file__).resolve().parents[3] / "docs" / "mcp.md").read_text()
    block = readme.split("<!-- mcp-config -->\n```json\n", 1)[1].split("```", 1)[0]
    checkout = str(Path(PROVENANCE).parents[2])  # <checkout>/.venv/bin/provenance
    config = json.loads(
        block.replace("/path/to/provenance/.provenance", str(seeded_home)).replace("/path/to/provenance", checkout)
    )
    entry = config["mcpServers"]["provenance"]

    async def go() -> list[str]:
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=os.environ | entry["env"])
        with (tmp_path / "server.err").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return sorted(t.name for t in (await session.list_tools()).tools)

    tools = asyncio.run(go())
    assert "Traceback" not in (tmp_path / "server.err").read_text()  # the server ends cleanly when the client leaves
    assert tools == TOOLS


def test_over_http_with_its_bearer_token_two_clients_get_their_own_runs(seeded_home: Path) -> None:
    import socket
    import time

    import httpx
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    params = server(seeded_home)
    process = subprocess.Popen(
        [PROVENANCE, "mcp", "--http", "--port", str(port), "--token", "s3cret"], env=params.env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                refused = httpx.post(url, json={}, timeout=5)
                break
            except httpx.ConnectError:
                assert process.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.3)
        assert refused.status_code == 401  # no token, no answer

        async def assess(factor: int) -> dict[str, Any]:
            client = httpx.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=httpx.Timeout(30, read=300))
            async with (
                client,
                streamable_http_client(url, http_client=client) as (read, write, _),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                args = {"dataset": POSTGRES_TABLE_URN, "field": "amount", "op": "scale", "params": {"factor": factor}}
                result = await s.call_tool("assess_change", args)
                assert not result.isError, result.content
                return result.structuredContent or {}

        async def both() -> list[dict[str, Any]]:
            return list(await asyncio.gather(assess(100), assess(3)))

        cents, tripled = asyncio.run(both())
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert cents["run_id"] != tripled["run_id"]
    assert "by 100" in cents["change_tested"] and "by 3" in tripled["change_tested"]  # each client its own change
    assert cents["verdict"] == "BLOCK"
