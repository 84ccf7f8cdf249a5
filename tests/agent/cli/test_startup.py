"""`provenance --help` and refusals that need no catalog stay light: the parser and the pre-checks import none of
the heavy libraries (checked on a real `python -X importtime -m agent.cli` run, the console script's path)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.cli.parser import OPERATOR_NAMES, OPERATOR_SIGNATURES
from seed.catalog import POSTGRES_TABLE_URN
from tools.mutations import ALLOWED_OPERATORS

HEAVY = ("pandas", "sklearn", "langgraph", "mcp", "langchain_core", "datahub", "numpy", "mcp_server_datahub")


def _imported(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = {**os.environ, "PROVENANCE_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agent.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "agent.cli.parser" in modules, done.stderr[-2000:]
    return done, modules


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_the_parsers_operator_names_are_the_allowlist() -> None:
    assert OPERATOR_NAMES == tuple(ALLOWED_OPERATORS)
    assert OPERATOR_SIGNATURES == tuple(text.split(":")[0] for text in ALLOWED_OPERATORS.values())


def test_help_imports_no_heavy_library(tmp_path: Path) -> None:
    done, modules = _imported(tmp_path, "--help")
    assert done.returncode == 0
    assert "scale" in done.stdout or "assess" in done.stdout
    assert _heavy(modules) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--dataset", "nope", "--field", "x", "--op", "scale", "--param", "factor=2"], "'nope' is not a dataset URN"),
        (["--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "multiply"], "unknown mutation operator"),
        (["--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param", "factor"], "key=value"),
        (["--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--fraction", "2"], "(0, 1]"),
    ],
    ids=["not-a-urn", "unknown-op", "malformed-param", "fraction"],
)
def test_a_refusal_needing_no_catalog_imports_no_heavy_library(tmp_path: Path, args: list[str], needle: str) -> None:
    done, modules = _imported(tmp_path, "assess", *args, "--no-publish")
    assert done.returncode == 2
    assert needle in done.stderr
    assert _heavy(modules) == []
    assert not (tmp_path / "home").exists()  # nothing written either


def test_lineage_refusal_imports_no_heavy_library(tmp_path: Path) -> None:
    done, modules = _imported(tmp_path, "lineage", "--dataset", "payments.transactions", "--field", "a")
    assert done.returncode == 2 and "not a dataset URN" in done.stderr
    assert _heavy(modules) == []


def test_an_operator_parameter_out_of_bounds_is_refused_before_the_catalogs_libraries(tmp_path: Path) -> None:
    """`--param factor=abc` was refused after the command's modules loaded (seconds; once, after the catalog opened):
    the allowlist checks it right after parsing, loading only the allowlist itself (numpy; pandas only where a value
    is mutated)."""
    args = ["--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param", "factor=abc"]
    done, modules = _imported(tmp_path, "assess", *args, "--no-publish")
    assert done.returncode == 2 and "parameter 'factor'" in done.stderr, done.stderr
    assert [m for m in _heavy(modules) if m.split(".")[0] != "numpy"] == []


def test_runs_reads_evidence_without_the_graph_the_catalog_or_pandas(tmp_path: Path) -> None:
    """`provenance runs` took ~4 s importing the conversation's modules to read a few JSON files."""
    done, modules = _imported(tmp_path, "runs")
    assert done.returncode == 0 and "No runs under" in done.stdout, done.stderr
    assert [m for m in _heavy(modules) if m.split(".")[0] != "numpy"] == []
    assert not (tmp_path / "home").exists()
