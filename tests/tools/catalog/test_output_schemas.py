"""tools/catalog/output_schemas.py: every result still validated, each schema checked once, the library's errors."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest
from jsonschema import validators
from mcp import ClientSession
from mcp.types import CallToolResult, TextContent

from tools.catalog.output_schemas import validate_outputs_once

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/entity"}}},
    "required": ["result"],
    "$defs": {"entity": {"type": "object", "properties": {"urn": {"type": "string"}}, "required": ["urn"]}},
}


def session(schemas: dict[str, Any]) -> ClientSession:
    send, receive = anyio.create_memory_object_stream[Any](1)
    client = ClientSession(receive, send)  # never started: only its validation is exercised
    client._tool_output_schemas = dict(schemas)
    return client


def result(content: dict[str, Any] | None) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="{}")], structuredContent=content)


def library_error(name: str, content: dict[str, Any] | None, schemas: dict[str, Any]) -> str:
    with pytest.raises(RuntimeError) as raised:
        asyncio.run(session(schemas)._validate_tool_result(name, result(content)))
    return str(raised.value)


def test_valid_results_pass_and_the_schema_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    checks: list[object] = []
    cls = validators.validator_for(SCHEMA)
    original = cls.check_schema
    monkeypatch.setattr(cls, "check_schema", classmethod(lambda c, s, **kw: (checks.append(s), original(s, **kw))))
    client = session({"search": SCHEMA})
    validate_outputs_once(client)

    async def three_calls() -> None:
        for urn in ("a", "b", "c"):
            await client._validate_tool_result("search", result({"result": [{"urn": urn}]}))

    asyncio.run(three_calls())
    assert len(checks) == 1


@pytest.mark.parametrize(
    "content",
    [{"result": [{"name": "no urn"}]}, {"result": "not a list"}, {}],
    ids=["nested-ref", "wrong-type", "missing-key"],
)
def test_an_invalid_result_fails_with_the_library_error(content: dict[str, Any]) -> None:
    client = session({"search": SCHEMA})
    validate_outputs_once(client)
    with pytest.raises(RuntimeError) as raised:
        asyncio.run(client._validate_tool_result("search", result(content)))
    assert str(raised.value) == library_error("search", content, {"search": SCHEMA})
    assert str(raised.value).startswith("Invalid structured content returned by tool search:")


def test_missing_structured_content_fails() -> None:
    client = session({"search": SCHEMA})
    validate_outputs_once(client)
    with pytest.raises(RuntimeError, match="has an output schema but did not return structured content"):
        asyncio.run(client._validate_tool_result("search", result(None)))


def test_a_refreshed_schema_replaces_the_validator() -> None:
    client = session({"search": SCHEMA})
    validate_outputs_once(client)
    asyncio.run(client._validate_tool_result("search", result({"result": []})))
    client._tool_output_schemas["search"] = {"type": "object", "required": ["total"]}
    with pytest.raises(RuntimeError, match="'total' is a required property"):
        asyncio.run(client._validate_tool_result("search", result({"result": []})))


def test_an_invalid_schema_is_reported_as_the_library_does() -> None:
    broken = {"type": "no-such-type"}
    client = session({"search": broken})
    validate_outputs_once(client)
    with pytest.raises(RuntimeError, match="Invalid schema for tool search"):
        asyncio.run(client._validate_tool_result("search", result({"result": []})))


def test_an_unknown_tool_refreshes_the_listing_first(monkeypatch: pytest.MonkeyPatch) -> None:
    client = session({})
    listed: list[bool] = []

    async def list_tools() -> None:
        listed.append(True)
        client._tool_output_schemas["late"] = {"type": "object", "required": ["x"]}

    monkeypatch.setattr(client, "list_tools", list_tools)
    validate_outputs_once(client)
    with pytest.raises(RuntimeError, match="'x' is a required property"):
        asyncio.run(client._validate_tool_result("late", result({})))
    assert listed == [True]


def test_a_tool_without_schema_takes_the_library_path() -> None:
    client = session({"free": None})
    validate_outputs_once(client)
    asyncio.run(client._validate_tool_result("free", result(None)))  # nothing to validate against: accepted
