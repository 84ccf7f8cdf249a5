"""The `provenance` command line. Logs go to stderr; `--json` output goes to stdout."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from agent.commands.assess import _cmd_assess
from agent.commands.bind import _cmd_bind, add_bind_parser
from agent.commands.catalog import _cmd_demo, _cmd_lineage, _cmd_seed, _cmd_serve
from agent.commands.conversation import _cmd_ask, _cmd_publish, _cmd_resume, _cmd_runs
from agent.commands.traces import _cmd_replay, _cmd_traces
from agent.errors import UsageError
from agent.exit_codes import EXIT_BAD_INPUT, EXIT_FAILURE
from policies.engine import PolicyError
from tools.catalog.conventions import ConventionsError
from tools.catalog.discovery import CatalogInputError
from tools.catalog.session import CatalogError
from tools.evidence.store import EvidenceError
from tools.mutations import ALLOWED_OPERATORS, PlanError
from tools.registry.mlflow_registry import RegistryError
from tools.settings import load_settings

log = logging.getLogger("provenance")
# Errors that mean the request cannot be served as asked (exit 2); anything else unexpected is ours (exit 1).
BAD_INPUT = (
    CatalogInputError,
    PlanError,
    PolicyError,
    ConventionsError,
    EvidenceError,
    RegistryError,
    UsageError,
)


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
    resume = commands.add_parser(
        "resume", help="answer a pending approval, or (with no decision) continue a turn that was interrupted"
    )
    resume.add_argument("thread", help="the conversation id printed by `ask`")
    decide = resume.add_mutually_exclusive_group()
    decide.add_argument("--approve", action="store_true")
    decide.add_argument("--reject", action="store_true")
    commands.add_parser("runs", help="list assessment runs and their publication status")
    publish = commands.add_parser("publish", help="publish (or retry publishing) a run's verdict to DataHub")
    publish.add_argument("run_id")
    traces = commands.add_parser("traces", help="list recorded conversations (date, question, verdict, published?)")
    traces.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    replay = commands.add_parser(
        "replay",
        help="re-run a recorded conversation offline and check its verdicts and metrics reproduce",
        description="Exit 0: reproduced; 1: differences (listed); 2: the trace cannot be read. Never writes to "
        "the catalog; the replay's evidence goes to a temporary home unless --keep is given.",
    )
    replay.add_argument("trace", help="a trace file, or a trace id from `provenance traces`")
    replay.add_argument("--live", action="store_true", help="ask the current catalog (read-only) instead")
    replay.add_argument("--keep", type=Path, default=None, metavar="DIR", help="keep the replay's evidence in DIR")
    replay.add_argument("--json", action="store_true", help="the report as JSON on stdout")
    add_bind_parser(commands)
    return parser


HANDLERS = {
    "ask": _cmd_ask,
    "resume": _cmd_resume,
    "runs": _cmd_runs,
    "publish": _cmd_publish,
    "traces": _cmd_traces,
    "replay": _cmd_replay,
    "assess": _cmd_assess,
    "demo": _cmd_demo,
    "seed": _cmd_seed,
    "catalog": _cmd_serve,
    "lineage": _cmd_lineage,
    "bind": _cmd_bind,
}


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    settings = load_settings()
    try:
        return HANDLERS[args.command](settings, args)
    except BAD_INPUT as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # stdout's reader went away (`| head`): main() handles it, it is not a disk problem
        raise
    except OSError as exc:  # a full disk while writing evidence keeps nothing half-written: resuming is safe
        advice = "; free the space or fix the permissions, then `provenance resume THREAD`"
        print(f"error: {exc}{advice if exc.errno in (errno.ENOSPC, errno.EACCES) else ''}", file=sys.stderr)
        return EXIT_FAILURE
    except CatalogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as exc:  # a bug of ours, not bad input: say so, keep the traceback for the report
        where = _log_internal_error(settings.logs / "cli.log", args.command)
        print(
            f"internal error: {type(exc).__name__}: {exc}. This is a bug in Provenance, not your input; "
            f"the traceback is in {where}",
            file=sys.stderr,
        )
        return EXIT_FAILURE


def _log_internal_error(path: Path, command: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    try:
        log.exception("internal error in `provenance %s`", command)
    finally:
        log.removeHandler(handler)
        handler.close()
    return path


def _stdout_to_devnull() -> None:
    """Point fd 1 at /dev/null so nothing later (the interpreter's final flush) writes to the broken pipe again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # stdout replaced by something without a descriptor
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. When stdout's reader closes early (`provenance assess --json | head -3`), exit quietly:
    no traceback, no "error:" line. The exit code is the command's own when it had already returned (its output
    was still buffered and only the final flush failed: the verdict's 0/10/20/30 stays usable as a CI gate), and
    EXIT_FAILURE (1) when the pipe broke while the command was still printing: its code is then unknown, and 1 is
    never mistaken for a PASS. (Not 141 = 128 + SIGPIPE: the code should say what happened to the command, and the
    evidence is on disk either way.)"""
    code: int | None = None
    try:
        code = _run(argv)
        sys.stdout.flush()  # inside the try: buffered output reaches the pipe here, not at interpreter exit
    except SystemExit:  # argparse's --help / usage errors: flush here too, for the same reason
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_to_devnull()
        raise
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_FAILURE if code is None else code
    return code


if __name__ == "__main__":
    sys.exit(main())
