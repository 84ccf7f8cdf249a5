"""The `provenance` command line. Logs go to stderr; `--json` output goes to stdout."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from threading import Event

from agent.context import AgentContext, CatalogHandle
from agent.conversation import open_session
from agent.nodes.approval import publish_run
from agent.pipeline import EXIT_CODES, AssessmentResult, assess_change
from agent.render import render_result
from agent.state import ApprovalDecision, ApprovalRequest, PublishMode
from policies.engine import PolicyError, load_policy
from seed.seeding import seed_demo
from tools.catalog.connection import open_catalog
from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import CatalogInputError, Discoverer, Discovery
from tools.catalog.render import render_discovery
from tools.catalog.session import CatalogError
from tools.embedded.server import start_embedded_catalog
from tools.evidence.schema import ChangeRequest, PlanRecord
from tools.evidence.store import EvidenceError, list_run_ids, read_evidence
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


def _decision(args: argparse.Namespace) -> ApprovalDecision | None:
    if getattr(args, "approve", False):
        return ApprovalDecision(decision="approve", by=f"cli:{getpass.getuser()}")
    if getattr(args, "reject", False):
        return ApprovalDecision(decision="reject", by=f"cli:{getpass.getuser()}")
    return None


def _ask_on_terminal(request: ApprovalRequest) -> ApprovalDecision:
    print(f"\nApproval needed for run {request.run_id} (verdict {request.verdict}). Approving writes:")
    for write in request.writes:
        print(f"  - {write}")
    answer = input("Publish to DataHub? [y/N] ").strip().lower()
    return ApprovalDecision(decision="approve" if answer in ("y", "yes") else "reject", by=f"tty:{getpass.getuser()}")


async def _converse(settings: ProvenanceSettings, args: argparse.Namespace, question: str | None) -> int:
    from agent.llm import chat_model_from_env

    async with open_session(settings, model=chat_model_from_env()) as session:
        if question is not None:
            mode: PublishMode = "no_publish" if args.no_publish else "ask"
            turn = await session.ask(question, thread_id=args.thread, mode=mode)
        else:
            decision = _decision(args)
            if decision is None:
                raise PlanError("resume needs --approve or --reject")
            turn = await session.decide(args.thread, decision)
        while turn.pending is not None:
            decision = _decision(args)
            if decision is None and sys.stdin.isatty():
                decision = _ask_on_terminal(turn.pending)
            if decision is None:
                print(turn.answer or f"Verdict {turn.pending.verdict}; evidence {turn.pending.report}")
                print(f"Approval pending. Resume with: provenance resume {turn.thread_id} --approve|--reject")
                return EXIT_CODES[str(turn.pending.verdict)]
            turn = await session.decide(turn.thread_id, decision)
        print(turn.answer)
        verdict, failures = turn.values.get("verdict"), turn.values.get("failures") or []
        if verdict and turn.values.get("run_id"):
            return EXIT_CODES[str(verdict)]
        if failures:
            return EXIT_BAD_INPUT if any(f.kind == "input" for f in failures) else EXIT_FAILURE
        return EXIT_OK


def _cmd_ask(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    return asyncio.run(_converse(settings, args, args.question))


def _cmd_resume(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    return asyncio.run(_converse(settings, args, None))


def _cmd_runs(settings: ProvenanceSettings, _args: argparse.Namespace) -> int:
    ids = list_run_ids(settings.home)
    if not ids:
        print(f"No runs under {settings.home / 'runs'} yet.")
    for run_id in ids:
        try:
            ev = read_evidence(settings.home, run_id)
        except EvidenceError as exc:
            print(f"{run_id}  unreadable: {exc}")
            continue
        target = f"{ev.request.dataset_urn.split(',')[1] if ',' in ev.request.dataset_urn else '?'}.{ev.request.field}"
        print(f"{run_id}  {ev.verdict:<10} {ev.request.op:<16} {target:<45} publication: {ev.publication.status}")
    return EXIT_OK


async def _publish(settings: ProvenanceSettings, run_id: str) -> int:
    evidence = read_evidence(settings.home, run_id)
    if evidence.publication.status == "rejected":
        raise PlanError(f"run {run_id} was rejected by {evidence.publication.decided_by}; it will not be published")
    async with CatalogHandle(settings) as handle:
        record = await publish_run(
            AgentContext(settings=settings, catalog=handle), run_id, decided_by=f"cli:{getpass.getuser()}"
        )
    print(f"Publication of {run_id}: {record.status} — {record.message}")
    return EXIT_OK if record.status == "published" else EXIT_FAILURE


def _cmd_publish(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    return asyncio.run(_publish(settings, args.run_id))


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
    ask = commands.add_parser("ask", help="ask a question or propose a change, in plain language")
    ask.add_argument("question", help='e.g. "What happens if payments.transactions.amount is sent in cents?"')
    ask.add_argument("--thread", default=None, help="conversation id (default: a new one)")
    decide = ask.add_mutually_exclusive_group()
    decide.add_argument("--approve", action="store_true", help="approve publication without asking")
    decide.add_argument("--reject", action="store_true", help="reject publication without asking")
    decide.add_argument("--no-publish", action="store_true", help="evidence only; no approval, no catalog writes")
    resume = commands.add_parser("resume", help="answer a pending approval of a conversation")
    resume.add_argument("thread", help="the conversation id printed by `ask`")
    decide = resume.add_mutually_exclusive_group(required=True)
    decide.add_argument("--approve", action="store_true")
    decide.add_argument("--reject", action="store_true")
    commands.add_parser("runs", help="list assessment runs and their publication status")
    publish = commands.add_parser("publish", help="publish (or retry publishing) a run's verdict to DataHub")
    publish.add_argument("run_id")
    return parser


HANDLERS = {
    "ask": _cmd_ask,
    "resume": _cmd_resume,
    "runs": _cmd_runs,
    "publish": _cmd_publish,
    "assess": _cmd_assess,
    "demo": _cmd_demo,
    "seed": _cmd_seed,
    "catalog": _cmd_serve,
    "lineage": _cmd_lineage,
}


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
    except (CatalogInputError, PlanError, PolicyError, EvidenceError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except CatalogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
