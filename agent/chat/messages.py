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


def answer_markdown(state: AgentState) -> str:
    """A finished turn's answer; an unreachable catalog is said plainly before the agent's own words."""
    answer = plain(state.answer or "I have no answer for that.")
    if any(f.service == "catalog" for f in state.failures):
        return f"**The DataHub catalog could not be reached.**\n\n{answer}"
    return answer


def planned_experiment_markdown(sentence: str) -> str:
    """`Planned experiment: …` (agent/plan_sentence.py) with its label in bold, the rest verbatim."""
    label, sep, rest = sentence.partition(": ")
    return f"**{plain(label)}:** {plain(rest)}" if sep else plain(sentence)


def catalog_error_markdown(error: Exception) -> str:
    return f"**The DataHub catalog could not be reached.** {plain(str(error))}"
