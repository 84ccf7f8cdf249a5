"""A warm start for the DataHub MCP server: a process that has imported its libraries once and forks a server for
each launch (`python -m tools.catalog.mcp_forkserver SOCKET`).

Importing mcp-server-datahub (the DataHub SDK, its metadata classes, FastMCP) costs 2-3 CPU seconds, and every
catalog session starts a server: a process that opens many sessions (the test suite opens hundreds) spends most
of its CPU there. With PROVENANCE_MCP_FORKSERVER naming this server's socket, `tools.catalog.mcp_launcher` hands
its stdin, stdout and log file to the fork server, which forks a child that is the MCP server from then on, and
waits for the child's exit code. The launcher falls back to starting the server itself when the socket does not
answer or the fork server refuses.

The fork server refuses a launch whose environment differs from its own in a variable other than those the
server reads when it starts (`RUNTIME_VARIABLES`): the libraries it imported read some variables at import time
(the REST emitter's retries, telemetry, the log level), so only a launch that would have imported them the same way
may share them. mcp-server-datahub's own modules are imported afresh in each child, after its environment is set,
as a fresh process would; the DataHub SDK's paths under HOME are recomputed there too.

A child dies with its launcher (a pidfd watch), so a killed launcher never leaves a server behind. The fork server
exits when the process that started it does.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import socket
import sys
import threading
from typing import Any

FORKSERVER_ENV = "PROVENANCE_MCP_FORKSERVER"
RUNTIME_VARIABLES = frozenset(
    {
        "DATAHUB_GMS_URL",
        "DATAHUB_GMS_TOKEN",
        "TOOLS_IS_MUTATION_ENABLED",  # read by mcp_server_datahub, imported afresh in the child
        "SAVE_DOCUMENT_TOOL_ENABLED",
        "HOME",  # the SDK's paths under it are recomputed in the child (_rehome)
        FORKSERVER_ENV,
    }
)
MAX_MESSAGE = 1 << 20
log = logging.getLogger(__name__)


def server_environment(base: dict[str, str]) -> dict[str, str]:
    """The environment to start a fork server with, for launches whose environment is `base` (a stdio MCP client's
    default environment plus `McpServerSpec.server_env()`): `base` without the variables read at runtime."""
    return {k: v for k, v in base.items() if k not in RUNTIME_VARIABLES}


def launch_request(log_fd: int) -> int | None:
    """In the launcher: run the server as a child of the fork server; its exit code, or None when there is no
    fork server to use (then the caller starts the server itself)."""
    path = os.environ.get(FORKSERVER_ENV)
    if not path:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(path)
    except OSError:  # not started yet, or gone: a cold start works as well
        conn.close()
        return None
    with conn:
        request = {"env": dict(os.environ), "cwd": os.getcwd(), "launcher": os.getpid()}
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, log_fd])
        reply = json.loads(conn.recv(MAX_MESSAGE) or b"{}")
        if "pid" not in reply:
            os.write(log_fd, f"fork server refused ({reply.get('refused', 'no reply')}); starting cold\n".encode())
            return None
        child = int(reply["pid"])
        signal.signal(signal.SIGTERM, lambda *_: _stop(child))
        for fd in (0, 1):  # the child holds the pipes now
            os.dup2(os.open(os.devnull, os.O_RDWR), fd)
        done = json.loads(conn.recv(MAX_MESSAGE) or b'{"exit": 1}')
        return int(done.get("exit", 1))


def _stop(child: int) -> None:
    try:
        os.kill(child, signal.SIGTERM)
    finally:
        os._exit(143)


def _preload() -> None:
    """Import the server's libraries, then forget the server's own modules so each child imports them afresh."""
    import mcp_server_datahub.__main__  # noqa: F401

    for name in [m for m in sys.modules if m == "mcp_server_datahub" or m.startswith("mcp_server_datahub.")]:
        del sys.modules[name]


def _refusal(base: dict[str, str], env: dict[str, str]) -> str | None:
    differs = sorted(k for k in set(base) | set(env) if k not in RUNTIME_VARIABLES and base.get(k) != env.get(k))
    return f"environment differs in {', '.join(differs)}" if differs else None


def _rehome() -> None:
    """The DataHub SDK computes some paths under HOME when imported; recompute them for this child's HOME."""
    home_dot_datahub = os.path.join(os.path.expanduser("~"), ".datahub")
    config_utils = sys.modules.get("datahub.cli.config_utils")
    if config_utils is not None:
        vars(config_utils)["DATAHUB_CONFIG_PATH"] = os.path.expanduser(config_utils.CONDENSED_DATAHUB_CONFIG_PATH)
        vars(config_utils)["DATAHUB_ROOT_FOLDER"] = home_dot_datahub
    disk_cache = sys.modules.get("datahub.utilities.server_state_disk_cache")
    if disk_cache is not None:
        vars(disk_cache)["_DATAHUB_ROOT"] = home_dot_datahub


def _die_with(launcher: int) -> None:
    pidfd = os.pidfd_open(launcher)

    def watch() -> None:
        select.select([pidfd], [], [])
        os._exit(0)

    threading.Thread(target=watch, name="launcher-watch", daemon=True).start()


def _child(listener: socket.socket, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    code = 1
    try:
        listener.close()
        conn.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in zip((0, 1, 2), fds, strict=True):
            os.dup2(fd, target)
            os.close(fd)
        # New stream objects over the new descriptors: the inherited ones describe the fork server's own files
        # (a log file is seekable, the launcher's pipes are not, and the MCP server wraps sys.stdout's buffer).
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's stream, never closed
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", buffering=1, closefd=False)  # noqa: SIM115
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        _rehome()
        _die_with(int(request["launcher"]))
        from mcp_server_datahub.__main__ import main as server_main

        sys.argv = ["mcp-server-datahub", "--transport", "stdio"]
        try:
            server_main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # the child's own failure: its log (fd 2) gets the traceback, the launcher the code
        import traceback

        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def serve(path: str) -> None:
    _preload()
    base = dict(os.environ)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    # A child's exit wakes the loop at once (its launcher, and the MCP client closing the session, wait for it).
    wakeup, wakeup_writer = socket.socketpair()
    wakeup.setblocking(False)
    wakeup_writer.setblocking(False)
    signal.set_wakeup_fd(wakeup_writer.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    while os.getppid() == parent:  # the process that started us is gone: so are we
        readable, _, _ = select.select([listener, wakeup], [], [], 1.0)
        if wakeup in readable:
            while True:
                try:
                    if not wakeup.recv(4096):
                        break
                except BlockingIOError:
                    break
        if listener in readable:
            conn, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(conn, MAX_MESSAGE, 3)
            request = json.loads(message)
            refused = _refusal(base, request["env"]) if len(fds) == 3 else "expected 3 descriptors"
            if refused:
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
                _child(listener, conn, request, fds)
            for fd in fds:
                os.close(fd)
            conn.send(json.dumps({"pid": pid}).encode())
            children[pid] = conn
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = children.pop(pid)
            try:
                conn.send(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
            except OSError as exc:  # the launcher is gone (killed): nobody to tell
                log.debug("launcher of %s gone: %s", pid, exc)
            conn.close()
    listener.close()


if __name__ == "__main__":
    serve(sys.argv[1])
