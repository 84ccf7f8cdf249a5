"""What the two LLM test modules (Gemini through its stub, any chat model through an OpenAI-compatible stub) ask
and expect: one question, its field, the route and plan a model should propose."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any, TypeVar

from agent.schemas import ExperimentPlan, FieldContext, Intent, RouteDecision
from tools.json_http import STOP_POLL_SECONDS

QUESTION = "What happens if payments.transactions.amount is sent in cents?"
FIELD = FieldContext(
    dataset_urn="urn:li:dataset:(urn:li:dataPlatform:postgres,payments.transactions,PROD)",
    field="amount",
    field_type="NUMBER",
    native_type="numeric(12,2)",
    description="Transaction amount in US dollars.",
)
ROUTE = RouteDecision(intent=Intent.ASSESS, subject="payments.transactions.amount", change="sent in cents")
PLAN = ExperimentPlan(
    op="scale", params={"factor": 100}, rationale="Cents are dollars times 100.", cited=["sent in cents"]
)
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[None]:
    """A loopback stub server answering on a daemon thread for the block, then shut down and closed."""
    thread = threading.Thread(target=server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
