"""`provenance mcp`: Provenance's own MCP server on stdio (agent/mcp/server.py), for coding and release agents."""

from __future__ import annotations

import argparse

from agent.cli.exit_codes import EXIT_OK
from tools.settings import ProvenanceSettings


def _cmd_mcp(settings: ProvenanceSettings, _args: argparse.Namespace) -> int:
    from agent.mcp.server import build_server

    build_server(settings).run("stdio")  # stdout is the protocol's: everything else goes to stderr and the logs
    return EXIT_OK
