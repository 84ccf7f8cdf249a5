"""`provenance service status|stop`: this home's warm local service (agent/cli/warm.py)."""

from __future__ import annotations

import argparse
import logging

from tools.catalog.serve_state import live_state, state_path, stop_process
from tools.errors import EXIT_FAILURE, EXIT_OK
from tools.settings import ProvenanceSettings


def _cmd_service(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    state = live_state(settings, logging.DEBUG)
    if state is None:
        print(f"no service runs for {settings.home}" + ("" if settings.warm_service else " (PROVENANCE_SERVICE=off)"))
        return EXIT_OK
    pid = int(state["pid"])
    if args.action == "status":
        kind = "warm (background)" if state.get("stamp") else "`provenance catalog serve` (foreground)"
        idle = state.get("idle_seconds")
        print(f"{kind} service for {settings.home}: pid {pid}")
        print(f"  catalog endpoint {state.get('gms_url')}, MCP {state.get('mcp_url')}")
        print(f"  assessments {state.get('assess_url')}")
        if idle:
            print(f"  exits after {idle} s without a request; `provenance service stop` ends it now")
        print(f"  state: {state_path(settings)}")
        return EXIT_OK
    if stop_process(pid):
        print(f"stopped the service of {settings.home} (pid {pid})")
        return EXIT_OK
    print(f"error: the service (pid {pid}) did not exit within 10 s", flush=True)
    return EXIT_FAILURE
