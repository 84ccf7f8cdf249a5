"""Who is at the terminal: this process's own stdin, or — for a command the warm service runs on a client's behalf
(agent/cli/served.py) — the client's. A served command cannot read the client's keyboard, so where it would ask, it
hands the question over (`ClientTerminal.hand_over`) and ends as an unanswered question ends off a terminal; the
client asks its user and sends the answer as a second command (agent/cli/forward.py). Both ends share these few
functions, so the questions and the approvals recorded are the ones a local run has. Imports nothing heavy."""

from __future__ import annotations

import sys
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class ClientTerminal:
    """What the client said about its terminal, and the question a served command hands back to it."""

    terminal: bool
    decided_on_terminal: bool = False
    """The command is a `resume` carrying the answer the client's user typed (recorded as tty:, as a local run)."""
    shown: frozenset[str] = frozenset()
    """Lines the client printed with its question: the answer that follows does not repeat them."""
    question: str | None = None
    resume: list[str] = field(default_factory=list)
    """The command that carries the answer on (`--approve` or `--reject` is appended)."""
    shown_with_question: frozenset[str] = frozenset()

    def hand_over(self, question: str, resume: list[str], shown: frozenset[str]) -> None:
        self.question, self.resume, self.shown_with_question = question, resume, shown


_CLIENT: ContextVar[ClientTerminal | None] = ContextVar("provenance_client_terminal", default=None)


def client_terminal() -> ClientTerminal | None:
    """The client a served command runs for; None in a command run by its own process."""
    return _CLIENT.get()


def serve_for(client: ClientTerminal) -> None:
    """Set, in the context the served command runs in, the client it runs for."""
    _CLIENT.set(client)


def on_terminal() -> bool:
    """True when a person can be asked: the client's terminal for a served command, else this process's stdin."""
    client = _CLIENT.get()
    return sys.stdin.isatty() if client is None else client.terminal


def decided_on_terminal() -> bool:
    client = _CLIENT.get()
    return client is not None and client.decided_on_terminal


def shown_lines() -> frozenset[str]:
    client = _CLIENT.get()
    return frozenset() if client is None else client.shown
