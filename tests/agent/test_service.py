"""The assessment service of `provenance catalog serve`, in process: its answers, its refusals, its token."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agent.service import assessment_service
from seed.catalog import POSTGRES_TABLE_URN
from tools.settings import ProvenanceSettings

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
