"""The `provenance` CLI as a user runs it: exit codes, messages, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from seed.catalog import CONTROL_MODEL_URN, FRAUD_MODEL_URN, POSTGRES_TABLE_URN


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROVENANCE_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_lineage_json(seeded_home: Path) -> None:
    done = _run(seeded_home, "lineage", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    production = [m["urn"] for m in payload["models"] if m["production"]]
    assert production == [FRAUD_MODEL_URN]
    assert CONTROL_MODEL_URN not in [m["urn"] for m in payload["models"]]
    assert payload["mcp_calls"] > 0


def test_unknown_field_exits_2_with_closest_matches(seeded_home: Path) -> None:
    done = _run(seeded_home, "lineage", "--dataset", POSTGRES_TABLE_URN, "--field", "amout")
    assert done.returncode == 2
    assert "Closest matches: amount" in done.stderr
    assert done.stdout == ""


def test_unknown_dataset_exits_2(seeded_home: Path) -> None:
    done = _run(seeded_home, "lineage", "--dataset", POSTGRES_TABLE_URN.replace("postgres", "mysql"), "--field", "a")
    assert done.returncode == 2
    assert "not in the catalog" in done.stderr and "payments.public.transactions" in done.stderr


def test_not_a_dataset_urn_exits_2(seeded_home: Path) -> None:
    done = _run(seeded_home, "lineage", "--dataset", "payments.transactions", "--field", "amount")
    assert done.returncode == 2
    assert "not a dataset URN" in done.stderr
