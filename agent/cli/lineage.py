"""`provenance lineage`: answered by this home's warm service when one runs (its catalog open, its libraries loaded:
agent/cli/remote.py, no heavy import here), else in this process (agent/cli/catalog.py)."""

from __future__ import annotations

import argparse
import json
import logging

from agent.cli.remote import ServiceUnavailable, find_service, lineage_remotely
from tools.errors import EXIT_OK
from tools.settings import ProvenanceSettings

log = logging.getLogger(__name__)


def _cmd_lineage(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    service = find_service(settings) if args.feature is None else None
    if service is not None:
        try:
            reply = lineage_remotely(service, args.dataset, args.field)
        except ServiceUnavailable as exc:
            log.warning("%s; reading the lineage in this process instead", exc)
        else:
            log.info("lineage answered by `provenance catalog serve` (pid %s)", service.pid)
            where = f"the service of this home (`provenance catalog serve`, pid {service.pid})"
            if args.json:
                print(json.dumps({**reply["json"], "catalog_startup_seconds": 0.0, "catalog": where}, indent=2))
            else:
                print(reply["text"])
                print(f"catalog: {where}")
            return EXIT_OK
    from agent.cli.catalog import _cmd_lineage as in_this_process

    return in_this_process(settings, args)
