"""The catalog has one face per run: an assessment builds one Discoverer (the MLflow registry loaded once per
handle), and its nodes share its answers, so no catalog call is made twice in one assessment."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest

from agent.conversation import open_session
from agent.traces.store import read_trace, trace_path
from tests.agent.helpers import DEMO_QUESTION
from tools.catalog import lineage_walk
from tools.catalog.mlflow_live import LiveRegistry
from tools.settings import ProvenanceSettings


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    built = lineage_walk.Discoverer.__init__
    loaded = LiveRegistry.from_environment.__func__  # type: ignore[attr-defined]

    def build(self: lineage_walk.Discoverer, *args: Any, **kwargs: Any) -> None:
        counts["discoverers"] += 1
        built(self, *args, **kwargs)

    def load(cls: type[LiveRegistry]) -> LiveRegistry | None:
        counts["registry loads"] += 1
        return loaded(cls)  # type: ignore[no-any-return]

    monkeypatch.setattr(lineage_walk.Discoverer, "__init__", build)
    monkeypatch.setattr(LiveRegistry, "from_environment", classmethod(load))
    return counts


def test_an_assessment_builds_one_discoverer_and_repeats_no_call(
    settings: ProvenanceSettings, counted: Counter[str]
) -> None:
    async def go() -> list[tuple[str, str]]:
        async with open_session(settings) as session:
            turn = await session.ask(DEMO_QUESTION, thread_id="t", mode="no_publish")
            assert turn.state.run_id is not None, turn.answer
        [recorded] = read_trace(trace_path(settings.home, "t")).turns
        return [(c.tool, json.dumps(c.arguments, sort_keys=True)) for c in recorded.catalog_calls]

    calls = asyncio.run(go())
    assert counted == {"discoverers": 1, "registry loads": 1}
    repeated = [call for call, n in Counter(calls).items() if n > 1]
    assert calls and not repeated, repeated
