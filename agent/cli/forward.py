"""The thin client: `ask`, `resume`, `check`, `scan` and `bind --check` sent to this home's warm service when one runs
(agent/cli/served.py), so they answer in the time their work takes. Imports nothing heavy.

The service runs the same command line in the same working directory and sends back what it printed and its exit
code. Where the command would ask the person at this terminal (an approval), the service stops; this process asks
and sends the answer as `resume THREAD --approve|--reject`, which the evidence records as typed at a terminal.
The command runs here instead when no service runs, when it is busy with another command, when this environment's
chat model keys are not the service's, or when the command reads stdin or would prompt otherwise."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from agent.chat_keys import chat_keys_digest
from agent.cli.remote import ServiceUnavailable, command_remotely, find_service
from agent.cli.terminal import client_terminal
from tools.errors import EXIT_FAILURE
from tools.settings import ProvenanceSettings

FORWARDED = frozenset({"ask", "resume", "check", "scan", "bind"})
log = logging.getLogger(__name__)


def forwardable(args: argparse.Namespace, argv: Sequence[str]) -> bool:
    """The command can run in the service exactly as it would here."""
    if args.command not in FORWARDED or client_terminal() is not None or "-" in argv:  # "-": a file read from stdin
        return False
    if args.command == "bind":
        return bool(args.check)  # binding asks for a confirmation of what it writes: here
    if args.command == "scan":
        return not args.publish or bool(args.yes)  # publishing a scan asks: here
    return True


def forward(settings: ProvenanceSettings, args: argparse.Namespace, argv: Sequence[str]) -> int | None:
    """The command's exit code after the service ran it, or None: run it here."""
    if not forwardable(args, argv):
        return None
    service = find_service(settings)
    if service is None:
        return None
    verbose = ["-v"] if args.verbose else []  # carried to the answer's `resume`
    request: dict[str, Any] = {
        "argv": list(argv),
        "cwd": os.getcwd(),
        "terminal": sys.stdin.isatty(),
        "chat_keys": chat_keys_digest(),
    }
    try:
        reply = command_remotely(service, request)
    except ServiceUnavailable as exc:
        log.info("%s; running `provenance %s` in this process", exc, args.command)
        return None
    log.info("`provenance %s` ran in the warm service (pid %s)", args.command, service.pid)
    while True:
        _print(reply)
        ask = reply.get("ask")
        if ask is None:
            return int(reply["code"])
        answer = input(ask["question"]).strip().lower()
        decision = "--approve" if answer in ("y", "yes") else "--reject"
        resume = [*verbose, *ask["resume"], decision]
        request = {**request, "argv": resume, "decided_on_terminal": True, "shown": ask["shown"]}
        try:
            reply = command_remotely(service, request)
        except ServiceUnavailable as exc:  # the question was answered; the decision is not lost: it can be given again
            print(f"error: {exc}; the approval is still pending: run `provenance {' '.join(resume)}`", file=sys.stderr)
            return EXIT_FAILURE


def _print(reply: dict[str, Any]) -> None:
    sys.stdout.write(reply["stdout"])
    sys.stdout.flush()
    sys.stderr.write(reply["stderr"])
    sys.stderr.flush()
