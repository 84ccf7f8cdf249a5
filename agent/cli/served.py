"""Commands a warm service runs for a thin client (agent/cli/forward.py), behind the service's
`POST /provenance/command` (agent/service.py): `ask`, `resume`, `check`, `scan` and
`bind --check` answer in the time their work takes, without starting Python's heavy half again.

The service runs the client's own command line through the CLI's `_run`, in the client's working directory, and
sends back what it printed and its exit code: the same parser, checks, handlers and error-to-exit-code mapping as a
local run, so the two cannot drift apart. What a command prints is captured by redirecting sys.stdout and sys.stderr,
which are the process's, so the service runs one command at a time; a client that finds it busy runs its command
itself (it is never slower than without a service). A command that would ask the person at the terminal stops there
and hands the question over (agent/cli/terminal.py): the client asks and sends the answer as a `resume`.

Not forwarded, because they are the client's own business: a chat model key the service does not share (the digest
of GOOGLE_API_KEY / GEMINI_API_KEY is compared; the PROVENANCE_ settings are in the service's stamp already), and
commands reading stdin or prompting otherwise (agent/cli/forward.py decides).
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import logging
import os
import threading
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent.chat_keys import chat_keys_digest
from agent.cli.terminal import ClientTerminal, serve_for
from agent.service import NotServedHere
from tools.json_http import Activity

log = logging.getLogger(__name__)


class CommandRequest(BaseModel):
    """A client's command line and what the service must know about the client to run it as the client would."""

    model_config = ConfigDict(extra="forbid")
    argv: list[str]
    cwd: str
    terminal: bool = False
    """The client's stdin is a terminal: where the command would ask, it stops and the client asks."""
    decided_on_terminal: bool = False
    """A `resume` carrying the answer the client's user typed (recorded as tty:, as a local run records it)."""
    shown: list[str] = []
    chat_keys: str
    """`chat_keys_digest()` in the client's environment."""


class CommandRunner:
    """Runs one client command at a time in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def run_json(self, body: bytes) -> dict[str, Any]:
        """The service's entry: the request as the client sent it (a bad one raises pydantic's ValidationError)."""
        return self.run(CommandRequest.model_validate_json(body))

    def run(self, request: CommandRequest) -> dict[str, Any]:
        if request.chat_keys != chat_keys_digest():
            raise NotServedHere("the client's chat model keys are not the service's")
        if not self._lock.acquire(blocking=False):
            raise NotServedHere("the service is running another command")
        try:
            return self._run(request)
        finally:
            self._lock.release()
            Activity.touch()  # a long command is activity until it ends, not only when it arrived

    def _run(self, request: CommandRequest) -> dict[str, Any]:
        from agent.cli.app import _run  # the CLI's own path: parser, checks, handler, exit codes

        out, err = io.StringIO(), io.StringIO()
        verbose = any(arg in ("-v", "--verbose") for arg in request.argv)
        handler = logging.StreamHandler(err)
        shape = "%(asctime)s %(levelname)s %(name)s: %(message)s" if verbose else "%(levelname)s %(name)s: %(message)s"
        handler.setFormatter(logging.Formatter(shape))  # as the CLI's own (agent/cli/app.py)
        handler.setLevel(logging.DEBUG if verbose else logging.WARNING)
        root = logging.getLogger()
        level = root.level
        root.addHandler(handler)
        root.setLevel(min(level, handler.level))
        here = os.getcwd()

        client = ClientTerminal(request.terminal, request.decided_on_terminal, frozenset(request.shown))

        def command() -> int:
            serve_for(client)
            return _run(request.argv)

        try:
            os.chdir(request.cwd)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = contextvars.copy_context().run(command)
        finally:
            os.chdir(here)
            root.removeHandler(handler)
            root.setLevel(level)
        ask = None
        if client.question is not None:
            ask = {"question": client.question, "resume": client.resume, "shown": sorted(client.shown_with_question)}
        log.info("served `provenance %s` for a client: exit %s", " ".join(request.argv[:1]), code)
        return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(), "ask": ask}
