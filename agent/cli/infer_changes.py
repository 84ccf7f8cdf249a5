"""`provenance infer-changes`: the SQL models changed between two git refs, as a CHANGES.yml that `provenance check`
assesses. The catalog is opened only when some existing column changed (to find each model's dataset)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from agent.cli.exit_codes import EXIT_OK
from agent.errors import UsageError
from tools import atomic
from tools.catalog.connection import open_catalog
from tools.catalog.datahub import CatalogReader
from tools.changes.gitdiff import GitInputError
from tools.changes.infer import Inference, ModelChanges, analyse, build_change_set
from tools.changes.resolve import FIX_HINT, CatalogResolver, MappingOptionError, Resolution, parse_explicit
from tools.changes.schema import ChangeSet, dump_change_set
from tools.changes.sqlmap import DEFAULT_NULL_SHARE, NullShare
from tools.changes.sqlmodel import UnknownDialectError, check_dialect
from tools.settings import ProvenanceSettings

STDOUT = "-"


async def _no_catalog(table: str, file: str) -> Resolution:
    raise AssertionError(f"no dataset should be needed for {table} ({file}): nothing changed in it")


async def _build(
    settings: ProvenanceSettings, args: argparse.Namespace, models: list[ModelChanges], explicit: dict[str, str]
) -> Inference:
    if not any(model.changed for model in models):
        return await build_change_set(models, _no_catalog)
    async with open_catalog(settings) as catalog:
        resolver = CatalogResolver(
            CatalogReader(catalog.session), platform=args.platform, name_prefix=args.name_prefix, explicit=explicit
        )
        return await build_change_set(models, resolver)


def _null_share(value: float | None) -> NullShare:
    if value is None:
        return NullShare(DEFAULT_NULL_SHARE, "the --null-share default, not an observed null share")
    return NullShare(value, "the stated --null-share, not an observed null share")


def _params(params: dict[str, object]) -> str:
    return " ".join(f"{k}={json.dumps(v)}" for k, v in params.items())


def render_summary(inference: Inference, args: argparse.Namespace) -> str:
    """What a person reads in the terminal or the CI log: one line per entry, file:line first."""
    found = inference.change_set
    destination = "stdout" if args.output == STDOUT else args.output
    lines = [
        f"{len(inference.files)} SQL file(s) changed between {args.base} and {args.head}: {len(found.changes)} "
        f"change(s), {len(found.structural)} structural, {len(found.unmapped)} to review by hand -> {destination}"
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
    return "\n".join(lines)


def _header(args: argparse.Namespace, change_set: ChangeSet) -> str:
    counted = len(change_set.changes) + len(change_set.structural) + len(change_set.unmapped)
    return (
        f"Written by `provenance infer-changes --base {args.base} --head {args.head}`: {counted} entries.\n"
        "Review before committing: each entry names its SQL line; `confidence` says how sure the mapping is.\n"
        "`unmapped` entries are reviewed by hand (`provenance check` counts them INCOMPLETE)."
    )


def _write(text: str, output: str) -> None:
    if output == STDOUT:
        sys.stdout.write(text)
    else:
        atomic.write_atomically(Path(output), text.encode("utf-8"), mode=atomic.SHARED)


def _cmd_infer_changes(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    if args.json and args.output == STDOUT:
        raise UsageError("--json and --output - both print on stdout; write the file with --output FILE")
    try:
        check_dialect(args.dialect)
        explicit = parse_explicit(args.dataset)
        models = analyse(
            Path(args.repo),
            args.base,
            args.head,
            args.paths,
            dialect=args.dialect,
            null_share=_null_share(args.null_share),
        )
    except (GitInputError, MappingOptionError, UnknownDialectError) as exc:
        raise UsageError(str(exc)) from exc
    inference = asyncio.run(_build(settings, args, models, explicit))
    _write(dump_change_set(inference.change_set, header=_header(args, inference.change_set)), args.output)
    summary = render_summary(inference, args)
    if args.json:
        print(inference.change_set.model_dump_json(indent=2))
    print(summary, file=sys.stderr if args.json or args.output == STDOUT else sys.stdout)
    return EXIT_OK
