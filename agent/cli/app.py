"""`provenance`: parse the arguments, run the command, turn its errors into exit codes (tools/errors.py).
Logs go to stderr; `--json` output goes to stdout; an internal error's traceback goes to $PROVENANCE_HOME/logs/cli.log.

A command's module (and the graph, the catalog or MLflow behind it) is imported only when that command runs:
`provenance --help` and usage errors load the parser alone (agent/cli/parser.py)."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from agent.cli.parser import build_parser
from agent.cli.precheck import Refused, precheck
from tools.errors import EXIT_FAILURE, ProvenanceError, exit_code

if TYPE_CHECKING:
    from tools.settings import ProvenanceSettings

    Handler = Callable[[ProvenanceSettings, argparse.Namespace], int]

log = logging.getLogger("provenance")


@dataclass(frozen=True)
class LazyCommand:
    """The command `name` of agent/cli/`module`.py, imported when it runs."""

    module: str
    name: str

    def load(self) -> Handler:
        command: Handler = getattr(import_module(f"agent.cli.{self.module}"), self.name)
        return command

    def __call__(self, settings: ProvenanceSettings, args: argparse.Namespace) -> int:
        return self.load()(settings, args)


HANDLERS: dict[str, Handler] = {
    "ask": LazyCommand("conversation", "_cmd_ask"),
    "resume": LazyCommand("conversation", "_cmd_resume"),
    "runs": LazyCommand("runs", "_cmd_runs"),
    "publish": LazyCommand("conversation", "_cmd_publish"),
    "traces": LazyCommand("traces", "_cmd_traces"),
    "replay": LazyCommand("traces", "_cmd_replay"),
    "assess": LazyCommand("assess", "_cmd_assess"),
    "demo": LazyCommand("catalog", "_cmd_demo"),
    "seed": LazyCommand("catalog", "_cmd_seed"),
    "catalog": LazyCommand("catalog", "_cmd_catalog"),
    "lineage": LazyCommand("lineage", "_cmd_lineage"),
    "scan": LazyCommand("scan", "_cmd_scan"),
    "mcp": LazyCommand("mcp_command", "_cmd_mcp"),
    "bind": LazyCommand("bind", "_cmd_bind"),
    "check": LazyCommand("check", "_cmd_check"),
    "service": LazyCommand("service", "_cmd_service"),
    "diff": LazyCommand("diff", "_cmd_diff"),
    "infer-changes": LazyCommand("infer_changes", "_cmd_infer_changes"),
}


# ask and resume check it themselves, after the chat model's settings (a configuration error comes first); diff
# after its own arguments (the warehouse, the head side);
# infer-changes is not here: a diff without SQL changes, or bad input, is answered without a catalog. Opening a
# catalog refuses a missing or empty one the same way (tools/catalog/presence.py).
READS_THE_CATALOG = frozenset({"assess", "lineage", "scan", "mcp"})


QUIET_LIBRARIES = ("aiosqlite", "asyncio", "httpcore", "httpx", "urllib3", "matplotlib", "PIL", "filelock")


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        if args.verbose
        else "%(levelname)s %(name)s: %(message)s",
    )
    for chatty in QUIET_LIBRARIES:  # -v is for Provenance's own steps: a library's every SQL statement drowns them
        logging.getLogger(chatty).setLevel(logging.INFO if args.verbose else logging.WARNING)
    try:
        precheck(args)  # before the command's module (pandas, LangGraph, MCP) is imported
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exit_code(exc)
    from tools.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exit_code(exc)
    if settings.warm_service:  # this home's warm service runs it, when one runs (agent/cli/forward.py)
        from agent.cli.forward import forward

        forwarded = forward(settings, args, list(sys.argv[1:] if argv is None else argv))
        if forwarded is not None:
            return forwarded
    try:
        if args.command in READS_THE_CATALOG:  # before anything is created in a wrong home
            from tools.catalog.presence import require_readable_catalog

            require_readable_catalog(settings)
        code = HANDLERS[args.command](settings, args)
        if code != EXIT_FAILURE:  # after the command, so it is not slower: the next one finds the service warm
            from agent.cli.warm import leave_warm_service

            leave_warm_service(settings, args.command)
        return code
    except ProvenanceError as exc:  # raised on purpose: the message is for the user, the class says the exit code
        print(f"error: {exc}", file=sys.stderr)
        return exit_code(exc)
    except BrokenPipeError:  # stdout's reader went away (`| head`): main() handles it, it is not a disk problem
        raise
    except OSError as exc:  # a full disk while writing evidence keeps nothing half-written: resuming is safe
        print(f"error: {exc}{_disk_advice(exc, args)}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as exc:  # a bug of ours, not bad input: say so, keep the traceback for the report
        if full := _full_database(exc):  # SQLite says "database or disk is full", as an error of its own kind
            print(f"error: {full}{_disk_advice(OSError(errno.ENOSPC, str(full)), args)}", file=sys.stderr)
            return EXIT_FAILURE
        where = _log_internal_error(settings.logs / "cli.log", args.command)
        print(
            f"internal error: {type(exc).__name__}: {exc}. This is a bug in Provenance, not your input; "
            f"the traceback is in {where}",
            file=sys.stderr,
        )
        return EXIT_FAILURE


def _full_database(exc: BaseException) -> BaseException | None:
    """SQLite's "database or disk is full" (a checkpoint or the catalog file on a full disk), however wrapped."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, sqlite3.OperationalError) and "disk is full" in str(seen):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _disk_advice(exc: OSError, args: argparse.Namespace) -> str:
    """What to do after a full disk or a permission error: resume the conversation by its id, or run again."""
    if exc.errno not in (errno.ENOSPC, errno.EACCES):
        return ""
    thread = getattr(args, "thread", None) if args.command in ("ask", "resume") else None
    then = f"`provenance resume {thread}`" if thread else f"run `provenance {args.command}` again"
    return f"; free the space or fix the permissions, then {then} (nothing half-written was kept)"


def _log_internal_error(path: Path, command: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    try:
        log.exception("internal error in `provenance %s`", command)
    finally:
        log.removeHandler(handler)
        handler.close()
    return path


def _stdout_to_devnull() -> None:
    """Point fd 1 at /dev/null so nothing later (the interpreter's final flush) writes to the broken pipe again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # stdout replaced by something without a descriptor
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. When stdout's reader closes early (`provenance assess --json | head -3`), exit quietly:
    no traceback, no "error:" line. The exit code is the command's own when it had already returned (its output
    was still buffered and only the final flush failed: the verdict's 0/10/20/30 stays usable as a CI gate), and
    EXIT_FAILURE (1) when the pipe broke while the command was still printing: its code is then unknown, and 1 is
    never mistaken for a PASS. (Not 141 = 128 + SIGPIPE: the code should say what happened to the command, and the
    evidence is on disk either way.)"""
    if argv is None and Path(sys.argv[0]).name in ("provenance", "__main__.py"):  # a new `provenance` process
        from agent.cli.forkserver import run_forked

        forked = run_forked(list(sys.argv))  # a fork of a warm server, when PROVENANCE_CLI_FORKSERVER names one
        if forked is not None:
            return forked
    code: int | None = None
    try:
        code = _run(argv)
        if not sys.stdout.closed:  # `provenance mcp` on stdio: the MCP SDK closes stdout when the client leaves
            sys.stdout.flush()  # inside the try: buffered output reaches the pipe here, not at interpreter exit
    except SystemExit:  # argparse's --help / usage errors: flush here too, for the same reason
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_to_devnull()
        raise
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_FAILURE if code is None else code
    return code
