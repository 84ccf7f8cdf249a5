"""From a git diff of SQL models to the CHANGES entries it implies: the files analysed, each model's dataset found
through the catalog, the summary a person reads. Shared by `provenance infer-changes` and the MCP tool
`infer_changes`; the catalog is read only when some existing column changed (to find each model's dataset)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent.errors import UsageError
from tools.catalog.datahub import CatalogReader
from tools.changes.infer import Inference, ModelChanges, analyse, build_change_set
from tools.changes.resolve import FIX_HINT, CatalogResolver, Resolution, parse_explicit
from tools.changes.schema import ChangeSet
from tools.changes.sqlmap import DEFAULT_NULL_SHARE, NullShare
from tools.changes.sqlmodel import check_dialect


@dataclass(frozen=True)
class InferRequest:
    """What `infer-changes` is asked: the refs, the checkout, and how to find each model's dataset."""

    base: str
    head: str = "HEAD"
    repo: Path = Path(".")
    paths: list[str] = field(default_factory=list)
    platform: str | None = None
    name_prefix: str | None = None
    datasets: list[str] = field(default_factory=list)
    """`NAME=URN` pairs: the dataset of a model (its table name or its file)."""
    null_share: float | None = None
    dialect: str | None = None


def analyse_request(request: InferRequest) -> tuple[list[ModelChanges], dict[str, str]]:
    """The changed SQL files analysed and the explicit datasets, checked; bad input raises a BadRequest (exit 2)
    before the catalog is opened. Runs git: blocking."""
    check_dialect(request.dialect)
    explicit = parse_explicit(request.datasets)
    models = analyse(
        request.repo,
        request.base,
        request.head,
        request.paths,
        dialect=request.dialect,
        null_share=null_share(request.null_share),
    )
    return models, explicit


async def infer(
    request: InferRequest,
    models: list[ModelChanges],
    explicit: dict[str, str],
    reader: Callable[[], Awaitable[CatalogReader]],
) -> Inference:
    """The ChangeSet of the analysed files; `reader` is awaited only when some model changed."""
    if not any(model.changed for model in models):
        return await build_change_set(models, _no_catalog)
    resolver = CatalogResolver(
        await reader(), platform=request.platform, name_prefix=request.name_prefix, explicit=explicit
    )
    return await build_change_set(models, resolver)


async def _no_catalog(table: str, file: str) -> Resolution:
    raise AssertionError(f"no dataset should be needed for {table} ({file}): nothing changed in it")


def null_share(value: float | None) -> NullShare:
    """The share of rows a COALESCE change touches: stated, or the default — never an observed one."""
    if value is None:
        return NullShare(DEFAULT_NULL_SHARE, "the --null-share default, not an observed null share")
    if not 0 < value <= 1:  # also NaN
        raise UsageError(f"null_share must be in (0, 1], got {value}")
    return NullShare(value, "the stated --null-share, not an observed null share")


def _params(params: dict[str, object]) -> str:
    return " ".join(f"{k}={json.dumps(v)}" for k, v in params.items())


def summary_lines(inference: Inference, request: InferRequest, destination: str) -> list[str]:
    """What a person reads in the terminal or the CI log: one line per entry, file:line first."""
    found = inference.change_set
    lines = [
        f"{len(inference.files)} SQL file(s) changed between {request.base} and {request.head}: "
        f"{len(found.changes)} change(s), {len(found.structural)} structural, {len(found.unmapped)} to review by hand "
        f"-> {destination}"
    ]
    for entry in found.changes:
        where = f"{entry.source.file}:{entry.source.line}" if entry.source else "?"
        fraction = f" fraction={entry.fraction:g}" if entry.fraction != 1.0 else ""
        lines.append(
            f"  {where}  {entry.field}  {entry.op} {_params(dict(entry.params))}{fraction}  ({entry.confidence}) "
            f"{entry.note}"
        )
    for item in found.structural:
        where = f"{item.source.file}:{item.source.line}" if item.source else "?"
        renamed = f" -> {item.renamed_to}" if item.renamed_to else ""
        lines.append(f"  {where}  {item.field}  STRUCTURAL {item.change}{renamed} ({item.dataset})")
    for unmapped in found.unmapped:
        lines.append(f"  {unmapped.file}:{unmapped.line}  {unmapped.column}  REVIEW BY HAND: {unmapped.reason}")
    quiet = [model for model in inference.files if not model.changed]
    if quiet:
        listed = ", ".join(f"{model.file} ({model.status})" for model in quiet)
        lines.append(f"  no existing column changed in: {listed}")
    if inference.unresolved:
        lines.append(f"Datasets not found for {', '.join(sorted(inference.unresolved))}: {FIX_HINT}")
    return lines


def header(request: InferRequest, change_set: ChangeSet) -> str:
    """The comment heading a written CHANGES.yml."""
    counted = len(change_set.changes) + len(change_set.structural) + len(change_set.unmapped)
    return (
        f"Written by `provenance infer-changes --base {request.base} --head {request.head}`: {counted} entries.\n"
        "Review before committing: each entry names its SQL line; `confidence` says how sure the mapping is.\n"
        "`unmapped` entries are reviewed by hand (`provenance check` counts them INCOMPLETE)."
    )
