"""Durability across processes: process A stops at the approval interrupt and exits; process B answers it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.helpers import DEMO_QUESTION, catalog_write_count, documents, model_tags


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROVENANCE_HOME": str(home)}
    env.pop("GOOGLE_API_KEY", None)
    env.pop("GEMINI_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )


@pytest.mark.parametrize("decision", ["--approve", "--reject"])
def test_pending_approval_survives_the_process(seeded_home: Path, decision: str) -> None:
    db = seeded_home / "catalog.db"
    before = catalog_write_count(db)
    first = _cli(seeded_home, "ask", DEMO_QUESTION, "--thread", "durable-1")
    assert first.returncode == 20, first.stderr  # BLOCK, pending
    assert "Approval pending. Resume with: provenance resume durable-1" in first.stdout
    assert catalog_write_count(db) == before

    second = _cli(seeded_home, "resume", "durable-1", decision)
    assert second.returncode == 20, second.stderr
    if decision == "--approve":
        assert model_tags(db) == ["urn:li:tag:provenance:BLOCK"]
        assert len(documents(db)) == 1
        assert "Publication: published" in second.stdout
    else:
        assert catalog_write_count(db) == before
        assert "Publication: rejected" in second.stdout

    again = _cli(seeded_home, "resume", "durable-1", "--approve")
    assert again.returncode == 2 and "no pending approval" in again.stderr
