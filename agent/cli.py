"""The `provenance` command line. Logs go to stderr; `--json` output goes to stdout."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from threading import Event

from agent.pipeline import EXIT_CODES, AssessmentResult, assess_change
from agent.render import render_result
from policies.engine import PolicyError, load_policy
from seed.seeding import seed_demo
from tools.catalog.connection import open_catalog
from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import CatalogInputError, Discoverer, Discovery
from tools.catalog.render import render_discovery
from tools.catalog.session import CatalogError
from tools.embedded.server import start_embedded_catalog
from tools.evidence.schema import ChangeRequest, PlanRecord
from tools.experiment.mutations import ALLOWED_OPERATORS, PlanError, parse_mutation
from tools.settings import ProvenanceSettings, load_settings

EXIT_OK, EXIT_BAD_INPUT, EXIT_FAILURE = 0, 2, 1
log = logging.getLogger("provenance")


def _cmd_seed(settings: ProvenanceSettings, _args: argparse.Namespace) -> int:
    result = seed_demo(settings)
    print(f"Seeded {result.mcps} aspects into the {result.catalog} in {result.seconds:.1f} s")
    for model in result.artifacts.models.values():
        digest = model.artifact_sha256[:12]
        print(f"  {model.name}: {model.artifact_path} (sha256 {digest}…, eval AUC {model.eval_auc:.3f})")
    print(f"  evaluation data: {result.artifacts.eval_data_path}")
    return EXIT_OK


def _cmd_serve(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    running = start_embedded_catalog(settings.lite_db, port=args.port, token=args.token)
    print(f"Embedded DataHub serving {settings.lite_db}", flush=True)
    print(f"  DATAHUB_GMS_URL={running.url}\n  DATAHUB_GMS_TOKEN={running.token}", flush=True)
    print("Stop with Ctrl-C.", flush=True)
    stop = Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        running.stop()
    return EXIT_OK


async def discover(settings: ProvenanceSettings, dataset: str, field: str) -> tuple[Discovery, float]:
    async with open_catalog(settings) as catalog:
        found = await Discoverer(CatalogReader(catalog.session)).discover(dataset, field)
        return found, catalog.startup_seconds


def _cmd_lineage(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    found, startup = asyncio.run(discover(settings, args.dataset, args.field))
    if args.json:
        print(
            json.dumps(
                {
                    **found.model_dump(mode="json", exclude={"dataset": {"raw"}}),
                    "catalog_startup_seconds": round(startup, 3),
                },
                indent=2,
            )
        )
    else:
        print(render_discovery(found))
        print(f"catalog start (endpoint + MCP server): {startup:.2f} s")
    return EXIT_OK


def _cmd_demo(settings: ProvenanceSettings, _args: argparse.Namespace) -> int:
    from seed.catalog import KAFKA_TOPIC_URN, POSTGRES_TABLE_URN

    print("== 1. Seed the demo catalog and models", flush=True)
    _cmd_seed(settings, _args)
    for step, dataset in (("2", POSTGRES_TABLE_URN), ("3", KAFKA_TOPIC_URN)):
        print(f"\n== {step}. Which models depend on {dataset} amount?", flush=True)
        found, startup = asyncio.run(discover(settings, dataset, "amount"))
        print(render_discovery(found))
        print(f"catalog start (endpoint + MCP server): {startup:.2f} s")
    return EXIT_OK


def parse_params(pairs: list[str]) -> dict[str, object]:
    """`--param k=v`: v is JSON when it parses (numbers, objects), else a plain string."""
    params: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise PlanError(f"--param expects key=value, got {pair!r} (e.g. --param factor=100)")
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value
    return params


async def _assess(settings: ProvenanceSettings, args: argparse.Namespace) -> AssessmentResult:
    mutation = parse_mutation(args.op, parse_params(args.param), fraction=args.fraction, seed=args.seed)
    policy = load_policy(args.policy)
    request = ChangeRequest(
        dataset_urn=args.dataset,
        field=args.field,
        op=mutation.op,
        params=mutation.model_dump(exclude={"op", "fraction", "seed"}),
        fraction=mutation.fraction,
        seed=mutation.seed,
    )
    plan = PlanRecord(
        planner="cli",
        mutation=mutation.model_dump(mode="json"),
        description=mutation.describe(args.field),
        rationale="given on the command line",
    )
    async with open_catalog(settings) as catalog:
        return await assess_change(settings, catalog, request, plan, mutation, policy)


def _cmd_assess(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    if not args.no_publish:
        raise PlanError("assess needs --no-publish here; use `provenance ask` to assess and publish with approval")
    result = asyncio.run(_assess(settings, args))
    if args.json:
        print(json.dumps(result.summary(), indent=2, default=str))
    else:
        print(render_result(result))
    return EXIT_CODES[result.evidence.verdict]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="provenance", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="seed the demo catalog and walk through the impact analysis")
    commands.add_parser("seed", help="train the demo models and write the demo catalog")
    catalog = commands.add_parser("catalog", help="the embedded DataHub catalog")
    catalog_commands = catalog.add_subparsers(dest="catalog_command", required=True)
    serve = catalog_commands.add_parser("serve", help="serve the embedded catalog in the foreground")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    serve.add_argument("--token", default=None, help="bearer token (default: random, printed)")
    lineage = commands.add_parser("lineage", help="which features and models depend on a field")
    lineage.add_argument("--dataset", required=True, help="dataset URN")
    lineage.add_argument("--field", required=True, help="field path in that dataset")
    lineage.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    assess = commands.add_parser("assess", help="test every affected production model against a mutation")
    assess.add_argument("--dataset", required=True, help="dataset URN")
    assess.add_argument("--field", required=True, help="field path in that dataset")
    assess.add_argument("--op", required=True, help=f"mutation operator: {', '.join(ALLOWED_OPERATORS)}")
    assess.add_argument("--param", action="append", default=[], metavar="K=V", help="operator parameter (repeat)")
    assess.add_argument("--fraction", type=float, default=1.0, help="share of rows to mutate, in (0, 1]")
    assess.add_argument("--seed", type=int, default=0, help="seed choosing the mutated rows")
    assess.add_argument("--policy", type=Path, default=None, help="policy file (default: policies/default-v1.yaml)")
    assess.add_argument("--no-publish", action="store_true", help="write evidence only; never touch the catalog")
    assess.add_argument("--json", action="store_true", help="the evidence summary as JSON on stdout")
    return parser


HANDLERS = {"assess": _cmd_assess, "demo": _cmd_demo, "seed": _cmd_seed, "catalog": _cmd_serve, "lineage": _cmd_lineage}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    settings = load_settings()
    try:
        return HANDLERS[args.command](settings, args)
    except (CatalogInputError, PlanError, PolicyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except CatalogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
