"""`provenance assess`: one change, every affected production model, evidence only."""

from __future__ import annotations

import argparse
import asyncio
import json

from agent.assessment import AssessmentResult, assess_change
from agent.cli.exit_codes import EXIT_CODES
from agent.cli.precheck import NO_PUBLISH, parse_params
from agent.cli.render import render_result
from agent.context import AgentContext, CatalogHandle
from policies.engine import load_policy
from tools.catalog.lookup import check_dataset_urn
from tools.mutations import PlanError, parse_mutation
from tools.settings import ProvenanceSettings


async def _assess(settings: ProvenanceSettings, args: argparse.Namespace) -> AssessmentResult:
    check_dataset_urn(args.dataset)
    mutation = parse_mutation(args.op, parse_params(args.param), fraction=args.fraction, seed=args.seed)
    policy = load_policy(args.policy)
    async with CatalogHandle(settings) as handle:
        context = AgentContext(settings=settings, policy=policy, catalog=handle)
        return await assess_change(context, args.dataset, args.field, mutation)


def _cmd_assess(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    if not args.no_publish:
        raise PlanError(NO_PUBLISH)
    result = asyncio.run(_assess(settings, args))
    if args.json:
        print(json.dumps(result.summary(), indent=2, default=str))
    else:
        print(render_result(result))
    return EXIT_CODES[result.evidence.verdict]
