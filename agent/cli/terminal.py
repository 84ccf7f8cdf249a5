"""Who is at the terminal: this process's own stdin, or — for a command the warm service runs on a client's behalf
(agent/served_commands.py) — the client's. A served command cannot read the client's keyboard, so where it would
ask, it stops with `AskTheClient`; the client asks its user and sends the answer as a second command
(agent/cli/forward.py). Both ends share these few functions, so the questions and the approvals recorded are the
ones a local run has. Imports nothing heavy."""

from __future__ import annotations

import sys
from contextvars import ContextVar

_CLIENT_TERMINAL: ContextVar[bool | None] = ContextVar("provenance_client_terminal", default=None)
_DECIDED_ON_TERMINAL: ContextVar[bool] = ContextVar("provenance_decided_on_terminal", default=False)
_SHOWN: ContextVar[frozenset[str]] = ContextVar("provenance_shown_lines", default=frozenset())


class AskTheClient(Exception):  # noqa: N818 - not an error: the served command's way of handing over a question
    """A served command reached a question for the person at the client's terminal. `resume` is the command that
    carries the answer on (`--approve` or `--reject` is appended), `shown` the lines already printed."""

    def __init__(self, question: str, resume: list[str], shown: frozenset[str] = frozenset()) -> None:
        super().__init__(question)
        self.question, self.resume, self.shown = question, resume, shown


def on_terminal() -> bool:
    """True when a person can be asked: the client's terminal for a served command, else this process's stdin."""
    forwarded = _CLIENT_TERMINAL.get()
    return sys.stdin.isatty() if forwarded is None else forwarded


def served_for_client() -> bool:
    return _CLIENT_TERMINAL.get() is not None


def decided_on_terminal() -> bool:
    """The decision a served `resume` carries was typed at the client's terminal (recorded as `tty:`, not `cli:`)."""
    return _DECIDED_ON_TERMINAL.get()


def shown_lines() -> frozenset[str]:
    """Lines the client printed with its question: the answer that follows does not repeat them."""
    return _SHOWN.get()


def serve_for_client(terminal: bool, decided_on_terminal: bool, shown: frozenset[str]) -> None:
    """Set, in the context the served command runs in, what the client said about its terminal."""
    _CLIENT_TERMINAL.set(terminal)
    _DECIDED_ON_TERMINAL.set(decided_on_terminal)
    _SHOWN.set(shown)
