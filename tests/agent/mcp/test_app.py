"""The MCP server as Provenance serves it (agent/mcp/app.py), in process: its own version, tool descriptions
without docstring indentation, and arguments that do not fit a tool refused as `[exit 2] …` naming them."""

from __future__ import annotations

import asyncio

import pytest
from mcp.server.fastmcp.exceptions import ToolError
from mcp.shared.memory import create_connected_server_and_client_session

from agent.mcp.app import provenance_version
from agent.mcp.server import build_server
from tools.settings import ProvenanceSettings


def test_the_server_reports_provenances_version_not_the_sdks(tmp_path: object) -> None:
    server = build_server(ProvenanceSettings(provenance_home=str(tmp_path)))
    options = server._mcp_server.create_initialization_options()
    assert options.server_name == "provenance" and options.server_version == provenance_version() != "0+unknown"


def test_tool_descriptions_carry_no_docstring_indentation(tmp_path: object) -> None:
    tools = asyncio.run(build_server(ProvenanceSettings(provenance_home=str(tmp_path))).list_tools())
    assert tools and all(t.description and "\n    " not in t.description for t in tools)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"op": "scale"}, "[exit 2] assess_change: params: field required; "),
        ({"op": "scale", "params": {}, "fraction": "most"}, "fraction: input should be a valid number"),
    ],
)
def test_arguments_that_do_not_fit_are_bad_input_with_no_url(tmp_path: object, arguments: dict, said: str) -> None:  # type: ignore[type-arg]
    server = build_server(ProvenanceSettings(provenance_home=str(tmp_path)))
    with pytest.raises(ToolError) as refused:
        asyncio.run(server.call_tool("assess_change", arguments))
    message = str(refused.value)
    assert message.startswith("[exit 2] assess_change: ") and said in message and "pydantic.dev" not in message


def test_a_bad_change_file_is_named_as_the_text_sent_not_a_server_path(tmp_path: object) -> None:
    server = build_server(ProvenanceSettings(provenance_home=str(tmp_path)))

    async def go() -> str:
        async with create_connected_server_and_client_session(server._mcp_server) as client:
            result = await client.call_tool("check_changes", {"changes_yaml": "version: 1\nchanges: [1, 2"})
            assert result.isError
            return str(result.content[0].text)  # type: ignore[union-attr]

    message = asyncio.run(go())
    assert message.startswith("[exit 2]") and "changes_yaml" in message and "provenance-mcp-" not in message, message
