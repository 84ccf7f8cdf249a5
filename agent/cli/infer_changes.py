"""`provenance infer-changes`: the SQL models changed between two git refs, as a CHANGES.yml that `provenance check`
assesses (the inference itself is agent/inferring.py, shared with the MCP tool `infer_changes`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from agent.cli.exit_codes import EXIT_OK
from agent.errors import UsageError
from agent.inferring import InferRequest, analyse_request, header, infer, summary_lines
from tools import atomic
from tools.catalog.handle import CatalogHandle
from tools.changes.gitdiff import GitInputError
from tools.changes.infer import Inference, ModelChanges
from tools.changes.resolve import MappingOptionError
from tools.changes.schema import dump_change_set
from tools.changes.sqlmodel import UnknownDialectError
from tools.settings import ProvenanceSettings

STDOUT = "-"


def _request(args: argparse.Namespace) -> InferRequest:
    return InferRequest(
        base=args.base,
        head=args.head,
        repo=Path(args.repo),
        paths=args.paths,
        platform=args.platform,
        name_prefix=args.name_prefix,
        datasets=args.dataset,
        null_share=args.null_share,
        dialect=args.dialect,
    )


async def _infer(
    settings: ProvenanceSettings, request: InferRequest, models: list[ModelChanges], explicit: dict[str, str]
) -> Inference:
    async with CatalogHandle(settings) as catalog:  # opened only if a model's dataset must be found
        return await infer(request, models, explicit, catalog.reader)


def _write(text: str, output: str) -> None:
    if output == STDOUT:
        sys.stdout.write(text)
    else:
        atomic.write_atomically(Path(output), text.encode("utf-8"), mode=atomic.SHARED)


def _cmd_infer_changes(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    if args.json and args.output == STDOUT:
        raise UsageError("--json and --output - both print on stdout; write the file with --output FILE")
    request = _request(args)
    try:
        models, explicit = analyse_request(request)
    except (GitInputError, MappingOptionError, UnknownDialectError) as exc:
        raise UsageError(str(exc)) from exc
    inference = asyncio.run(_infer(settings, request, models, explicit))
    _write(dump_change_set(inference.change_set, header=header(request, inference.change_set)), args.output)
    destination = "stdout" if args.output == STDOUT else args.output
    summary = "\n".join(summary_lines(inference, request, destination))
    if args.json:
        print(inference.change_set.model_dump_json(indent=2))
    print(summary, file=sys.stderr if args.json or args.output == STDOUT else sys.stdout)
    return EXIT_OK
