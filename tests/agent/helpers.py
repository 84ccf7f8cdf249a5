"""Shared helpers for agent tests: read the catalog file directly (not through Provenance) to prove writes."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path

from agent.chat_keys import API_KEY_ENVS
from agent.llm_providers import CHAT_API_KEY_ENV, CHAT_BASE_URL_ENV, CHAT_MODEL_ENV, CHAT_TIMEOUT_ENV
from seed.catalog import FRAUD_MODEL_URN

DEMO_QUESTION = "What happens if payments.transactions.amount is sent in cents instead of dollars?"
# What makes a Provenance process plan with a chat model (agent/llm.py, agent/llm_providers.py): removed from the
# environment of the tests that expect the deterministic planner, whatever the developer's shell has set.
CHAT_MODEL_ENVS = (*API_KEY_ENVS, CHAT_MODEL_ENV, CHAT_BASE_URL_ENV, CHAT_API_KEY_ENV, CHAT_TIMEOUT_ENV)


def model_tags(db: Path, urn: str = FRAUD_MODEL_URN) -> list[str]:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT metadata FROM metadata_aspect_v2 WHERE urn = ? AND aspect_name = 'globalTags' AND version = 0",
            (urn,),
        ).fetchone()
    return [t["tag"] for t in json.loads(row[0])["tags"]] if row else []


def documents(db: Path) -> list[dict[str, object]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT urn, metadata FROM metadata_aspect_v2 WHERE aspect_name = 'documentInfo' AND version = 0 "
            "AND urn LIKE 'urn:li:document:shared-%'"
        ).fetchall()
    return [{"urn": urn, **json.loads(meta)} for urn, meta in rows]


def catalog_write_count(db: Path) -> int:
    """Rows of every aspect version: any write through any path adds at least one."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM metadata_aspect_v2").fetchone()[0])


REPO = Path(__file__).resolve().parents[2]


def runner_env(home: Path, database_url: str | None) -> dict[str, str]:
    """The environment of another Provenance process on `home` (and on `database_url`, when given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(CHAT_MODEL_ENVS)}
    for name in ("PROVENANCE_LITE_DB", "PROVENANCE_CATALOG", "PROVENANCE_DATABASE_URL"):
        env.pop(name, None)
    # no PYTHONPATH: started in REPO, a process finds `tests` there, and the fork server (tests/runner_forkserver.py)
    # refuses an interpreter whose module path differs from its own
    env.update(PROVENANCE_HOME=str(home), DATAHUB_TELEMETRY_ENABLED="false")
    if database_url is not None:
        env["PROVENANCE_DATABASE_URL"] = database_url
    return env


async def start_runner(home: Path, database_url: str | None, *args: str) -> asyncio.subprocess.Process:
    """tests/agent/session_runner.py in a new process; its stdout is JSON lines."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.agent.session_runner",
        *args,
        cwd=REPO,
        env=runner_env(home, database_url),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def read_json_line(process: asyncio.subprocess.Process, timeout: float = 180) -> dict[str, object]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), timeout)
    if not line:
        await process.wait()
        stderr = await process.stderr.read() if process.stderr else b""
        raise AssertionError(f"the runner ended ({process.returncode}) without output: {stderr.decode()[-3000:]}")
    return dict(json.loads(line))


async def run_runner(home: Path, database_url: str | None, *args: str, timeout: float = 180) -> list[dict[str, object]]:
    """Run session_runner to its end; every JSON line it printed."""
    process = await start_runner(home, database_url, *args)
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    lines = [dict(json.loads(line)) for line in out.decode().splitlines() if line.strip()]
    assert lines, f"the runner ended ({process.returncode}) without output: {err.decode()[-3000:]}"
    return lines
