"""Assessments served by `provenance catalog serve`, so `provenance assess` does not start Python's heavy half.

A CLI assessment spent ~3 s importing LangGraph, LangChain, scikit-learn and matplotlib and ~2 s starting the
catalog before measuring anything. The serving process has done both once: it keeps an `AgentContext` on the
served catalog (its own MCP server, over HTTP) and the imports, and answers `POST /provenance/assess` on
127.0.0.1 with the same result the CLI would print. The request carries what the command line says (dataset,
field, operator, parameters, fraction, seed, policy file); the run uses the serving process's settings and home,
which are the client's (a client only uses the service advertised in its own home's state file, agent/cli/remote.py).
Its bearer token is the endpoint's, kept in that state file (mode 0600).

Errors keep their meaning across the wire: a request the catalog or the data cannot serve answers 400 with the
message (the CLI exits 2 as it would locally), an unreachable catalog 502 (exit 1), anything else 500 with the
traceback in the serving process's log (exit 1).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http import HTTPStatus
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.assessment import assess_change
from agent.context import AgentContext
from policies import load_policy
from tools.catalog.handle import CatalogHandle
from tools.catalog.resolve import check_dataset_urn
from tools.errors import ProvenanceError, ServiceFailure, http_status
from tools.evidence.terminal import render_evidence
from tools.json_http import BoundedHTTPServer, JsonHandler
from tools.mutations import parse_mutation
from tools.runtime.executor import import_experiment_modules, make_executor, share_executor
from tools.settings import ProvenanceSettings

log = logging.getLogger(__name__)

ASSESS_PATH = "/provenance/assess"
LINEAGE_PATH = "/provenance/lineage"
COMMAND_PATH = "/provenance/command"
CommandRunner = Callable[[bytes], dict[str, Any]]
"""Runs a client's command line in this process (agent/cli/served.py, given by the CLI that starts the service)."""
_MAX_BODY = 1 << 20


class NotServedHere(ServiceFailure):
    """The service will not run a client's command now (busy, or the client's chat model keys differ): the client
    runs it itself."""


class AssessRequest(BaseModel):
    """`provenance assess`'s arguments, as the client sends them."""

    model_config = ConfigDict(extra="forbid")
    dataset: str
    field: str
    op: str
    params: dict[str, Any] = Field(default_factory=dict)
    fraction: float = 1.0
    seed: int = 0
    policy: str | None = None
    """An absolute path (the client resolves it against its working directory), or None for the default."""


class AssessmentService:
    """An event loop on its own thread holding one `AgentContext` on the served catalog, behind an HTTP entry."""

    def __init__(self, settings: ProvenanceSettings, token: str, commands: CommandRunner | None = None) -> None:
        self.settings = settings
        self.token = token
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="provenance-assess-loop", daemon=True)
        self._handle = CatalogHandle(settings)
        # Worker processes (PROVENANCE_EXECUTOR=auto for a long-lived server), started and warmed before the first
        # request, shared with every command the service runs (`share_executor`): a `check`'s models then run on
        # both cores (benchmarks/bench_warm.py: a served check 1.9 s -> 1.3 s in-process; one assessment 1.2 s with
        # threads, 1.3 s with processes).
        self._jobs = make_executor(settings.executor_kind(long_lived=True), settings.workers)
        self._context = AgentContext(settings=settings, catalog=self._handle, executor=self._jobs)
        self._server: BoundedHTTPServer | None = None
        self.commands = commands

    @property
    def url(self) -> str:
        assert self._server is not None, "start the service first"
        return f"http://127.0.0.1:{self._server.server_address[1]}{ASSESS_PATH}"

    def start(self) -> None:
        self._thread.start()
        # The catalog session is opened, and the modules an experiment imports on first use are imported, now:
        # the first request should not pay for them (~1.5 s: scikit-learn, scipy, matplotlib).
        opening = asyncio.run_coroutine_threadsafe(self._handle.get(), self._loop)
        self._jobs.warm()  # the workers import while this process does
        import_experiment_modules(first_figure=True)
        opening.result()
        self._jobs.warm(wait=True)
        share_executor(self._jobs)
        self._server = BoundedHTTPServer(("127.0.0.1", 0), _handler(self))
        threading.Thread(target=self._server.serve_forever, name="provenance-assess-http", daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread.is_alive():
            closing = asyncio.run_coroutine_threadsafe(self._close(), self._loop)
            try:
                closing.result(timeout=30)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=10)

    async def _close(self) -> None:
        share_executor(None)
        try:
            await self._handle.aclose()
        finally:
            await self._jobs.aclose()

    def assess(self, request: AssessRequest) -> dict[str, Any]:
        """Run the assessment on the service's loop; what the CLI prints, both ways, and the verdict."""
        return asyncio.run_coroutine_threadsafe(self._assess(request), self._loop).result()

    def lineage(self, request: LineageRequest) -> dict[str, Any]:
        """The lineage answer on the service's open catalog: the CLI's text and JSON."""
        return asyncio.run_coroutine_threadsafe(self._lineage(request), self._loop).result()

    async def _lineage(self, request: LineageRequest) -> dict[str, Any]:
        from tools.catalog.render import render_discovery

        check_dataset_urn(request.dataset)
        found = await (await self._handle.discoverer()).discover(request.dataset, request.field)
        return {
            "text": render_discovery(found),
            "json": found.model_dump(mode="json", exclude={"dataset": {"raw"}}),
        }

    async def _assess(self, request: AssessRequest) -> dict[str, Any]:
        check_dataset_urn(request.dataset)
        mutation = parse_mutation(request.op, request.params, fraction=request.fraction, seed=request.seed)
        policy = load_policy(Path(request.policy) if request.policy else None)
        context = dataclasses.replace(self._context, policy=policy)
        result = await assess_change(context, request.dataset, request.field, mutation)
        return {
            "verdict": str(result.evidence.verdict),
            "summary": json.loads(json.dumps(result.summary(), default=str)),
            "text": render_evidence(result.evidence, result.run_dir),
        }


