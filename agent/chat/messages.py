"""What the chat says outside a run's card: the starters, plain text in Markdown, a turn's answer."""

from __future__ import annotations

import re

from agent.state import AgentState

DEMO_QUESTION = "What happens if payments.transactions.amount is sent in cents instead of dollars?"
STARTERS: tuple[tuple[str, str], ...] = (
    ("Dollars → cents: what breaks?", DEMO_QUESTION),
    ("What depends on this field?", "What depends on payments.transactions.amount?"),
    ("Who owns the transactions table?", "Who owns payments.public.transactions?"),
    ("Latest verdict for fraud_detector", "What is the latest verdict for fraud_detector?"),
)
"""(label, message) pairs offered on an empty chat."""

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|:~$])")


def plain(text: str) -> str:
    """Plain text shown verbatim in Markdown: punctuation escaped (the chat renders `:name` as a directive, so
    URNs would lose their parts), line breaks and indentation kept."""
    lines = [_MARKDOWN_SPECIAL.sub(r"\\\1", line) for line in text.strip("\n").splitlines()]
    return "  \n".join("\u00a0" * (len(line) - len(line.lstrip(" "))) + line.lstrip(" ") for line in lines)


_ITEM = re.compile(r"^\s*- (.*)$")
_CODE = re.compile(r"`([^`\n]+)`")


def _inline(text: str) -> str:
    """One line of our own text: verbatim, but `code` spans shown as code (a command, a file)."""
    body = text.lstrip(" ")
    shown, last = ["\u00a0" * (len(text) - len(body))], 0  # indentation kept, as `plain` keeps it
    for match in _CODE.finditer(body):
        shown += [_MARKDOWN_SPECIAL.sub(r"\\\1", body[last : match.start()]), f"`{match.group(1)}`"]
        last = match.end()
    return "".join([*shown, _MARKDOWN_SPECIAL.sub(r"\\\1", body[last:])])


def text_markdown(text: str) -> str:
    """A text the agent wrote for a terminal, as the chat shows it: its "  - " lines a real list, `code` as code,
    every other line as written (its breaks kept: the texts break only at the end of a sentence or a lead-in)."""
    blocks: list[list[str]] = []
    for line in text.strip("\n").splitlines():
        item = _ITEM.match(line)
        kind = "item" if item else "line"
        shown = f"- {_inline(item.group(1))}" if item else _inline(line)
        if blocks and blocks[-1][0] == kind:
            blocks[-1].append(shown)
        else:
            blocks.append([kind, shown])
    return "\n\n".join("\n".join(block[1:]) if block[0] == "item" else "  \n".join(block[1:]) for block in blocks)


def answer_markdown(state: AgentState) -> str:
    """A finished turn's answer; an unreachable catalog is said plainly before the agent's own words."""
    answer = text_markdown(state.answer or "I have no answer for that.")
    if any(f.service == "catalog" for f in state.failures):
        return f"**The DataHub catalog could not be reached.**\n\n{answer}"
    return answer


def planned_experiment_markdown(sentence: str) -> str:
    """`Planned experiment: …` (agent/plan_sentence.py) with its label in bold, the rest verbatim."""
    label, sep, rest = sentence.partition(": ")
    return f"**{plain(label)}:** {plain(rest)}" if sep else plain(sentence)


def catalog_error_markdown(error: Exception) -> str:
    return f"**The DataHub catalog could not be reached.** {plain(str(error))}"
