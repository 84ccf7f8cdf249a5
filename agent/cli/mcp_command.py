"""`provenance mcp`: Provenance's own MCP server on stdio (agent/mcp/server.py), for coding and release agents."""

from __future__ import annotations

import argparse
import secrets
import socket

from agent.cli.exit_codes import EXIT_OK
from tools.settings import ProvenanceSettings


def _cmd_mcp(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    from agent.mcp.server import build_server

    if not args.http:
        build_server(settings).run("stdio")  # stdout is the protocol's: everything else goes to stderr and the logs
        return EXIT_OK
    token = args.token or secrets.token_urlsafe(24)
    port = args.port or _free_port()
    print(f"Provenance MCP server (streamable HTTP) on 127.0.0.1:{port}", flush=True)
    print(f"  PROVENANCE_MCP_URL=http://127.0.0.1:{port}/mcp\n  PROVENANCE_MCP_TOKEN={token}", flush=True)
    print("  send it as `Authorization: Bearer <token>`. Stop with Ctrl-C.", flush=True)
    build_server(settings, port=port, token=token).run("streamable-http")
    return EXIT_OK


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
