"""One root for every error we raise, and one mapping from an error to what a caller sees (tools/errors.py)."""

from __future__ import annotations

import importlib
import pkgutil
from http import HTTPStatus

import pytest

from tools.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILURE,
    BadRequest,
    ProvenanceError,
    ServiceFailure,
    exit_code,
    failed_service,
    failure_kind,
    http_status,
)

PACKAGES = ("agent", "tools", "policies", "seed")


def our_exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == info.name:
                    found.append(value)
    return found


def test_every_error_we_define_is_a_bad_request_or_a_service_failure() -> None:
    classes = our_exception_classes()
    assert len(classes) >= 30  # the walk saw the packages (33 classes when this test was written)
    rootless = [f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, ProvenanceError)]
    assert not rootless, f"derive these from tools.errors.BadRequest or ServiceFailure: {rootless}"
    both_or_neither = [
        f"{c.__module__}.{c.__qualname__}"
        for c in classes
        if c is not ProvenanceError
        and issubclass(c, BadRequest) == issubclass(c, ServiceFailure)
        and c.__name__ != "DatabaseError"  # the abstract parent of one bad-request and one service-failure class
    ]
    assert not both_or_neither, f"each error is exactly one of BadRequest and ServiceFailure: {both_or_neither}"


@pytest.mark.parametrize(
    ("error", "code", "status", "kind"),
    [
        (BadRequest("no such field"), EXIT_BAD_INPUT, HTTPStatus.BAD_REQUEST, "input"),
        (ServiceFailure("catalog down"), EXIT_FAILURE, HTTPStatus.BAD_GATEWAY, "error"),
        (OSError(28, "No space left on device"), EXIT_FAILURE, HTTPStatus.INTERNAL_SERVER_ERROR, "error"),
        (KeyError("a bug of ours"), EXIT_FAILURE, HTTPStatus.INTERNAL_SERVER_ERROR, "error"),
    ],
)
def test_the_mapping(error: BaseException, code: int, status: HTTPStatus, kind: str) -> None:
    assert (exit_code(error), http_status(error), failure_kind(error)) == (code, status, kind)


def test_known_classes_keep_their_meaning() -> None:
    from agent.errors import AlreadyDecided, DatabaseUnavailableError, DatabaseUrlError
    from policies import PolicyError
    from tools.catalog.resolve import CatalogInputError
    from tools.catalog.session import CatalogError, CatalogToolError
    from tools.mutations import PlanError
    from tools.runtime.executor import WorkerCrashed

    for bad in (PolicyError, PlanError, CatalogInputError, AlreadyDecided, DatabaseUrlError):
        assert exit_code(bad("x")) == EXIT_BAD_INPUT, bad
    for failed in (CatalogError("x"), CatalogToolError("search", "x"), WorkerCrashed("x"), DatabaseUnavailableError()):
        assert exit_code(failed) == EXIT_FAILURE, failed
    # The chat says "the DataHub catalog could not be reached" from this, not from the message's wording.
    assert failed_service(CatalogToolError("search", "HTTP 503")) == "catalog"
    assert failed_service(CatalogInputError("no dataset named 'x'")) is None
    assert isinstance(PlanError("x"), ValueError)  # callers that catch ValueError still do