class LineageRequest(BaseModel):
    """`provenance lineage`'s arguments, as the client sends them."""

    model_config = ConfigDict(extra="forbid")
    dataset: str
    field: str


def _handler(service: AssessmentService) -> type[JsonHandler]:
    class Handler(JsonHandler):
        timeout = 60  # a stalled connection is closed, and its thread ends

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            log.debug("assess service: " + format, *args)

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            if self.path not in (ASSESS_PATH, LINEAGE_PATH) and not (self.path == COMMAND_PATH and service.commands):
                self.reply(HTTPStatus.NOT_FOUND, {"kind": "bad_input", "error": f"no such path {self.path}"})
                return
            if not self.bearer_matches(service.token):
                self.reply(HTTPStatus.UNAUTHORIZED, {"kind": "auth", "error": "missing or wrong bearer token"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0:  # read(-1) would wait for the client to close: a thread held by one bad header
                self.close_connection = True
                self.reply(HTTPStatus.BAD_REQUEST, {"kind": "bad_input", "error": "bad Content-Length"})
                return
            if length > _MAX_BODY:
                self.reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"kind": "bad_input", "error": "request too large"})
                return
            try:
                body = self.rfile.read(length)
                if self.path == LINEAGE_PATH:
                    self.reply(HTTPStatus.OK, service.lineage(LineageRequest.model_validate_json(body)))
                elif self.path == COMMAND_PATH and service.commands is not None:
                    self.reply(HTTPStatus.OK, service.commands(body))
                else:
                    self.reply(HTTPStatus.OK, service.assess(AssessRequest.model_validate_json(body)))
            except NotServedHere as exc:  # the client runs the command itself
                self.reply(HTTPStatus.CONFLICT, {"kind": "not_here", "error": str(exc)})
            except ValidationError as exc:  # the request body itself
                self.reply(HTTPStatus.BAD_REQUEST, {"kind": "bad_input", "error": str(exc)})
            except ProvenanceError as exc:  # as `provenance assess` sorts them (tools/errors.py)
                status = http_status(exc)
                kind = "bad_input" if status == HTTPStatus.BAD_REQUEST else (exc.service or "service")
                self.reply(status, {"kind": kind, "error": str(exc)})
            except Exception as exc:  # a bug of ours: the client says so, the traceback stays in the server's log
                log.exception("assessment request failed")
                self.reply(
                    HTTPStatus.INTERNAL_SERVER_ERROR, {"kind": "internal", "error": f"{type(exc).__name__}: {exc}"}
                )

    return Handler


@contextmanager
def assessment_service(
    settings: ProvenanceSettings, token: str, commands: CommandRunner | None = None
) -> Iterator[AssessmentService]:
    service = AssessmentService(settings, token, commands)
    service.start()
    try:
        yield service
    finally:
        service.stop()
