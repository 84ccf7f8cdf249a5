"""The chat's /replay command."""

from __future__ import annotations

from pathlib import Path

from agent.chat.replay import replay_argument, replay_markdown


def test_replay_command_parsing() -> None:
    assert replay_argument("/replay") == ""
    assert replay_argument("  /replay abc-123 ") == "abc-123"
    assert replay_argument("/replaying") is None
    assert replay_argument("what depends on amount?") is None


def test_replay_markdown_lists_and_rejects_unknown_traces(tmp_path: Path) -> None:
    import asyncio

    assert asyncio.run(replay_markdown("", tmp_path)) == "No saved conversations yet."
    answer = asyncio.run(replay_markdown("no-such-trace", tmp_path))
    assert answer.startswith("Cannot replay")
