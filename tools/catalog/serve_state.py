"""The state file a running `provenance catalog serve` advertises itself in, readable without the MCP stack (the CLI's
thin assessment client, agent/cli/remote.py, must start fast)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from tools.settings import ProvenanceSettings

STATE_FILE = "catalog-serve.json"
log = logging.getLogger(__name__)


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


def live_state(settings: ProvenanceSettings, level: int = logging.WARNING) -> dict[str, Any] | None:
    """The state file's fields when it advertises a live `catalog serve` of this home's Lite file; None otherwise
    (no file, unreadable, another catalog file, a dead process: each but the first logged with its reason, a
    broken file at `level`; a caller that falls back to `find_served`, which reports it, passes INFO)."""
    path = state_path(settings)
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.log(level, "ignoring %s: unreadable (%s)", path, exc)
        return None
    if not isinstance(state, dict):
        log.log(level, "ignoring %s: not a JSON object", path)
        return None
    if state.get("lite_db") != str(settings.lite_db):
        log.info("not reusing the catalog in %s: it serves %s, not %s", path, state.get("lite_db"), settings.lite_db)
        return None
    pid = state.get("pid")
    if not isinstance(pid, int) or not pid_alive(pid):
        log.log(level, "ignoring the stale %s: its process (pid %s) is not running; starting a catalog", path, pid)
        return None
    return state
