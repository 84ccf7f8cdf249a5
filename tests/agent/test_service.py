"""The assessment service of `provenance catalog serve`, in process: its answers, its refusals, its token."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agent.checking import check_result
from agent.context import AgentContext
from agent.service import assessment_service
from policies import Verdict, load_policy
from seed.catalog import POSTGRES_TABLE_URN
from tools.changes.schema import load_change_set
from tools.runtime.executor import ProcessExecutor, shared_executor
from tools.settings import ProvenanceSettings

REPO = Path(__file__).resolve().parents[2]

REQUEST = {"dataset": POSTGRES_TABLE_URN, "field": "amount", "op": "scale", "params": {"factor": 100}}


def post(url: str, token: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.slow
def test_the_service_assesses_refuses_and_checks_its_token(seeded_home: Path) -> None:
    settings = ProvenanceSettings(provenance_home=seeded_home)
    with assessment_service(settings, "secret") as service:
        status, reply = post(service.url, "secret", json.dumps(REQUEST).encode())
        assert status == 200 and reply["verdict"] == "BLOCK"
        assert reply["summary"]["verdict"] == "BLOCK" and "fraud_detector" in reply["text"]
        assert (seeded_home / "runs" / reply["summary"]["run_id"] / "evidence.json").is_file()

        assert post(service.url, "wrong", json.dumps(REQUEST).encode())[0] == 401
        status, refused = post(service.url, "secret", json.dumps({**REQUEST, "op": "explode"}).encode())
        assert status == 400 and refused["kind"] == "bad_input" and "explode" in refused["error"]
        status, malformed = post(service.url, "secret", b"{not json")
        assert status == 400 and malformed["kind"] == "bad_input"
        status, unknown = post(service.url, "secret", json.dumps({**REQUEST, "extra": 1}).encode())
        assert status == 400 and "extra" in unknown["error"]


def _worker_pids(executor: ProcessExecutor) -> set[int]:
    pool = executor._pool  # noqa: SLF001 - which processes the pool holds is what this test is about
    return set((pool._processes or {}) if pool is not None else {})  # noqa: SLF001


@pytest.mark.slow
def test_commands_the_service_runs_use_its_warm_worker_processes_and_leave_them_running(seeded_home: Path) -> None:
    """A served `check` builds its own context, as a CLI run does; it must run its models in the service's workers
    (started before the first request), not start a pool of its own, and closing its context must not stop them."""
    settings = ProvenanceSettings(provenance_home=seeded_home)
    changes = REPO / "examples" / "CHANGES.yml"
    with assessment_service(settings, "secret"):
        shared = shared_executor()
        assert isinstance(shared, ProcessExecutor)
        workers = _worker_pids(shared)
        assert len(workers) == shared.workers  # all started while the service started
        context = AgentContext(settings=settings)
        assert context.jobs is shared and not context.owns_executor
        result = asyncio.run(check_result(settings, changes, load_change_set(changes), load_policy(None), None))
        assert result.verdict == Verdict.BLOCK
        asyncio.run(context.close_jobs())
        assert _worker_pids(shared) == workers
    assert shared_executor() is None
    assert AgentContext(settings=settings).owns_executor  # after the service, contexts make their own again
