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

The forking, the launch protocol and the child's set-up are tools/runtime/forkserver.py's, shared with the
command line's fork server.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from tools.runtime import forkserver

FORKSERVER_ENV = "PROVENANCE_MCP_FORKSERVER"
RUNTIME_VARIABLES = frozenset(
    {
        "DATAHUB_GMS_URL",
        "DATAHUB_GMS_TOKEN",
        "TOOLS_IS_MUTATION_ENABLED",  # read by mcp_server_datahub, imported afresh in the child
        "SAVE_DOCUMENT_TOOL_ENABLED",
        "HOME",  # the SDK's paths under it are recomputed in the child (rehome_datahub)
        "PATH",  # where programs are found when they start; the server starts none (the GitHub action prepends one)
        FORKSERVER_ENV,
    }
)


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
    launched = forkserver.launch(path, [0, 1, log_fd], {})
    if isinstance(launched, str):
        if "refused" in launched:
            os.write(log_fd, f"{launched}; starting cold\n".encode())
        return None
    child, conn = launched
    signal.signal(signal.SIGTERM, lambda *_: _stop(child))
    for fd in (0, 1):  # the child holds the pipes now
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    return forkserver.wait_exit(conn)


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
    return forkserver.environment_refusal(base, env, RUNTIME_VARIABLES.__contains__)


def serve(path: str) -> None:
    _preload()
    base = dict(os.environ)
    request: dict[str, Any] | None = forkserver.serve(path, lambda r: _refusal(base, r["env"]))
    if request is None:  # the fork server's own end
        return
    code = 1
    try:
        forkserver.rehome_datahub()
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
    finally:  # at once, as the server always has: its client has closed the session, nothing is left to wait for
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    serve(sys.argv[1])
