"""The chat's `/replay` command: the recent conversations, or the offline replay of one."""

from __future__ import annotations

from pathlib import Path

from agent.chat.messages import plain

REPLAY_COMMAND = "/replay"


def replay_argument(text: str) -> str | None:
    """`/replay` → "" (list traces), `/replay <trace id or path>` → that reference, anything else → None."""
    stripped = text.strip()
    if stripped != REPLAY_COMMAND and not stripped.startswith(REPLAY_COMMAND + " "):
        return None
    return stripped[len(REPLAY_COMMAND) :].strip()


async def replay_markdown(reference: str, home: Path) -> str:
    """The chat's answer to `/replay`: a list of past traces, or the replay comparison of one."""
    from agent.replay.run import areplay_trace
    from agent.traces.schema import TraceError
    from agent.traces.store import list_traces
    from tools.settings import ProvenanceSettings

    if not reference:
        listings = list_traces(home)[-10:]
        if not listings:
            return "No saved conversations yet."
        lines = ["Recent conversations — replay one with `/replay <trace id>`:"]
        for listing in reversed(listings):
            if listing.trace is None:
                lines.append(f"- `{listing.path.stem}`: unreadable ({listing.error})")
                continue
            questions = [t.input.question for t in listing.trace.turns if t.input.question]
            lines.append(f"- `{listing.trace.trace_id}` — {plain(questions[0] if questions else '(no question)')}")
        return "\n".join(lines)
    try:
        report = await areplay_trace(reference, ProvenanceSettings(provenance_home=home))
    except TraceError as exc:
        return f"Cannot replay `{plain(reference)}`: {plain(str(exc))}"
    verdict = "reproduced" if report.reproduced else "NOT reproduced"
    return f"**Replay {verdict}** (offline, nothing written)\n\n```\n{report.render()}\n```"
