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
from typing import Any

from agent.conversation import open_session
from agent.errors import AlreadyDecided, DatabaseError, UsageError
from agent.state import ApprovalDecision
from tools.settings import load_settings


def emit(payload: dict[str, Any]) -> None:
    print(json.dumps(payload), flush=True)


async def ask(thread_id: str, question: str) -> None:
    async with open_session(load_settings()) as session:
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
    async with open_session(load_settings()) as session:
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
    command, thread_id, argument = argv
    try:
        asyncio.run(ask(thread_id, argument) if command == "ask" else decide(thread_id, argument))
    except DatabaseError as exc:
        emit({"database_error": str(exc)})
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
