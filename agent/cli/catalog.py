"""Catalog commands: seed, serve the embedded catalog, lineage, and the demo walkthrough."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import os
import signal
import sys
from threading import Event

from agent.cli.exit_codes import EXIT_CODES, EXIT_FAILURE, EXIT_OK
from agent.cli.warm import start_file
from agent.errors import UsageError
from tools.catalog.connection import open_catalog
from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import Discovery
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.render import render_discovery
from tools.catalog.resolve import check_dataset_urn
from tools.catalog.serve_state import live_state, state_path
from tools.catalog.served import advertise, serve_catalog
from tools.catalog.service_stamp import service_stamp
from tools.catalog.session import CatalogError
from tools.json_http import Activity
from tools.settings import ProvenanceSettings


def _cmd_seed(settings: ProvenanceSettings, _args: argparse.Namespace) -> int:
    from seed.seeding import seed_demo  # the commands' heavy imports (scikit-learn, the graph) only where needed

    result = seed_demo(settings)
    print(f"Seeded {result.mcps} aspects into the {result.catalog} in {result.seconds:.1f} s")
    for model in result.artifacts.models.values():
        digest = model.artifact_sha256[:12]
        quality = f"eval AUC {model.eval_auc:.3f}" if model.eval_auc is not None else f"eval MAE {model.eval_mae:.3f}"
        print(f"  {model.name}: {model.artifact_path} (sha256 {digest}…, {quality})")
    print(f"  evaluation data: {result.artifacts.eval_data_path}, {result.artifacts.review_eval_path}")
    return EXIT_OK


def _cmd_catalog(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    return _cmd_ingest(settings, args) if args.catalog_command == "ingest" else _cmd_serve(settings, args)


def _cmd_ingest(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    from tools.catalog.ingest import RecipeRun, ingest

    def report(run: RecipeRun) -> None:
        state = "written" if run.ok else "FAILED"
        print(f"{run.recipe} ({run.source}): {state}, {run.records_written} records in {run.seconds:.1f} s", flush=True)
        for line in run.failures[:SHOWN]:
            print(f"  failure: {line}", flush=True)
        for line in run.warnings[:SHOWN]:
            print(f"  warning: {line}", flush=True)
        hidden = max(0, len(run.failures) - SHOWN) + max(0, len(run.warnings) - SHOWN)
        if hidden:
            print(f"  … and {hidden} more (run `datahub ingest -c {run.recipe}` for the full report)", flush=True)

    where, runs = ingest(settings, args.recipes, report)
    skipped = args.recipes[len(runs) :]
    if runs and not runs[-1].ok:
        rest = f"; not run: {', '.join(map(str, skipped))}" if skipped else ""
        print(
            f"error: {runs[-1].recipe} failed{rest}. Fix it and run the recipes again (ingestion is idempotent)",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    print(f"Catalog: {where}")
    return EXIT_OK


SHOWN = 5


def _serve_token(args: argparse.Namespace) -> str | None:
    """The writer token: --token-file (never on a command line other users see in `ps`), else --token, else a
    random one."""
    if args.token_file is None:
        return str(args.token) if args.token else None
    try:
        token = str(args.token_file.read_text()).strip()
    except OSError as exc:
        raise UsageError(f"--token-file {args.token_file}: {exc.strerror}") from exc
    if not token:
        raise UsageError(f"--token-file {args.token_file} is empty; write the token in it")
    return token


def _cmd_serve(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    stop = Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    background = getattr(args, "background", False)
    if background:
        os.nice(10)  # the commands the user is waiting for go first
        if live_state(settings, logging.DEBUG) is not None:  # another start won the race
            start_file(settings).unlink(missing_ok=True)
            return EXIT_OK
    from agent.cli.served import CommandRunner
    from agent.service import assessment_service  # the graph and scikit-learn: imported once, here

    # Commands run for clients in their working directories (agent/cli/served.py): a relative home or catalog
    # file must keep meaning this one (PROVENANCE_HOME is not in the service's stamp; a relative PROVENANCE_LITE_DB
    # resolves in the client's directory, as the client resolved it to find this service).
    settings = settings.model_copy(update={"provenance_home": settings.home, "provenance_lite_db": settings.lite_db})
    os.environ["PROVENANCE_HOME"] = str(settings.home)

    with (
        serve_catalog(settings, port=args.port, token=_serve_token(args), mcp_port=args.mcp_port) as served,
        assessment_service(settings, served.gms_token, CommandRunner().run_json) as service,
    ):
        advertised = dataclasses.replace(served, assess_url=service.url)
        if background:
            stamp, idle = service_stamp(settings.home), settings.provenance_service_idle
            advertised = dataclasses.replace(advertised, stamp=stamp, idle_seconds=idle)
        advertise(settings, advertised)
        if background:
            start_file(settings).unlink(missing_ok=True)
            print(
                f"warm service for {settings.home}: exits after {settings.provenance_service_idle} s idle", flush=True
            )
            while not stop.wait(1.0):
                if Activity.idle_seconds() > settings.provenance_service_idle:
                    print("idle: exiting", flush=True)
                    break
            return EXIT_OK
        print(f"Embedded DataHub serving {settings.lite_db}", flush=True)
        print(
            f"  DATAHUB_GMS_URL={served.gms_url}\n  DATAHUB_GMS_TOKEN={served.reader_token}  (reads only)", flush=True
        )
        print(f"  writes (ingest, publish) use the writer token in {state_path(settings)} (yours only)", flush=True)
        print(f"  PROVENANCE_CATALOG_URL={served.mcp_url}  (its MCP server, read-only, over HTTP)", flush=True)
        print(f"  assessments: {service.url}  (`provenance assess` sends them here)", flush=True)
        print(f"Commands with PROVENANCE_HOME={settings.home} reuse it ({state_path(settings)}).", flush=True)
        print("Stop with Ctrl-C.", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return EXIT_OK


async def discover(settings: ProvenanceSettings, dataset: str, field: str) -> tuple[Discovery, float, str]:
    async with open_catalog(settings) as catalog:
        found = await Discoverer(CatalogReader(catalog.session)).discover(dataset, field)
        return found, catalog.startup_seconds, catalog.description


async def feature_subjects(settings: ProvenanceSettings, feature: str) -> list[tuple[str, str]]:
    """The (dataset, column) pairs a `--feature` subject reads (tools/catalog/feature_subject.py)."""
    async with open_catalog(settings) as catalog:
        subjects = await Discoverer(CatalogReader(catalog.session)).resolve_features(feature)
    for subject in subjects:
        print(f"{subject.feature_urn} reads {subject.dataset_urn} {subject.column} ({subject.how})", file=sys.stderr)
    return list(dict.fromkeys((s.dataset_urn, s.column) for s in subjects))


def _cmd_lineage(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    if args.feature is not None:
        pairs = asyncio.run(feature_subjects(settings, args.feature))
        for dataset, field in pairs:
            _lineage(settings, argparse.Namespace(**{**vars(args), "dataset": dataset, "field": field}))
        return EXIT_OK
    return _lineage(settings, args)


def _lineage(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    check_dataset_urn(args.dataset)
    found, startup, catalog = asyncio.run(discover(settings, args.dataset, args.field))
    if args.json:
        print(
            json.dumps(
                {
                    **found.model_dump(mode="json", exclude={"dataset": {"raw"}}),
                    "catalog_startup_seconds": round(startup, 3),
                    "catalog": catalog,
                },
                indent=2,
            )
        )
    else:
        print(render_discovery(found))
        print(f"catalog: {catalog}; opened in {startup:.2f} s")
    return EXIT_OK


def _cmd_demo(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    from seed.catalog import FRAUD_MODEL_URN, KAFKA_TOPIC_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN

    if getattr(args, "diff", False):
        return _demo_diff(settings, args)

    print("== 1. Seed the demo catalog (DataHub Lite behind the embedded endpoint) and the demo models", flush=True)
    _cmd_seed(settings, args)
    for step, dataset in (("2", POSTGRES_TABLE_URN), ("3", KAFKA_TOPIC_URN)):
        print(f"\n== {step}. Which models depend on {dataset} amount?", flush=True)
        found, _startup, _catalog = asyncio.run(discover(settings, dataset, "amount"))
        print(render_discovery(found))
    print(f"\n== 4. Ask: {DEMO_QUESTION}", flush=True)
    print("   (the demo approves publication itself; `provenance ask` asks you on a terminal)", flush=True)
    code = asyncio.run(_demo_conversation(settings))
    print("\n== 5. What the catalog now says about the two models (a binary classifier and a regressor)", flush=True)
    asyncio.run(_demo_check(settings, [FRAUD_MODEL_URN, REVIEW_MODEL_URN]))
    print(f"\nDone. Runs: {settings.home / 'runs'}  |  catalog: {settings.lite_db}", flush=True)
    return EXIT_OK if code == EXIT_CODES["BLOCK"] else EXIT_FAILURE


def _demo_diff(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    from agent.cli.diff import _cmd_diff
    from seed.catalog import POSTGRES_TABLE_URN
    from seed.diff_warehouse import HEAD_SCHEMA, PULL_REQUEST_SQL, build_demo_warehouse

    print("== 1. Seed the demo catalog and models", flush=True)
    _cmd_seed(settings, args)
    print(
        "\n== 2. Build the warehouse: public.transactions (today) and pr_fx.transactions (the pull request)", flush=True
    )
    warehouse = build_demo_warehouse(settings.home / "demo")
    print(f"   {warehouse}\n   the pull request builds:{PULL_REQUEST_SQL.rstrip()}", flush=True)
    command = (
        f"provenance diff --dataset '{POSTGRES_TABLE_URN}' --warehouse duckdb:///{warehouse} "
        f"--head-schema {HEAD_SCHEMA}"
    )
    print(f"\n== 3. {command}\n", flush=True)
    diff_args = argparse.Namespace(
        dataset=[POSTGRES_TABLE_URN], warehouse=f"duckdb:///{warehouse}", base_schema=None, head_schema=HEAD_SCHEMA,
        base_manifest=None, head_manifest=None, relation=[], key=None, rows=100_000, seed=0, policy=None,
        json=False, markdown=None, changes=None,
    )  # fmt: skip
    code = _cmd_diff(settings, diff_args)
    return EXIT_OK if code == EXIT_CODES["BLOCK"] else EXIT_FAILURE


DEMO_QUESTION = "What happens if payments.transactions.amount is sent in cents instead of dollars?"


async def _demo_conversation(settings: ProvenanceSettings) -> int:
    from agent.conversation import open_session
    from agent.llm import chat_model_from_env
    from agent.state import ApprovalDecision

    async with open_session(settings, model=chat_model_from_env()) as session:
        turn = await session.ask(DEMO_QUESTION)
        if turn.pending is None:
            print(turn.answer)
            return EXIT_FAILURE
        print(f"Approval requested for run {turn.pending.run_id} (verdict {turn.pending.verdict}).")
        if turn.pending.change_tested:
            print(f"Change tested: {turn.pending.change_tested}")
        print("Approving writes:")
        for write in turn.pending.writes:
            print(f"  - {write}")
        turn = await session.decide(turn.thread_id, ApprovalDecision(decision="approve", by="demo"))
        print(turn.answer)
        catalog = session.context.handle.opened
        if catalog is not None:
            print(f"MCP calls this conversation: {len(catalog.session.calls)}")
        return EXIT_CODES[str(turn.state.verdict)]


async def _demo_check(settings: ProvenanceSettings, model_urns: list[str]) -> None:
    from tools.catalog.handle import CatalogHandle

    async with CatalogHandle(settings) as handle:
        reader = await handle.reader()
        entities = [(urn, await reader.get_entity(urn)) for urn in model_urns]
    for urn, entity in entities:
        if entity is None:
            raise CatalogError(f"{urn} vanished from the catalog")
        print(f"{entity.name} tags: {', '.join(entity.tags) or 'none'}")
        for doc in entity.raw.get("relatedDocuments", {}).get("documents", []):
            print(f"  linked document: {(doc.get('info') or {}).get('title')} ({doc['urn']})")
