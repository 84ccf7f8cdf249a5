"""The warm local service a command leaves behind (PROVENANCE_SERVICE=auto, the default outside CI): after a command
that reads the catalog, when no service runs for this home, `provenance catalog serve --background` is started
detached, at a lower CPU priority, once — two commands finishing together start one (an exclusive start file). The
command itself ran as before (the start comes after it, so it is not slower); the next commands find the service
through the home's state file: the catalog endpoint and its MCP server already running, assessments sent to the
assessment service (agent/cli/remote.py). It exits after PROVENANCE_SERVICE_IDLE seconds without a request, and is
replaced when the code or the settings it was started with change (tools/catalog/service_stamp.py).
`provenance service status|stop` shows and ends it. Imports nothing heavy."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from tools.catalog.serve_state import live_state
from tools.settings import ProvenanceSettings

WARMED_BY = frozenset({"assess", "lineage", "check", "scan", "ask", "diff"})
START_FILE = "service-start.lock"
START_GRACE_SECONDS = 120.0  # a start file older than this belongs to a start that died
log = logging.getLogger(__name__)


def start_file(settings: ProvenanceSettings) -> Path:
    return settings.home / START_FILE


def _claim(path: Path) -> bool:
    """Create the start file exclusively; a stale one (its starter died) is taken over."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        try:
            age = time.time() - path.stat().st_mtime
        except FileNotFoundError:
            return _claim(path)
        if age < START_GRACE_SECONDS:
            return False
        path.unlink(missing_ok=True)
        return _claim(path)
    with os.fdopen(fd, "w") as handle:
        handle.write(str(os.getpid()))
    return True


def leave_warm_service(settings: ProvenanceSettings, command: str) -> int | None:
    """Start the background service if this command warrants one and none runs or is starting; its pid, or None."""
    if command not in WARMED_BY or not settings.warm_service or not settings.lite_db.is_file():
        return None
    if live_state(settings, logging.DEBUG) is not None:
        return None
    path = start_file(settings)
    if not _claim(path):
        return None
    logs = settings.logs
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "service.log", "ab") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "agent.cli", "catalog", "serve", "--background"],
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    log.info("started a warm service for %s (pid %s; PROVENANCE_SERVICE=off to run without one)", settings.home,
             process.pid)  # fmt: skip
    return process.pid
