"""The thin client (agent/cli/forward.py): with this home's warm service running, `ask`, `resume` and `check` run
in it and print, exit and record what the same command run in-process does; a question for the person at the
terminal is asked by the client and its answer recorded as typed there; a client whose chat model keys are not the
service's runs its command itself."""

from __future__ import annotations

import argparse
import builtins
import getpass
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.cli.forward import forward
from agent.cli.parser import build_parser
from tests.agent.cli.test_startup import HEAVY
from tests.agent.cli.test_warm import PROVENANCE, _wait_live
from tests.agent.helpers import CHAT_MODEL_ENVS, DEMO_QUESTION
from tools.catalog.serve_state import live_state, stop_process
from tools.evidence.schema import Evidence
from tools.evidence.store import list_run_ids, read_evidence
from tools.settings import ProvenanceSettings

ROOT = Path(__file__).resolve().parents[3]
RUN_ID = re.compile(r"\b\d{8}T\d{6}Z?-[0-9a-f]+\b|run-[\w-]+")
THREAD = re.compile(r"cli-[0-9a-f]{12}")
MILLISECONDS = re.compile(r"\b\d+ ms\b")


@pytest.fixture(scope="module")
def warm(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], int]]:
    """This home's warm service, started as a user's first command starts it; the environment commands run in.
    One for the module (a service's start is ~15 worker-seconds): each test reads the runs it made, not the home's."""
    home = tmp_path_factory.mktemp("forward") / "home"
    shutil.copytree(seeded_template, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name in os.environ:
            if name.startswith(CHAT_MODEL_ENVS):
                monkeypatch.delenv(name)
        monkeypatch.delenv("CI", raising=False)
        monkeypatch.setenv("PROVENANCE_SERVICE", "auto")
        monkeypatch.setenv("PROVENANCE_HOME", str(home))
        env = dict(os.environ)
        settings = ProvenanceSettings()
        first = subprocess.run([PROVENANCE, "lineage", "--dataset", "urn:li:dataset:(urn:li:dataPlatform:postgres,"
                                "payments.public.transactions,PROD)", "--field", "amount"],
                               env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert first.returncode == 0, first.stderr
        pid = _wait_live(settings)
        try:
            yield env, pid
        finally:
            state = live_state(settings, logging.DEBUG)
            if state is not None:
                stop_process(int(state["pid"]))


def _new_evidence(home: Path, before: set[str]) -> list[Evidence]:
    return [read_evidence(home, r) for r in list_run_ids(home) if r not in before]


def _cli(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PROVENANCE, "-v", *args], env=env, capture_output=True, text=True, timeout=300, cwd=cwd,
                          stdin=subprocess.DEVNULL)  # fmt: skip


def _same(text: str) -> str:
    """What two runs of one command share: run ids, thread ids and the time taken differ by design."""
    return MILLISECONDS.sub("N ms", THREAD.sub("THREAD", RUN_ID.sub("RUN", text)))


@pytest.mark.slow
def test_check_and_ask_run_in_the_service_and_answer_as_in_process(
    warm: tuple[dict[str, str], int], tmp_path: Path
) -> None:
    env, pid = warm
    home = Path(env["PROVENANCE_HOME"])
    before = set(list_run_ids(home))
    served_note = f"ran in the warm service (pid {pid})"
    local_env = {**env, "PROVENANCE_SERVICE": "off"}
    # a relative path, from another working directory: the service reads it where the client stands
    (tmp_path / "changes").mkdir()
    (tmp_path / "changes" / "CHANGES.yml").write_text((ROOT / "examples" / "CHANGES.yml").read_text())
    served = _cli(env, "check", "changes/CHANGES.yml", cwd=tmp_path)
    local = _cli(local_env, "check", "changes/CHANGES.yml", cwd=tmp_path)
    assert served_note in served.stderr and served_note not in local.stderr, served.stderr
    assert served.returncode == local.returncode != 1, served.stderr
    assert _same(served.stdout) == _same(local.stdout)
    # the client's side of a served command loads none of the heavy libraries
    command = [sys.executable, "-X", "importtime", "-m", "agent.cli", "-v", "check", "changes/CHANGES.yml"]
    timed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert served_note in timed.stderr, timed.stderr[-3000:]
    modules = {line.rsplit("|", 1)[1].strip() for line in timed.stderr.splitlines() if line.startswith("import time:")}
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []

    question = "which models use payments.public.transactions.amount?"
    served, local = _cli(env, "ask", question), _cli(local_env, "ask", question)
    assert served_note in served.stderr
    assert (served.returncode, _same(served.stdout)) == (local.returncode, _same(local.stdout))
    assert served.returncode == 0
    assert "fraud_detector" in served.stdout

    # an assessment off a terminal: pending, as in-process; then resumed through the service and published
    served = _cli(env, "ask", DEMO_QUESTION)
    assert served_note in served.stderr and served.returncode == 20, served.stderr
    assert "Approval pending. Resume with: provenance resume" in served.stdout
    thread = THREAD.search(served.stdout)
    assert thread is not None, served.stdout
    resumed = _cli(env, "resume", thread.group(), "--approve")
    assert served_note in resumed.stderr and resumed.returncode == 20, resumed.stderr
    assert "Publication: published" in resumed.stdout
    published = _new_evidence(home, before)
    assert [e.publication.decided_by for e in published if e.publication.status == "published"] == [
        f"cli:{getpass.getuser()}"
    ]


@pytest.mark.slow
def test_the_client_asks_its_terminal_and_the_answer_is_recorded_as_typed_there(
    warm: tuple[dict[str, str], int], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env, _pid = warm
    home = Path(env["PROVENANCE_HOME"])
    before = set(list_run_ids(home))
    asked: list[str] = []

    def answer(question: str) -> str:
        asked.append(question)
        return "y"

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(builtins, "input", answer)
    argv = ["ask", DEMO_QUESTION]
    code = forward(ProvenanceSettings(), build_parser().parse_args(argv), argv)
    captured = capsys.readouterr()
    out = captured.out
    assert code == 20 and asked == ["Publish to DataHub? [y/N] "], captured.err
    assert out.count("Verdict: BLOCK") == 1, out  # the reasons the question showed are not repeated by the answer
    assert "Approving writes:" in out and "published" in out
    [evidence] = _new_evidence(home, before)
    assert (evidence.publication.status, evidence.publication.decided_by) == ("published", f"tty:{getpass.getuser()}")


@pytest.mark.slow
def test_a_client_with_other_chat_model_keys_runs_its_command_itself(warm: tuple[dict[str, str], int]) -> None:
    env, pid = warm
    # `check` plans with no chat model, so it runs here without a network; the service refuses it all the same
    keyed = {**env, "GOOGLE_API_KEY": "not-the-service-key"}
    result = _cli(keyed, "check", str(ROOT / "examples" / "CHANGES.yml"))
    assert f"ran in the warm service (pid {pid})" not in result.stderr
    assert "chat model keys are not the service's" in result.stderr, result.stderr
    assert result.returncode not in (1, 2) and "Check of" in result.stdout


def test_what_is_forwarded() -> None:
    from agent.cli.forward import forwardable

    def parsed(*argv: str) -> tuple[argparse.Namespace, list[str]]:
        return build_parser().parse_args(list(argv)), list(argv)

    assert forwardable(*parsed("bind", "--check", "fraud", "--version", "1"))
    assert not forwardable(*parsed("bind", "fraud", "--version", "1"))  # binding asks before it writes: here
    assert not forwardable(*parsed("scan", "--dataset", "urn:li:dataset:(a,b,PROD)", "--field", "x", "--publish"))
    assert forwardable(*parsed("scan", "--dataset", "urn:li:dataset:(a,b,PROD)", "--field", "x", "--publish", "--yes"))
    assert not forwardable(*parsed("check", "-"))  # read from stdin: this process's
    assert not forwardable(*parsed("runs"))  # reads files: fast on its own
    assert forwardable(*parsed("check", "CHANGES.yml"))
