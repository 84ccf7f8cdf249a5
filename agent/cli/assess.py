"""`provenance assess`: one change, every affected production model, evidence only.

With a `provenance catalog serve` running for this home, the assessment runs there (agent/service.py: imports and
catalog already warm) and this process only sends the request and prints the reply (agent/cli/remote.py); without
one, or when it does not answer, it runs here."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from typing import TYPE_CHECKING

from agent.cli.exit_codes import EXIT_CODES
from agent.cli.precheck import NO_PUBLISH, Refused
from agent.cli.remote import ServiceUnavailable, assess_remotely, find_service
from tools.settings import ProvenanceSettings

if TYPE_CHECKING:
    from agent.assessment import AssessmentResult

log = logging.getLogger(__name__)


async def _assess(settings: ProvenanceSettings, args: argparse.Namespace) -> AssessmentResult:
    from agent.assessment import assess_change
    from agent.cli.progress import terminal_progress
    from agent.context import AgentContext
    from policies import load_policy
    from tools.catalog.handle import CatalogHandle
    from tools.catalog.resolve import check_dataset_urn

    check_dataset_urn(args.dataset)
    mutation = args.mutation  # parsed once, by the first checks (agent/cli/precheck.py)
    policy = load_policy(args.policy)
    async with CatalogHandle(settings) as handle:
        context = AgentContext(settings=settings, policy=policy, catalog=handle)
        progress = terminal_progress(json_output=args.json)
        return await assess_change(context, args.dataset, args.field, mutation, on_update=progress)


def _cmd_assess(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    if not args.no_publish:
        raise Refused(NO_PUBLISH)
    if args.feature is not None:
        from agent.cli.catalog import feature_subjects

        pairs = asyncio.run(feature_subjects(settings, args.feature))
        if len(pairs) != 1:
            listed = "; ".join(f"--dataset '{d}' --field {f}" for d, f in pairs)
            raise Refused(f"{args.feature} reads {len(pairs)} columns; assess one of them: {listed}")
        args = argparse.Namespace(**{**vars(args), "dataset": pairs[0][0], "field": pairs[0][1], "feature": None})
    service = find_service(settings)
    if service is not None:
        try:
            reply = assess_remotely(service, args)
        except ServiceUnavailable as exc:
            log.warning("%s; assessing in this process instead", exc)
        else:
            log.info("assessed by `provenance catalog serve` (pid %s)", service.pid)
            print(json.dumps(reply["summary"], indent=2) if args.json else reply["text"])
            return EXIT_CODES[reply["verdict"]]
    from tools.evidence.terminal import render_evidence

    result = asyncio.run(_assess(settings, args))
    if args.json:
        print(json.dumps(result.summary(), indent=2, default=str))
    else:
        print(render_evidence(result.evidence, result.run_dir))
    return EXIT_CODES[result.evidence.verdict]
