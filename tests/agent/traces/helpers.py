"""Shared helpers of the trace tests: the recorded conversation, an offline machine, edited trace copies, the CLI
in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.conversation import TurnResult
from agent.traces.schema import ModelOutcome, TraceTurn, TurnInput, TurnOutcome
from policies import Verdict
from tests.agent.helpers import CHAT_MODEL_ENVS, catalog_write_count
from tools.evidence.schema import PolicyRecord
from tools.evidence.store import runs_dir
from tools.settings import ProvenanceSettings

REPO = Path(__file__).resolve().parents[3]
THREAD = "demo-trace"


@dataclass
class Recorded:
    settings: ProvenanceSettings
    trace: Path
    first: TurnResult
    second: TurnResult


def go_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No chat model settings, and any attempt to open the catalog (endpoint + MCP server) fails."""
    for name in CHAT_MODEL_ENVS:
        monkeypatch.delenv(name, raising=False)

    def no_catalog(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an offline replay must not open the catalog")

    monkeypatch.setattr("tools.catalog.handle.open_catalog", no_catalog)


def catalog_state(settings: ProvenanceSettings) -> tuple[int, list[str], list[str]]:
    runs = sorted(p.name for p in runs_dir(settings.home).iterdir())
    traces = sorted(p.name for p in (settings.home / "traces").iterdir())
    return catalog_write_count(settings.lite_db), runs, traces


def edited(trace: Path, target: Path, edit: object) -> Path:
    raw = json.loads(trace.read_text())
    edit(raw)  # type: ignore[operator]
    target.write_text(json.dumps(raw))
    return target


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CHAT_MODEL_ENVS}
    env["PROVENANCE_HOME"] = str(home)
    return env


def cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "agent.cli", *args]
    return subprocess.run(command, cwd=REPO, env=cli_env(home), capture_output=True, text=True, timeout=300)


POLICY = PolicyRecord(name="default", version=2, sha256="0" * 64, path="policies/default-v2.yaml")


def blocked_turn(model: ModelOutcome) -> TraceTurn:
    """A finished turn whose one model is `model` and whose verdict is BLOCK, as the trace and replay tests build."""
    return TraceTurn(
        index=0,
        status="ok",
        started_at="2026-01-01T00:00:00+00:00",
        planner="cli",
        input=TurnInput(kind="ask", question="q"),
        outcome=TurnOutcome(models=[model], verdict=Verdict.BLOCK),
        policy=POLICY,
    )
