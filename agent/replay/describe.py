"""How a replay words what it compares: shortened texts, values, and a turn's input and outcome."""

from __future__ import annotations

import json
from typing import Any

from agent.traces.schema import TraceTurn

REPLAY_SKIPPED = "skipped in replay"


def short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fmt(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return value
    return short(json.dumps(value, sort_keys=True, default=str), 200)


def turn_label(turn: TraceTurn) -> str:
    if turn.input.kind == "ask":
        return f'ask "{short(turn.input.question or "", 80)}"'
    decision = turn.input.decision
    return f"decide {decision.decision} (by {decision.by})" if decision else "decide"


def turn_state(turn: TraceTurn) -> str:
    if turn.status != "ok" or turn.outcome is None:
        return f"error: {short(turn.error or 'no outcome', 120)}"
    out = turn.outcome
    parts = []
    if out.verdict:
        parts.append(str(out.verdict))
    elif out.route:
        parts.append(f"answered ({out.route.intent})")
    if out.failures:
        parts.append("failed at " + ", ".join(f.stage for f in out.failures))
    if out.pending:
        parts.append("approval requested")
    elif out.publication and turn.input.kind == "decide":
        status = out.publication.status
        parts.append(f"publication {REPLAY_SKIPPED}" if skipped(out.publication.message) else f"publication {status}")
    return ", ".join(parts) or "answered"


def skipped(message: str | None) -> bool:
    return bool(message and REPLAY_SKIPPED in message)
