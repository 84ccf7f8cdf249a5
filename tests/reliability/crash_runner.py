"""Runs the CLI (or a recovery) in this process, after arranging for it to die at one stage.

    python -m tests.reliability.crash_runner kill STAGE -- ask "question" --thread T --approve
    python -m tests.reliability.crash_runner continue THREAD [THREAD ...] [--approve]

`kill` patches the function that runs at STAGE so that calling it ends the process at once with
`os._exit(137)` (what SIGKILL or the OOM killer leave behind: no cleanup, no finally blocks), then runs
`agent.cli.main(args)`. `continue` opens a session in this fresh process and carries the thread on with
`agent.recovery.continue_thread`, then answers a pending approval like `provenance resume --approve` would; it
prints one JSON line per thread describing its final state. PROVENANCE_HOME comes from the environment.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

KILL_EXIT = 137

# stage -> (module, attribute) whose call ends the process. Each is reached at a different point of the flow.
KILL_POINTS: dict[str, tuple[str, str]] = {
    # discover has finished and been checkpointed; the plan node starts
    "after_discovery": ("agent.planning.planner", "DeterministicPlanner.plan"),
    # inside the experiment subgraph: the staging folder exists, inference has not run
    "during_experiment": ("tools.experiment.measure", "run_experiment"),
    # inside write_evidence: the run folder is half-assembled under its hidden temporary name
    "during_evidence": ("tools.evidence.report", "write_report"),
    # the run folder is complete; the approval node starts
    "after_evidence": ("agent.nodes.approval", "planned_writes"),
    # approved; the status tag is written, the impact document is not
    "during_publication": ("tools.catalog.datahub", "CatalogWriter.save_document"),
    # approved; tag and document are written, the evidence does not record them yet
    "after_publication_write": ("agent.nodes.approval", "refresh_run"),
}


def _die(*_args: Any, **_kwargs: Any) -> Any:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(KILL_EXIT)


def arm(stage: str) -> None:
    module_name, attribute = KILL_POINTS[stage]
    target: Any = importlib.import_module(module_name)
    *owners, name = attribute.split(".")
    for owner in owners:
        target = getattr(target, owner)
    if not callable(getattr(target, name, None)):
        raise SystemExit(f"kill point {module_name}.{attribute} does not exist")
    die: Callable[..., Any] = _die
    setattr(target, name, die)


async def _continue(thread_ids: list[str], approve: bool) -> list[dict[str, Any]]:
    from agent.conversation import open_session
    from agent.recovery import continue_thread, thread_status
    from agent.state import ApprovalDecision
    from tools.settings import load_settings

    results = []
    async with open_session(load_settings()) as session:
        for thread_id in thread_ids:
            before = await thread_status(session, thread_id)
            turn = await continue_thread(session, thread_id)
            if turn.pending is not None and approve:
                turn = await session.decide(thread_id, ApprovalDecision(decision="approve", by="crash-runner"))
            publication = turn.values.get("publication")
            results.append(
                {
                    "thread": thread_id,
                    "status_before": before.state,
                    "next_before": list(before.next_nodes),
                    "run_id": turn.values.get("run_id"),
                    "verdict": str(turn.values["verdict"]) if turn.values.get("verdict") else None,
                    "pending": turn.pending is not None,
                    "publication": publication.status if publication is not None else None,
                    "failures": [f.message for f in turn.values.get("failures") or []],
                }
            )
    return results


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="crash_runner")
    commands = parser.add_subparsers(dest="command", required=True)
    kill = commands.add_parser("kill")
    kill.add_argument("stage", choices=sorted(KILL_POINTS))
    kill.add_argument("cli", nargs=argparse.REMAINDER)
    cont = commands.add_parser("continue")
    cont.add_argument("threads", nargs="+")
    cont.add_argument("--approve", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "kill":
        arm(args.stage)
        from agent.cli import main as cli_main

        cli_args = args.cli[1:] if args.cli[:1] == ["--"] else args.cli
        return cli_main(cli_args)
    for result in asyncio.run(_continue(args.threads, args.approve)):
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    from agent.cli.forkserver import run_forked  # forked from the session's warm server when there is one

    forked = run_forked(list(sys.argv), module="tests.reliability.crash_runner")
    sys.exit(forked if forked is not None else main(sys.argv[1:]))
