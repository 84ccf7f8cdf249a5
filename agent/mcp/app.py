"""FastMCP as Provenance serves it: its own name and version, tool descriptions as written (docstrings without their
indentation), and every tool error opening with its exit code (`[exit 2] …`, as the CLI says it): arguments that do
not fit a tool too, not as the SDK's raw validation error with a URL."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ContentBlock, Icon, ToolAnnotations
from pydantic import ValidationError

from agent.context import AgentContext


def provenance_version() -> str:
    try:
        return version("provenance")
    except PackageNotFoundError:  # a checkout run without installing it
        return "0+unknown"


class ProvenanceMCP(FastMCP[AgentContext]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mcp_server.version = provenance_version()  # the SDK reports its own version otherwise

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        cleaned = description or inspect.cleandoc(fn.__doc__ or "")
        super().add_tool(fn, name, title, cleaned, annotations, icons, meta, structured_output)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Sequence[ContentBlock] | dict[str, Any]:
        try:
            return await super().call_tool(name, arguments)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError) and cause.title.endswith("Arguments"):
                raise ToolError(f"[exit 2] {name}: {arguments_problem(cause)}") from cause
            if isinstance(cause, ToolError):  # ours, "[exit N] …": without the SDK's "Error executing tool" in front
                raise cause from cause.__cause__
            raise


def arguments_problem(error: ValidationError) -> str:
    """What is wrong with a tool's arguments, one clause per argument: "params: required; fraction: a number"."""
    parts = []
    for problem in error.errors(include_url=False):
        where = ".".join(str(p) for p in problem["loc"]) or "arguments"
        got = "" if problem["type"] == "missing" else f" (got {problem.get('input')!r})"
        parts.append(f"{where}: {problem['msg'].lower()}{got}")
    return "; ".join(parts) + "; the tool's description lists its arguments"
