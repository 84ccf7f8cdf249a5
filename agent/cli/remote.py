"""`provenance assess` through the assessment service of a running `provenance catalog serve` (agent/service.py).

Only this home's service is used: the one the state file of $PROVENANCE_HOME advertises, whose process is alive and
serves the same Lite file, so the run, its evidence and its settings are the ones a local assessment would have.
This module imports nothing heavy (no pandas, LangGraph or MCP): the point is a fast start.
"""

from __future__ import annotations

import argparse
import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from agent.cli.precheck import Refused, parse_params
from tools.catalog.serve_state import live_state, state_path
from tools.errors import ServiceFailure
from tools.settings import ProvenanceSettings

REQUEST_TIMEOUT_SECONDS = 900.0
log = logging.getLogger(__name__)


class RemoteServiceFailure(ServiceFailure):
    """A service the remote assessment depends on (the database, the model registry) failed there."""


class ServiceUnavailable(ServiceFailure):
    """The advertised service did not take the request (gone, or refused it before starting): assess here."""


@dataclass(frozen=True)
class AssessService:
    url: str
    token: str
    pid: int


def find_service(settings: ProvenanceSettings) -> AssessService | None:
    """This home's assessment service, or None (no `catalog serve` running, another catalog chosen, no service)."""
    if settings.provenance_catalog != "embedded" or settings.provenance_catalog_url:
        return None
    state = live_state(settings, logging.INFO)  # a local run follows, and its find_served warns
    if state is None:
        return None
    url, token, pid = state.get("assess_url"), state.get("gms_token"), state.get("pid")
    if not (isinstance(url, str) and isinstance(token, str) and isinstance(pid, int)):
        log.info("no assessment service advertised in %s", state_path(settings))
        return None
    return AssessService(url, token, pid)


def request_body(args: argparse.Namespace) -> bytes:
    policy = str(Path(args.policy).resolve()) if args.policy is not None else None
    return json.dumps(
        {
            "dataset": args.dataset,
            "field": args.field,
            "op": args.op,
            "params": parse_params(args.param),
            "fraction": args.fraction,
            "seed": args.seed,
            "policy": policy,
        }
    ).encode()


def assess_remotely(service: AssessService, args: argparse.Namespace) -> dict[str, Any]:
    """The service's reply ({"verdict", "summary", "text"}); its errors raised as a local run would raise them."""
    return _post(service, service.url, request_body(args))


def lineage_remotely(service: AssessService, dataset: str, field: str) -> dict[str, Any]:
    """`provenance lineage` answered by the service ({"text", "json"}): its catalog is open, its libraries loaded."""
    return _post(service, _sibling(service, "lineage"), json.dumps({"dataset": dataset, "field": field}).encode())


def command_remotely(service: AssessService, request: dict[str, Any]) -> dict[str, Any]:
    """A client's command run by the service (agent/cli/served.py): {"code", "stdout", "stderr", "ask"}."""
    # no timeout: a scan may take longer than any bound
    return _post(service, _sibling(service, "command"), json.dumps(request).encode(), timeout=None)


def _sibling(service: AssessService, name: str) -> str:
    """The service's path `name` beside the advertised assessment path (/provenance/assess -> /provenance/NAME)."""
    return service.url.rsplit("/", 1)[0] + "/" + name


def _post(
    service: AssessService, url: str, body: bytes, timeout: float | None = REQUEST_TIMEOUT_SECONDS
) -> dict[str, Any]:
    request = urllib.request.Request(
        url,
        data=body,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {service.token}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            reply: dict[str, Any] = json.loads(response.read())
            return reply
    except urllib.error.HTTPError as exc:
        try:
            error = json.loads(exc.read())
        except ValueError:
            error = {"kind": "internal", "error": f"HTTP {exc.code} {exc.reason}"}
        _raise(service, error.get("kind"), str(error.get("error")))
    except (urllib.error.URLError, ConnectionError) as exc:
        raise ServiceUnavailable(f"the assessment service at {service.url} did not answer ({exc})") from exc


def _raise(service: AssessService, kind: object, message: str) -> NoReturn:
    if kind == "bad_input":
        raise Refused(message)
    if kind == "not_here":  # busy with another command, or another chat model: the client runs it
        raise ServiceUnavailable(f"the service did not run the command ({message})")
    if kind == "auth":
        raise ServiceUnavailable(f"the assessment service refused this client ({message})")
    from tools.catalog.session import CatalogError  # the MCP stack, only on this error path

    if kind == "catalog":
        raise CatalogError(message)
    if isinstance(kind, str) and kind != "internal":  # another service the assessment depends on (tools/errors.py)
        raise RemoteServiceFailure(f"{kind}: {message}")
    raise RuntimeError(
        f"the assessment service (`provenance catalog serve`, pid {service.pid}) failed: {message}; "
        "its traceback is in that process's output"
    )
