"""The `provenance` command line. Logs go to stderr; `--json` output goes to stdout."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from collections.abc import Sequence
from threading import Event

from seed.seeding import seed_demo
from tools.catalog.connection import open_catalog
from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import CatalogInputError, Discoverer, Discovery
from tools.catalog.render import render_discovery
from tools.catalog.session import CatalogError
from tools.embedded.server import start_embedded_catalog
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
    return parser


HANDLERS = {"demo": _cmd_demo, "seed": _cmd_seed, "catalog": _cmd_serve, "lineage": _cmd_lineage}


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
    except CatalogInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except CatalogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
