"""Who made which catalog call: one owner for call accounting.

One catalog session serves every conversation of a process (the chat, `catalog serve`), so neither the session's
total nor a before/after difference of it says what one run cost. Each call is reported to the collectors open in
the calling context — a conversation turn, an assessment, a discovery — and tasks inherit their creator's context,
so a call lands in the collectors of the run that made it and in no other. The session itself keeps a count and
only the most recent calls, so a long-lived process does not hold every result it ever read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

RECENT_CALLS = 200
"""How many calls a session keeps for inspection (tests, logs); counting is unbounded, memory is not."""


class ToolCallRecord(BaseModel):
    tool: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    error: str | None = None
    duration_ms: float


_COLLECTORS: ContextVar[tuple[list[ToolCallRecord], ...]] = ContextVar("provenance_call_collectors", default=())


class CallLog:
    """A session's calls: `len()` counts all of them, iteration and indexing see the last `keep`."""

    def __init__(self, keep: int = RECENT_CALLS) -> None:
        self.total = 0
        self._recent: deque[ToolCallRecord] = deque(maxlen=keep)

    def record(self, call: ToolCallRecord) -> None:
        self.total += 1
        self._recent.append(call)
        for collector in _COLLECTORS.get():
            collector.append(call)

    def __len__(self) -> int:
        return self.total

    def __iter__(self) -> Iterator[ToolCallRecord]:
        return iter(list(self._recent))

    def __getitem__(self, index: int) -> ToolCallRecord:
        return list(self._recent)[index]


@contextmanager
def collect_calls() -> Iterator[list[ToolCallRecord]]:
    """Every catalog call made in this context (and the tasks it starts) while the block runs, in order. Blocks
    nest: a discovery inside a turn reports to both."""
    collector: list[ToolCallRecord] = []
    token = _COLLECTORS.set((*_COLLECTORS.get(), collector))
    try:
        yield collector
    finally:
        _COLLECTORS.reset(token)


def calls_of_this_run() -> list[ToolCallRecord] | None:
    """The calls collected by the outermost collector open here (the turn or assessment running), or None when no
    collector is open, so that a count is never a process total passed off as one run's."""
    open_collectors = _COLLECTORS.get()
    return open_collectors[0] if open_collectors else None
