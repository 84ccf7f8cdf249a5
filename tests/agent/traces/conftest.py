"""The demo conversation (ask + approve), recorded once for every trace test: recording and replay alike."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from agent.conversation import TurnResult, open_session
from agent.state import ApprovalDecision
from agent.traces.store import trace_path
from tests.agent.helpers import DEMO_QUESTION
from tests.agent.traces.helpers import THREAD, Recorded, go_offline
from tools.settings import ProvenanceSettings


def _copy_home(template: Path, target: Path) -> Path:
    shutil.copytree(template, target, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    return target


@pytest.fixture(scope="package")
def recorded(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The demo conversation, recorded through `Session` exactly as the CLI and the chat run it."""
    home = _copy_home(seeded_template, tmp_path_factory.mktemp("traces") / "home")
    settings = ProvenanceSettings(provenance_home=home)

    async def go() -> tuple[TurnResult, TurnResult]:
        async with open_session(settings) as session:
            first = await session.ask(DEMO_QUESTION, thread_id=THREAD)
            second = await session.decide(THREAD, ApprovalDecision(decision="approve", by="test"))
            return first, second

    first, second = asyncio.run(go())
    return Recorded(settings, trace_path(home, THREAD), first, second)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    go_offline(monkeypatch)
