"""The replay's stand-ins: the recorded chat model and catalog (offline), and the current catalog read-only (live).

None of them writes: the write tools and the catalog writer are refused with `ReplayWriteRefused`, so an approved
publication becomes "skipped in replay".
"""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Iterable
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, messages_from_dict
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from agent.fakes import FakeToolChatModel
from agent.replay.describe import REPLAY_SKIPPED, short
from agent.traces.schema import LLM_ERROR_TYPE
from tools.catalog.calls import CallLog, ToolCallRecord
from tools.catalog.connection import Catalog
from tools.catalog.datahub import CatalogWriter
from tools.catalog.handle import CatalogHandle
from tools.catalog.session import (
    READ_TOOLS,
    WRITE_TOOLS,
    CatalogError,
    CatalogSession,
    CatalogToolError,
)
from tools.settings import ProvenanceSettings


class ReplayWriteRefused(CatalogError):
    """A replay asked to write to the catalog; replays never write."""

    def __init__(self, what: str) -> None:
        super().__init__(f"publication {REPLAY_SKIPPED}: a replay never writes to the catalog ({what} refused)")


class ReplayChatModel(FakeToolChatModel):
    """Answers each call with the next recorded output (`message_to_dict` form); a recorded error is raised."""

    script: list[dict[str, Any]] = Field(default_factory=list)
    position: int = 0

    @classmethod
    def from_outputs(cls, outputs: list[dict[str, Any]]) -> ReplayChatModel:
        return cls(messages=iter([]), script=list(outputs))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        if self.position >= len(self.script):
            self.position += 1
            raise RuntimeError(
                f"the recording has {len(self.script)} LLM output(s) for this turn; the replay asked for one more"
            )
        item = self.script[self.position]
        self.position += 1
        if item.get("type") == LLM_ERROR_TYPE:
            raise RuntimeError(f"recorded model failure: {item.get('data', {}).get('message', '')}")
        message = messages_from_dict([item])[0]
        if not isinstance(message, AIMessage):
            raise RuntimeError(f"recorded LLM output {self.position} is a {message.type} message, not an AI message")
        return ChatResult(generations=[ChatGeneration(message=message)])


def call_key(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool} {json.dumps(arguments, sort_keys=True, default=str)}"


class ReplayCatalogSession(CatalogSession):
    """Stands in for the MCP session: answers from one turn's recorded calls, by tool and arguments, in order."""

    def __init__(self) -> None:
        super().__init__({}, 0.0)
        self.calls = CallLog()
        self._queues: dict[str, deque[ToolCallRecord]] = {}
        self.misses: list[str] = []

    @property
    def tool_names(self) -> list[str]:
        return sorted(READ_TOOLS)

    def load(self, records: Iterable[ToolCallRecord]) -> None:
        """The next turn's recording (what was left of the previous turn is dropped)."""
        self._queues = {}
        self.misses = []
        for record in records:
            self._queues.setdefault(call_key(record.tool, record.arguments), deque()).append(record)

    def unused(self) -> list[ToolCallRecord]:
        return [record for queue in self._queues.values() for record in queue if record.tool not in WRITE_TOOLS]

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        if name in WRITE_TOOLS:
            raise ReplayWriteRefused(f"{name}")
        queue = self._queues.get(call_key(name, arguments))
        if not queue:
            what = f"{name} {short(json.dumps(arguments, sort_keys=True, default=str))}"
            self.misses.append(what)
            raise CatalogError(f"replay: catalog call not in the recording: {what}")
        record = queue.popleft()
        self.calls.record(record.model_copy(update={"duration_ms": 0.0}))
        if not record.ok:
            raise CatalogToolError(name, record.error or "recorded failure")
        return copy.deepcopy(record.result)


class ReplayCatalogHandle(CatalogHandle):
    """The offline catalog of a replay: no endpoint, no MCP server, no writer."""

    def __init__(self, settings: ProvenanceSettings, description: str) -> None:
        super().__init__(settings)
        self.session = ReplayCatalogSession()
        self._recorded = Catalog(self.session, None, f"replay of: {description or 'recorded catalog'}", 0.0)

    async def get(self) -> Catalog:
        self._catalog = self._recorded
        return self._recorded

    async def writer(self) -> CatalogWriter:
        raise ReplayWriteRefused("catalog writer")


class ReadOnlySession(CatalogSession):
    """A real MCP session with the write tools refused (`--live`)."""

    def __init__(self, inner: CatalogSession) -> None:
        super().__init__({name: inner.tool(name) for name in inner.tool_names}, inner.startup_seconds)
        self.inner = inner
        self.calls = inner.calls

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        if name in WRITE_TOOLS:
            raise ReplayWriteRefused(name)
        return await self.inner.call(name, arguments)


class ReadOnlyCatalogHandle(CatalogHandle):
    """The current catalog, read-only: the live replay's catalog."""

    async def get(self) -> Catalog:
        catalog = await super().get()
        if not isinstance(catalog.session, ReadOnlySession):
            catalog.session = ReadOnlySession(catalog.session)
        return catalog

    async def writer(self) -> CatalogWriter:
        raise ReplayWriteRefused("catalog writer")
