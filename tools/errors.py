"""The one root of Provenance's errors, and the one place that says what each kind means to a caller.

Every error we raise derives from `BadRequest` ("the request cannot be served as asked": the input, a file the
user gave, or a refusal; exit 2, HTTP 400) or `ServiceFailure` ("a service we depend on failed": the catalog, the
database, the model registry, a worker; exit 1, HTTP 502). Anything else reaching a front door is a bug of ours:
exit 1 with "internal error", HTTP 500. The CLI, the assessment service and the graph's failure capture ask
`exit_code`, `http_status` and `failure_kind` here instead of listing classes or matching messages.

A leaf module (it imports nothing of ours), so every package may raise these, `policies` included.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import ClassVar, Literal

EXIT_OK = 0
EXIT_FAILURE = 1
# a verdict as a process exit code (usable as a CI gate); the CLI and the MCP server say the same
VERDICT_EXIT_CODES = {"PASS": 0, "WARNING": 10, "BLOCK": 20, "INCOMPLETE": 30}
EXIT_BAD_INPUT = 2

FailureKind = Literal["input", "error"]
"""How a graph stage's failure is recorded (tools/evidence/schema.py StageFailure.kind): `input` means the request
cannot be served as asked (no run is made); `error` means the run failed and what evidence exists is written."""


class ProvenanceError(Exception):
    """The root. Raise a subclass of `BadRequest` or `ServiceFailure`, never this class itself."""

    exit_code: ClassVar[int] = EXIT_FAILURE
    http_status: ClassVar[HTTPStatus] = HTTPStatus.INTERNAL_SERVER_ERROR
    failure_kind: ClassVar[FailureKind] = "error"
    service: ClassVar[str | None] = None
    """The service that failed, for a `ServiceFailure` (the chat says "the DataHub catalog could not be reached")."""


class BadRequest(ProvenanceError):
    """The request cannot be served as asked; the message says what to change. Nothing was written."""

    exit_code = EXIT_BAD_INPUT
    http_status = HTTPStatus.BAD_REQUEST
    failure_kind = "input"


class ServiceFailure(ProvenanceError):
    """A service we depend on failed (unreachable, refused, crashed); the message says what to do next."""

    exit_code = EXIT_FAILURE
    http_status = HTTPStatus.BAD_GATEWAY
    failure_kind = "error"


def exit_code(exc: BaseException) -> int:
    """The process exit code for an error that ended a command: 2 for a bad request, else 1 (a failed service, a
    disk that refused a write, or a bug of ours)."""
    return exc.exit_code if isinstance(exc, ProvenanceError) else EXIT_FAILURE


def http_status(exc: BaseException) -> HTTPStatus:
    return exc.http_status if isinstance(exc, ProvenanceError) else HTTPStatus.INTERNAL_SERVER_ERROR


def failure_kind(exc: BaseException) -> FailureKind:
    return exc.failure_kind if isinstance(exc, ProvenanceError) else "error"


def failed_service(exc: BaseException) -> str | None:
    return exc.service if isinstance(exc, ProvenanceError) else None
