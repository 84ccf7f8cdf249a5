"""Starting a fork server for DataHub MCP servers (tools/catalog/mcp_forkserver.py) the way the test session and
its own tests do: with the environment a stdio launch of `McpServerSpec` has, less the variables read at runtime."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mcp.client.stdio import get_default_environment

from tools.catalog.mcp_forkserver import server_environment
from tools.catalog.session import McpServerSpec

REPO = Path(__file__).resolve().parents[1]


def spawn_forkserver(socket_path: Path, log_path: Path) -> subprocess.Popen[bytes]:
    """The fork server, its output in `log_path` (a seekable file: the children must not inherit it)."""
    spec = McpServerSpec(gms_url="", gms_token="", log_file=log_path, home=log_path.parent)
    env = server_environment({**get_default_environment(), **spec.server_env()})
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "tools.catalog.mcp_forkserver", str(socket_path)],
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
