"""A warm start for a Python program: a process that has imported the program's slow libraries once and forks a
fresh process for each launch. The DataHub MCP server (tools/catalog/mcp_forkserver.py) and the `provenance`
command line (agent/cli/forkserver.py) are started this way when their fork server's socket is set.

A launcher connects to the server's UNIX socket and sends its environment, working directory and pid as JSON with
the descriptors that become the child's stdin, stdout and stderr. The server checks the request (each kind of
server refuses what its imports would make differ from a fresh process), forks, answers `{"pid": ...}`, and when
the child has exited, `{"exit": code}`. A refused or unanswered launch returns None to the launcher, which then
starts cold: the fork server only ever makes a start faster, never different.

In the child, `serve` returns the request: the program then runs at the top of the stack and exits as any
process does (atexit handlers, thread joins, flushed streams). A child dies with its launcher (a pidfd watch), so a
killed launcher never leaves a child behind. The fork server exits when the process that started it does.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import select
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

MAX_MESSAGE = 1 << 20
log = logging.getLogger(__name__)
_forked_child = False


def in_child() -> bool:
    """Whether this process is a fork server's child (so a launcher in it must not ask for another fork)."""
    return _forked_child


def interpreter() -> dict[str, Any]:
    """What a library sees of the interpreter while it is imported: a launch from another interpreter (another
    virtual environment, `-X importtime`, another module path) is refused."""
    return {
        "executable": sys.executable,
        "prefix": sys.prefix,
        "flags": list(sys.flags),
        "xoptions": sorted(map(str, sys._xoptions)),
        "path": sys.path[1:],  # [0] is the script's folder or the working directory: the launch's own
    }


def launch(path: str, fds: list[int], request: dict[str, Any]) -> tuple[int, int] | str:
    """In the launcher: ask the fork server at `path` for a child with `fds` as its stdin, stdout and stderr.
    Returns (child pid, connection fd) to wait on with `wait_exit`, or why there is none (then start cold)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(path)
    except OSError as exc:  # not started yet, or gone: a cold start works as well
        conn.close()
        return f"no fork server at {path} ({exc.strerror})"
    body = {**request, "env": dict(os.environ), "cwd": os.getcwd(), "launcher": os.getpid(), **interpreter()}
    socket.send_fds(conn, [json.dumps(body).encode()], fds)
    reply = json.loads(conn.recv(MAX_MESSAGE) or b"{}")
    if "pid" not in reply:
        conn.close()
        return f"fork server refused ({reply.get('refused', 'no reply')})"
    return int(reply["pid"]), conn.detach()


def wait_exit(conn_fd: int) -> int:
    """The exit code of a launched child, as `os.waitstatus_to_exitcode` gives it (-N: killed by signal N)."""
    with socket.socket(fileno=conn_fd) as conn:
        done = json.loads(conn.recv(MAX_MESSAGE) or b'{"exit": 1}')
    return int(done.get("exit", 1))


def environment_refusal(base: dict[str, str], env: dict[str, str], may_differ: Callable[[str], bool]) -> str | None:
    """Why a launch with `env` may not share imports made under `base`: the variables that differ, but may not."""
    differs = sorted(k for k in set(base) | set(env) if not may_differ(k) and base.get(k) != env.get(k))
    return f"environment differs in {', '.join(differs)}" if differs else None


def rehome_datahub() -> None:
    """The DataHub SDK computes some paths under HOME when imported; recompute them for this child's HOME."""
    home_dot_datahub = os.path.join(os.path.expanduser("~"), ".datahub")
    config_utils = sys.modules.get("datahub.cli.config_utils")
    if config_utils is not None:
        vars(config_utils)["DATAHUB_CONFIG_PATH"] = os.path.expanduser(config_utils.CONDENSED_DATAHUB_CONFIG_PATH)
        vars(config_utils)["DATAHUB_ROOT_FOLDER"] = home_dot_datahub
    disk_cache = sys.modules.get("datahub.utilities.server_state_disk_cache")
    if disk_cache is not None:
        vars(disk_cache)["_DATAHUB_ROOT"] = home_dot_datahub


def die_with(owner: int) -> None:
    """SIGKILL this process as soon as process `owner` ends (a pidfd: no polling)."""
    pidfd = os.pidfd_open(owner)

    def watch() -> None:
        select.select([pidfd], [], [])
        os.kill(os.getpid(), signal.SIGKILL)  # as if killed with it: no cleanup a cold process would not get

    threading.Thread(target=watch, name="launcher-watch", daemon=True).start()


