"""The state file a running `provenance catalog serve` advertises itself in, readable without the MCP stack (the CLI's
thin assessment client, agent/cli/remote.py, must start fast)."""

from __future__ import annotations

import os
from pathlib import Path

from tools.settings import ProvenanceSettings

STATE_FILE = "catalog-serve.json"


def state_path(settings: ProvenanceSettings) -> Path:
    return settings.home / STATE_FILE


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
