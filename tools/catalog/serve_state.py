"""The state file a running `provenance catalog serve` advertises itself in, readable without the MCP stack (the CLI's
thin assessment client, agent/cli/remote.py, must start fast)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from tools.catalog.service_stamp import service_stamp
from tools.settings import ProvenanceSettings

STATE_FILE = "catalog-serve.json"
log = logging.getLogger(__name__)


def state_path(settings: ProvenanceSettings) -> Path:
    return settings.home / STATE_FILE


def pid_alive(pid: int) -> bool:
    try:  # a child of this process that exited is a zombie until reaped, and signal 0 still reaches it
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:  # not our child: its parent (or init) reaps it
        pass
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
    stamp = state.get("stamp")
    if stamp is not None and stamp != service_stamp(settings.home):
        # A background service started by another version, policy or setting: it would not run what this command
        # runs. It is ours (the state file is private to this user): stop it; the command runs here, and starts
        # a fresh one when it is done (agent/cli/warm.py).
        log.info("stopping the service of %s (pid %s): started with other code or settings", path, pid)
        stop_process(pid)
        return None
    return state


def stop_process(pid: int, wait_seconds: float = 10.0) -> bool:
    """SIGTERM, then wait for the process to exit; True when it did."""
    import signal
    import time

    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    return not pid_alive(pid)
