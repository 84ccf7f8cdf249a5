"""The fixed texts the chat shows keep their line breaks (agent/chat/messages.py `plain`), so a break must end a
sentence, an item or a lead-in: prose wrapped in the source broke mid-sentence in the chat."""

from __future__ import annotations

from agent.capabilities import CAPABILITIES
from agent.chat.messages import plain


def test_every_line_of_the_capabilities_ends_what_it_says() -> None:
    for line in CAPABILITIES.splitlines():
        assert line.rstrip().endswith((".", ":", "?", '"')), line


def test_the_chat_shows_the_list_of_changes_on_one_line() -> None:
    shown = plain(CAPABILITIES).split("  \n")
    assert any("new categories, rounding, clipping" in line for line in shown), shown
