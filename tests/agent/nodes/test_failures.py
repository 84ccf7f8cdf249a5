"""`captured`: a graph node's failure is recorded with its stage and the kind tools/errors.py gives its error."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.nodes.failures import captured
from agent.state import AgentState
from tools.catalog.resolve import CatalogInputError
from tools.catalog.session import CatalogToolError


def failing(exc: Exception) -> Any:
    @captured("discover")
    async def node(state: AgentState) -> dict[str, Any]:
        raise exc

    return node


def recorded(exc: Exception) -> tuple[str, str, str | None]:
    update = asyncio.run(failing(exc)(AgentState()))
    (failure,) = update["failures"]
    assert failure.stage == "discover"
    return failure.kind, failure.message, failure.service


def test_a_bad_request_is_the_answer_and_no_run() -> None:
    assert recorded(CatalogInputError("no dataset named 'x'; closest: y")) == (
        "input",
        "no dataset named 'x'; closest: y",
        None,
    )


def test_a_failed_service_is_named() -> None:
    kind, message, service = recorded(CatalogToolError("search", "HTTP 503"))
    assert (kind, service) == ("error", "catalog")
    assert message == "CatalogToolError: DataHub tool search failed: HTTP 503"


def test_a_bug_of_ours_is_an_error_with_no_service() -> None:
    assert recorded(KeyError("model_urn")) == ("error", "KeyError: 'model_urn'", None)