def _fresh_streams(fds: list[int]) -> None:
    """Streams over the launcher's descriptors, configured as a new interpreter configures its own. The inherited
    ones describe the fork server's files (a log file is seekable, a launcher's pipes are not)."""
    encoding = sys.__stdout__.encoding if sys.__stdout__ is not None else "utf-8"
    unbuffered = bool(getattr(sys.__stdout__, "write_through", False))  # python -u, or PYTHONUNBUFFERED
    was_stdout = {id(s) for s in (sys.stdout, sys.__stdout__) if s is not None}
    was_stderr = {id(s) for s in (sys.stderr, sys.__stderr__) if s is not None}
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    # Each is the process's own stream, open for its whole life: never closed (SIM115).
    stdin = open(0, encoding=encoding, closefd=False)  # noqa: SIM115
    stdout = open(1, "w", encoding=encoding, closefd=False, buffering=1 if os.isatty(1) else -1)  # noqa: SIM115
    stderr = open(2, "w", encoding=encoding, errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115
    if unbuffered:
        stdout.reconfigure(write_through=True)
        stderr.reconfigure(write_through=True)
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    for name, stream in (("__stdin__", stdin), ("__stdout__", stdout), ("__stderr__", stderr)):
        setattr(sys, name, stream)  # the originals, as code that restores them finds them in a new process
    # A library that logged to the server's stderr when imported keeps its handler: point it at the child's.
    for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
        for handler in getattr(logger, "handlers", []):
            if isinstance(handler, logging.StreamHandler) and id(handler.stream) in was_stdout:
                handler.setStream(stdout)
            elif isinstance(handler, logging.StreamHandler) and id(handler.stream) in was_stderr:
                handler.setStream(stderr)


def _become_child(listener: socket.socket, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    global _forked_child
    _forked_child = True
    listener.close()
    conn.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _fresh_streams(fds)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    die_with(int(request["launcher"]))


def serve(path: str, refusal: Callable[[dict[str, Any]], str | None]) -> dict[str, Any] | None:
    """Serve launches until the process that started this one is gone (then None). In each forked child this
    returns the launch's request, with the child's streams, environment and directory set from it."""
    parent = os.getppid()
    mine = interpreter()
    # The imported libraries' objects, set apart from the collector: a child's first full collection would otherwise
    # write to every one of them, and each page written is copied from the server into the child (a forked
    # `provenance runs` cost 1.5 CPU s more than a cold one). Python's gc.freeze() documents this use.
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    # A child's exit wakes the loop at once (its launcher waits for the exit code).
    wakeup, wakeup_writer = socket.socketpair()
    wakeup.setblocking(False)
    wakeup_writer.setblocking(False)
    signal.set_wakeup_fd(wakeup_writer.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    while os.getppid() == parent:  # the process that started us is gone: so are we
        readable, _, _ = select.select([listener, wakeup], [], [], 1.0)
        if wakeup in readable:
            _drain(wakeup)
        if listener in readable:
            conn, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(conn, MAX_MESSAGE, 3)
            request: dict[str, Any] = json.loads(message)
            refused = _refusal(mine, request, fds) or refusal(request)
            if refused:
                print(f"refused a launch from pid {request.get('launcher')}: {refused}", file=sys.stderr, flush=True)
                conn.send(json.dumps({"refused": refused}).encode())
                conn.close()
                for fd in fds:
                    os.close(fd)
                continue
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                wakeup.close()
                wakeup_writer.close()
                _become_child(listener, conn, request, fds)
                return request
            for fd in fds:
                os.close(fd)
            print(f"forked pid {pid} for launcher {request.get('launcher')}", file=sys.stderr, flush=True)
            conn.send(json.dumps({"pid": pid}).encode())
            children[pid] = conn
        _reap(children)
    listener.close()
    return None


def _refusal(mine: dict[str, Any], request: dict[str, Any], fds: list[int]) -> str | None:
    if len(fds) != 3:
        return "expected 3 descriptors"
    differs = [key for key, value in mine.items() if request.get(key) != value]
    return f"interpreter differs in {', '.join(differs)}" if differs else None


def _drain(wakeup: socket.socket) -> None:
    while True:
        try:
            if not wakeup.recv(4096):
                return
        except BlockingIOError:
            return


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = children.pop(pid)
        try:
            conn.send(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
        except OSError as exc:  # the launcher is gone (killed): nobody to tell
            log.debug("launcher of %s gone: %s", pid, exc)
        conn.close()
