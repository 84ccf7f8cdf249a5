"""Conversation commands: ask, resume a pending approval, (re)publish a run."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import shlex
import sys
import uuid

from agent.cli.exit_codes import EXIT_BAD_INPUT, EXIT_CODES, EXIT_FAILURE, EXIT_OK
from agent.cli.progress import terminal_progress
from agent.cli.terminal import client_terminal, decided_on_terminal, on_terminal, shown_lines
from agent.context import AgentContext
from agent.conversation import open_session
from agent.nodes.approval import publish_run
from agent.nodes.respond import measured_lines
from agent.schemas import Intent
from agent.state import AgentState, ApprovalDecision, ApprovalRequest, PublishMode
from tools.catalog.handle import CatalogHandle
from tools.evidence.schema import Evidence
from tools.evidence.store import read_evidence
from tools.mutations import PlanError
from tools.settings import ProvenanceSettings


def understood(state: AgentState) -> bool:
    """The question was mapped to something Provenance does (asking for help counts)."""
    route = state.route
    if route is None:
        return True  # the turn failed before routing: its failure decides the exit code
    return route.intent == Intent.HELP or (route.intent != Intent.UNKNOWN and bool(route.subject))


def _decision(args: argparse.Namespace) -> ApprovalDecision | None:
    where = "tty" if decided_on_terminal() else "cli"  # a warm service's client answered its terminal's question
    if getattr(args, "approve", False):
        return ApprovalDecision(decision="approve", by=f"{where}:{getpass.getuser()}")
    if getattr(args, "reject", False):
        return ApprovalDecision(decision="reject", by=f"{where}:{getpass.getuser()}")
    return None


def approval_text(request: ApprovalRequest) -> list[str]:
    """What a person approves, on a terminal: the verdict, the change tested (the plan in one sentence, so a wrong
    plan is caught before it is published) and every write."""
    lines = [f"Approval needed for run {request.run_id} (verdict {request.verdict})."]
    if request.change_tested:
        lines.append(f"Change tested: {request.change_tested}")
    return [*lines, "Approving writes:", *(f"  - {write}" for write in request.writes)]


def why(state: AgentState) -> list[str]:
    """What a person needs before deciding: the verdict, each model's reason, each measured model's numbers."""
    reasons = [f"  - {reason}" for reason in state.verdict_reasons]
    return [f"Verdict: {state.verdict}", *reasons, *(f"  {line}" for line in measured_lines(state))]


PUBLISH_QUESTION = "Publish to DataHub? [y/N] "


def _ask_on_terminal(request: ApprovalRequest, state: AgentState, thread_id: str) -> ApprovalDecision | None:
    """The person's decision; None when the person is at a warm service's client, which asks (agent/cli/forward.py)."""
    print(*why(state), "", *approval_text(request), sep="\n")
    client = client_terminal()
    if client is not None:  # the client asks, and resumes this thread with the answer
        client.hand_over(PUBLISH_QUESTION, ["resume", thread_id], frozenset(line.strip() for line in why(state)))
        return None
    answer = input(PUBLISH_QUESTION).strip().lower()
    return ApprovalDecision(decision="approve" if answer in ("y", "yes") else "reject", by=f"tty:{getpass.getuser()}")


async def _converse(settings: ProvenanceSettings, args: argparse.Namespace, question: str | None) -> int:
    from agent.llm import chat_model_from_env
    from tools.catalog.presence import require_readable_catalog

    model = chat_model_from_env()
    require_readable_catalog(settings)  # before the session creates checkpoints and traces in a wrong home
    if question is not None and args.thread is None:
        # Named before the turn starts: if the disk fills mid-turn, the error can say which thread to resume.
        args.thread = f"cli-{uuid.uuid4().hex[:12]}"
    async with open_session(settings, model=model) as session:
        if question is not None:
            mode: PublishMode = "no_publish" if args.no_publish else "ask"
            turn = await session.ask(question, thread_id=args.thread, mode=mode, on_update=terminal_progress())
        else:
            decision = _decision(args)
            if decision is None or await session.pending(args.thread) is None:
                from agent.recovery import continue_thread, thread_status

                status = await thread_status(session, args.thread)
                if status.state == "pending_approval":
                    raise PlanError(f"thread {args.thread} waits for an approval decision: pass --approve or --reject")
                if status.state != "interrupted":
                    raise PlanError(
                        f"thread {args.thread} has no pending approval and nothing to continue: {status.message}"
                    )
                turn = await continue_thread(session, args.thread)
            else:
                turn = await session.decide(args.thread, decision)
        shown: set[str] = set(shown_lines())  # lines the approval prompt printed, not printed again with the answer
        while turn.pending is not None:
            # a decision typed at a client's terminal answered the first question only: a later one is asked too
            decision = None if decided_on_terminal() else _decision(args)
            if decision is None and on_terminal():
                decision = _ask_on_terminal(turn.pending, turn.state, turn.thread_id)
                shown |= {line.strip() for line in why(turn.state)}
                if decision is None:  # handed to the client, which asks: the thread waits at its approval
                    return EXIT_CODES[str(turn.pending.verdict)]
            if decision is None:  # off a terminal: the same reasons a terminal shows, then how to decide
                print(*why(turn.state), f"Evidence: {turn.pending.report}", sep="\n")
                if turn.pending.change_tested:
                    print(f"Change tested: {turn.pending.change_tested}")
                print(f"Approval pending. Resume with: provenance resume {turn.thread_id} --approve|--reject")
                return EXIT_CODES[str(turn.pending.verdict)]
            turn = await session.decide(turn.thread_id, decision)
        print("\n".join(line for line in turn.answer.splitlines() if not line.strip() or line.strip() not in shown))
        offered = [s for failure in turn.state.failures for s in failure.suggestions]
        if offered:  # ready to paste: the same thread, so the evidence records the choice (PlanRecord.confirmed_from)
            print("To run one of them:")
            print("\n".join(f"  provenance ask --thread {turn.thread_id} {shlex.quote(s)}" for s in offered))
        if question is not None and not understood(turn.state):
            print(
                "error: the question was not read as a catalog question or a change to test; rephrase it as one "
                'of the above, e.g. "What happens if payments.transactions.amount is sent in cents?"',
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT  # a script must not read this as success
        verdict, failures = turn.state.verdict, turn.state.failures
        if verdict and turn.state.run_id:
            return EXIT_CODES[str(verdict)]
        if failures:
            return EXIT_BAD_INPUT if any(f.kind == "input" for f in failures) else EXIT_FAILURE
        return EXIT_OK


def _cmd_ask(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    return asyncio.run(_converse(settings, args, args.question))


def _cmd_resume(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    return asyncio.run(_converse(settings, args, None))


def _approved_here(evidence: Evidence, yes: bool) -> str | None:
    """Who approved publishing the run: `--yes`, or a person answering y on this terminal; None when declined.
    Publishing is the catalog write the approval gate guards, so a run made with --no-publish is asked too."""
    user = getpass.getuser()
    if yes:
        return f"cli --yes:{user}"
    if not sys.stdin.isatty():
        raise PlanError(
            f"publishing run {evidence.run_id} writes to the catalog and needs an approval: run it on a terminal "
            "to be asked, or pass --yes"
        )
    print(
        f"Run {evidence.run_id}: verdict {evidence.verdict}", *(f"  - {r}" for r in evidence.verdict_reasons), sep="\n"
    )
    answer = input(f"Publish the verdict {evidence.verdict} to DataHub? [y/N] ").strip().lower()
    return f"tty:{user}" if answer in ("y", "yes") else None


async def _publish(settings: ProvenanceSettings, run_id: str, yes: bool) -> int:
    evidence = read_evidence(settings.home, run_id)
    if evidence.publication.status == "rejected":
        raise PlanError(f"run {run_id} was rejected by {evidence.publication.decided_by}; it will not be published")
    decided_by = _approved_here(evidence, yes)
    if decided_by is None:
        print(f"Not published: run {run_id} is unchanged and nothing was written to the catalog.")
        return EXIT_OK
    async with CatalogHandle(settings) as handle:
        record = await publish_run(AgentContext(settings=settings, catalog=handle), run_id, decided_by=decided_by)
    print(f"Publication of {run_id}: {record.status} — {record.message}")
    return EXIT_OK if record.status == "published" else EXIT_FAILURE


def _cmd_publish(settings: ProvenanceSettings, args: argparse.Namespace) -> int:
    return asyncio.run(_publish(settings, args.run_id, args.yes))
