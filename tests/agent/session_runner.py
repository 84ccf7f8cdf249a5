"""One conversation step in a process of its own, as another chat or CLI process would take it.

    python -m tests.agent.session_runner ask THREAD QUESTION
    python -m tests.agent.session_runner decide THREAD approve|reject

Settings come from the environment (PROVENANCE_HOME, PROVENANCE_DATABASE_URL). `ask` prints one JSON line with the
pending approval. `decide` opens its session, prints `{"ready": ...}` with the pending run it sees, then decides and
prints the outcome: `decided` with the publication status, `already_decided` (AlreadyDecided: another process
answered first) or `no_pending` (UsageError). A DatabaseError is printed as `{"database_error": message}`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from agent.cli.forkserver import run_forked

if TYPE_CHECKING:
    from agent.conversation import Session


def emit(payload: dict[str, Any]) -> None:
    print(json.dumps(payload), flush=True)


def _session() -> AbstractAsyncContextManager[Session]:
    # imported here: a launch forked from the session's warm server (tests/runner_forkserver.py) imports nothing heavy
    from agent.conversation import open_session
    from tools.settings import load_settings

    return open_session(load_settings())


async def ask(thread_id: str, question: str) -> None:
    async with _session() as session:
        turn = await session.ask(question, thread_id=thread_id)
        pending = turn.pending
        emit(
            {
                "run_id": pending.run_id if pending else turn.state.run_id,
                "pending": pending is not None,
                "verdict": str(pending.verdict) if pending else None,
            }
        )


async def decide(thread_id: str, answer: str) -> None:
    from agent.errors import AlreadyDecided, UsageError
    from agent.state import ApprovalDecision

    async with _session() as session:
        pending = await session.pending(thread_id)
        emit({"ready": pending.run_id if pending else None})
        decision = ApprovalDecision(decision="approve" if answer == "approve" else "reject", by="runner")
        try:
            turn = await session.decide(thread_id, decision)
        except AlreadyDecided as exc:
            emit({"outcome": "already_decided", "message": str(exc)})
            return
        except UsageError as exc:
            emit({"outcome": "no_pending", "message": str(exc)})
            return
        publication = turn.state.publication
        emit({"outcome": "decided", "publication": publication.status if publication else None})


def main(argv: list[str]) -> int:
    from agent.errors import DatabaseError

    command, thread_id, argument = argv
    try:
        asyncio.run(ask(thread_id, argument) if command == "ask" else decide(thread_id, argument))
    except DatabaseError as exc:
        emit({"database_error": str(exc)})
        return 3
    return 0


if __name__ == "__main__":
    forked = run_forked(list(sys.argv), module="tests.agent.session_runner")
    sys.exit(forked if forked is not None else main(sys.argv[1:]))
