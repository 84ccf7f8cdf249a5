"""The variables that say how a process starts, not what it does: the fork servers of the MCP server and of the
command line (tools/catalog/mcp_forkserver.py, agent/cli/forkserver.py). A test that clears Provenance's settings
to be hermetic keeps them, so its processes still start warm; a launch whose environment the fork server cannot
vouch for starts cold by itself."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agent.cli.forkserver import FORKSERVER_ENV as CLI_FORKSERVER_ENV
from tools.catalog.mcp_forkserver import FORKSERVER_ENV as MCP_FORKSERVER_ENV

WARM_START_VARIABLES = frozenset({MCP_FORKSERVER_ENV, CLI_FORKSERVER_ENV})


def cleared(name: str, prefixes: str | tuple[str, ...]) -> bool:
    """Whether a hermetic test clears the variable `name`: it starts with one of `prefixes`, and is a setting."""
    return name.startswith(prefixes) and name not in WARM_START_VARIABLES


@dataclass(frozen=True)
class ForkServer:
    """A fork server the test session started: its socket and its log (launches and refusals, one per line)."""

    socket: Path
    log: Path

    def launched(self, launcher: int) -> bool:
        """Whether it forked a child for the launcher process `launcher`."""
        return f"for launcher {launcher}\n" in self.log.read_text()

    def refusal(self, launcher: int) -> str | None:
        """Why it refused the launcher process `launcher`, if it did."""
        found = re.search(rf"refused a launch from pid {launcher}: (.*)", self.log.read_text())
        return found.group(1) if found else None
