"""`provenance catalog serve` reused by other commands: a real `serve` subprocess on a seeded home, then `lineage` and
`assess --no-publish --json` subprocesses that read through it (no endpoint, no stdio MCP server of their own) and
reach the same verdict as a run that starts its own catalog."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from seed.catalog import FRAUD_MODEL_URN, POSTGRES_TABLE_URN, REVIEW_MODEL_URN
from tests.warm_start import CLI_FORKSERVER_ENV
from tools.catalog.serve_state import STATE_FILE

ASSESS = ["assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param", "factor=100"]
NO_SUCH_FIELD = [*ASSESS[:4], "nope", *ASSESS[5:], "--no-publish"]


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROVENANCE_HOME": str(home)}
    env.pop("PROVENANCE_CATALOG_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, env=env, timeout=180
    )


def _wait_for(path: Path, serve: subprocess.Popen[str], timeout: float = 90.0) -> dict[str, object]:
    """The state file once it advertises the assessment service too (it is written first without it)."""
    deadline = time.monotonic() + timeout
    while True:
        assert serve.poll() is None, serve.communicate()[1]
        assert time.monotonic() < deadline, f"no service advertised in {path} after {timeout:g} s"
        try:
            state: dict[str, object] = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):  # not written yet (it is written atomically: never half)
            state = {}
        if state.get("assess_url"):
            return state
        time.sleep(0.1)


@pytest.mark.slow
def test_commands_reuse_a_served_catalog_and_reach_the_same_verdict(seeded_template: Path, tmp_path: Path) -> None:
    served_home, cold_home = tmp_path / "served", tmp_path / "cold"
    for home in (served_home, cold_home):
        shutil.copytree(seeded_template, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    env = {**os.environ, "PROVENANCE_HOME": str(served_home)}
    serve_env = {k: v for k, v in env.items() if k != CLI_FORKSERVER_ENV}  # cold: its state file names its own pid
    serve = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "catalog", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=serve_env,
    )
    with ThreadPoolExecutor(2) as pool:
        cold = pool.submit(_cli, cold_home, *ASSESS, "--no-publish", "--json")  # starts its own catalog meanwhile
        try:
            state = _wait_for(served_home / STATE_FILE, serve)
            assert state["pid"] == serve.pid
            lineage = pool.submit(
                _cli, served_home, "-v", "lineage", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--json"
            )
            reused = _cli(served_home, "-v", *ASSESS, "--no-publish", "--json")
            refused_remotely = _cli(served_home, *NO_SUCH_FIELD)
            found = lineage.result()
        finally:
            serve.send_signal(signal.SIGTERM)
            out, err = serve.communicate(timeout=30)
        started_cold = cold.result()

    assert serve.returncode == 0, err
    assert f"PROVENANCE_CATALOG_URL={state['mcp_url']}" in out
    # the token it prints reads only; the writer token stays in the private state file
    assert f"DATAHUB_GMS_TOKEN={state['reader_token']}  (reads only)" in out and state["gms_token"] not in out
    assert not (served_home / STATE_FILE).exists()  # removed on exit

    assert found.returncode == 0, found.stderr
    payload = json.loads(found.stdout)
    assert [m["urn"] for m in payload["models"] if m["production"]] == [FRAUD_MODEL_URN, REVIEW_MODEL_URN]
    # answered by the service (its catalog open, its libraries loaded), not by a catalog session of the CLI's own
    assert payload["catalog"] == f"the service of this home (`provenance catalog serve`, pid {serve.pid})"
    assert f"lineage answered by `provenance catalog serve` (pid {serve.pid})" in found.stderr

    assert reused.returncode == started_cold.returncode == 20, (reused.stderr, started_cold.stderr)
    summary, baseline = json.loads(reused.stdout), json.loads(started_cold.stdout)
    assert summary["verdict"] == baseline["verdict"] == "BLOCK"
    assert [(m["urn"], m["verdict"]) for m in summary["models"]] == [
        (m["urn"], m["verdict"]) for m in baseline["models"]
    ]
    assert f"assessed by `provenance catalog serve` (pid {serve.pid})" in reused.stderr
    assert reused.stdout.splitlines()[0] == "{" and summary.keys() == baseline.keys()
    assert (served_home / "runs" / summary["run_id"]).is_dir()  # the run is in this home, written by the service
    refused_here = _cli(cold_home, *NO_SUCH_FIELD)
    assert refused_remotely.returncode == refused_here.returncode == 2
    assert refused_remotely.stderr == refused_here.stderr and "nope" in refused_here.stderr
    evidence = json.loads(Path(summary["evidence"]["json"]).read_text())
    assert evidence["catalog"].startswith("served catalog")
    assert json.loads(Path(baseline["evidence"]["json"]).read_text())["catalog"].startswith("embedded")

    # Neither command started a stdio MCP server (its log) nor an endpoint of its own; the served one logged.
    assert not (served_home / "logs" / "mcp-server-datahub.log").exists()
    assert (served_home / "logs" / "mcp-server-datahub-http.log").exists()
    assert (cold_home / "logs" / "mcp-server-datahub.log").exists()


@pytest.mark.slow
def test_an_advertised_service_that_does_not_answer_means_assessing_here(seeded_template: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(seeded_template, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    with socket.socket() as closed:  # a port nobody listens on once this block ends
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    dead = f"http://127.0.0.1:{port}"
    state = {
        "mcp_url": f"{dead}/mcp", "gms_url": dead, "gms_token": "t", "pid": os.getpid(),
        "lite_db": str((home / "catalog.db").resolve()), "assess_url": f"{dead}/provenance/assess",
    }  # fmt: skip
    (home / STATE_FILE).write_text(json.dumps(state))
    ran = _cli(home, *ASSESS, "--no-publish", "--json")
    assert ran.returncode == 20, ran.stderr
    assert "did not answer" in ran.stderr and "assessing in this process instead" in ran.stderr
    assert json.loads(ran.stdout)["verdict"] == "BLOCK"
