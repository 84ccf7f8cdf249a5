"""The `provenance` CLI as a user runs it: exit codes, messages, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli import main
from seed.catalog import CONTROL_MODEL_URN, FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROVENANCE_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.slow
def test_lineage_json(seeded_home: Path) -> None:
    done = _run(seeded_home, "lineage", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    production = [m["urn"] for m in payload["models"] if m["production"]]
    assert production == [FRAUD_MODEL_URN, REVIEW_MODEL_URN]
    assert CONTROL_MODEL_URN not in [m["urn"] for m in payload["models"]]
    assert payload["mcp_calls"] > 0


# Refusals in-process: a subprocess would only add the start-up cost to a string check.


def _refused(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    monkeypatch.setenv("PROVENANCE_HOME", str(home))
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    return err


def test_unknown_field_exits_2_with_closest_matches(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(seeded_home, monkeypatch, capsys, "lineage", "--dataset", POSTGRES_TABLE_URN, "--field", "amout")
    assert "Closest matches: amount" in err


def test_unknown_dataset_exits_2(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unknown = POSTGRES_TABLE_URN.replace("postgres", "mysql")
    err = _refused(seeded_home, monkeypatch, capsys, "lineage", "--dataset", unknown, "--field", "a")
    assert "not in the catalog" in err and "payments.public.transactions" in err


def test_not_a_dataset_urn_exits_2(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(seeded_home, monkeypatch, capsys, "lineage", "--dataset", "payments.transactions", "--field", "a")
    assert "not a dataset URN" in err
