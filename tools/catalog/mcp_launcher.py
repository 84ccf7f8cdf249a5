"""Runs the pinned mcp-server-datahub with its stderr sent to a log file: `python -m tools.catalog.mcp_launcher LOG`
over stdio, or `... LOG http` as its stateless HTTP entry point (mcp-server-datahub-http; host and port from
FASTMCP_HOST / FASTMCP_PORT, the DataHub token per request).

The server logs at INFO to stderr, and stdio MCP clients inherit stderr, which would flood the user's
terminal. stdout must stay untouched: it carries the MCP protocol. With PROVENANCE_MCP_FORKSERVER set, a warm
fork server (tools/catalog/mcp_forkserver.py) runs the stdio server instead of this process importing it.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    log_path = sys.argv[1]
    http = sys.argv[2:] == ["http"]
    os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log_fd, 2)
    if http:
        os.dup2(log_fd, 1)  # no protocol on stdout over HTTP: the server's own output goes to the log too
        # A stdio server ends when its client's pipe closes; an HTTP one has no pipe. Its owner (a warm service,
        # `catalog serve`) stops it on the way out, but an owner killed outright left it serving for good.
        from tools.runtime.forkserver import die_with

        die_with(os.getppid())
        from mcp_server_datahub.__main__ import http_main

        sys.argv = ["mcp-server-datahub-http"]
        http_main()
        return
    from tools.catalog.mcp_forkserver import launch_request

    code = launch_request(log_fd)  # a warm child of PROVENANCE_MCP_FORKSERVER, when one runs
    if code is not None:
        sys.exit(code)
    from mcp_server_datahub.__main__ import main as server_main

    sys.argv = ["mcp-server-datahub", "--transport", "stdio"]
    server_main()


if __name__ == "__main__":
    main()
