"""The warm local service (agent/cli/warm.py): a command leaves one behind, the next commands use it, two commands
finishing together start one, a killed one is replaced, one started with other settings is stopped and replaced,
an idle one exits, and PROVENANCE_SERVICE=off or CI=true leave none."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.cli.warm import leave_warm_service, start_file
from seed.catalog import POSTGRES_TABLE_URN
from tools.catalog.serve_state import live_state, pid_alive, stop_process
from tools.settings import ProvenanceSettings

PROVENANCE = str(Path(sys.executable).with_name("provenance"))


def _warm_env(monkeypatch: pytest.MonkeyPatch, home: Path, idle: int = 900) -> dict[str, str]:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("PROVENANCE_SERVICE", "auto")
    monkeypatch.setenv("PROVENANCE_SERVICE_IDLE", str(idle))
    monkeypatch.setenv("PROVENANCE_HOME", str(home))
    return dict(os.environ)


def _wait_live(settings: ProvenanceSettings, timeout: float = 90.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = live_state(settings, logging.DEBUG)
        if state is not None and state.get("assess_url"):
            return int(state["pid"])
        time.sleep(0.5)
    log = (settings.logs / "service.log").read_text() if (settings.logs / "service.log").exists() else "(no log)"
    raise AssertionError(f"no warm service came up in {timeout} s:\n{log[-3000:]}")


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PROVENANCE, *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_command_leaves_one_service_the_next_use_it_and_a_dead_or_stale_one_is_replaced(
    seeded_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _warm_env(monkeypatch, seeded_home)
    settings = ProvenanceSettings()
    first = _cli(env, "lineage", "--dataset", POSTGRES_TABLE_URN, "--field", "amount")
    assert first.returncode == 0, first.stderr
    pid = _wait_live(settings)
    try:
        assessed = _cli(env, "-v", "assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale",
                        "--param", "factor=100", "--no-publish")  # fmt: skip
        assert assessed.returncode == 20 and f"assessed by `provenance catalog serve` (pid {pid})" in assessed.stderr
        lineage = _cli(env, "lineage", "--dataset", POSTGRES_TABLE_URN, "--field", "amount")
        assert lineage.stdout.rstrip().endswith(f"(`provenance catalog serve`, pid {pid})"), lineage.stderr
        status = _cli(env, "service", "status")
        assert f"warm (background) service for {seeded_home}: pid {pid}" in status.stdout
        # two commands finishing together while none runs start exactly one
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert live_state(settings, logging.DEBUG) is None  # a killed service is never used
        started: list[int | None] = []
        racers = [threading.Thread(target=lambda: started.append(leave_warm_service(settings, "assess")))
                  for _ in range(2)]  # fmt: skip
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()
        assert len([p for p in started if p is not None]) == 1, started
        pid = _wait_live(settings)
        assert not start_file(settings).exists()  # the service took its start file away once it served
        # started with other settings: stopped, not used
        monkeypatch.setenv("PROVENANCE_SAMPLE_SEED", "7")
        assert live_state(ProvenanceSettings(), logging.DEBUG) is None
        assert not pid_alive(pid)
    finally:
        state = live_state(ProvenanceSettings(), logging.DEBUG)
        if state is not None:
            stop_process(int(state["pid"]))
    stopped = _cli(dict(os.environ), "service", "stop")
    assert "no service runs" in stopped.stdout


@pytest.mark.slow
def test_an_idle_service_exits(seeded_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _warm_env(monkeypatch, seeded_home, idle=10)
    settings = ProvenanceSettings()
    assert leave_warm_service(settings, "lineage") is not None
    pid = _wait_live(settings)
    deadline = time.monotonic() + 60
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not pid_alive(pid), "the service did not exit after 10 s idle"
    assert "idle: exiting" in (settings.logs / "service.log").read_text()


def test_off_and_ci_leave_no_service(seeded_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _warm_env(monkeypatch, seeded_home)
    monkeypatch.setenv("PROVENANCE_SERVICE", "off")
    assert leave_warm_service(ProvenanceSettings(), "assess") is None
    monkeypatch.setenv("PROVENANCE_SERVICE", "auto")
    monkeypatch.setenv("CI", "true")
    assert leave_warm_service(ProvenanceSettings(), "assess") is None
    monkeypatch.delenv("CI")
    assert leave_warm_service(ProvenanceSettings(), "runs") is None  # a command that reads no catalog
    assert not start_file(ProvenanceSettings()).exists()


def test_library_loggers_stay_quiet_without_verbose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without -v a library's INFO lines (httpx's every request to a served catalog) must not reach the terminal;
    with -v they are kept at INFO (their DEBUG drowns Provenance's own steps)."""
    import agent.cli.app as app

    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    for verbose, level in ((False, logging.WARNING), (True, logging.INFO)):
        app._run(["-v", "runs"] if verbose else ["runs"])
        assert all(logging.getLogger(name).level == level for name in app.QUIET_LIBRARIES), verbose
