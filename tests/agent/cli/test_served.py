"""The service's side of the thin client (agent/cli/served.py): one command at a time, and none for a client
whose chat model keys are not the service's — each refusal is the client's cue to run the command itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.chat_keys import chat_keys_digest
from agent.cli.served import CommandRequest, CommandRunner
from agent.service import NotServedHere


def _request(tmp_path: Path, **changes: object) -> CommandRequest:
    fields: dict[str, object] = {"argv": ["runs"], "cwd": str(tmp_path), "chat_keys": chat_keys_digest()}
    return CommandRequest.model_validate({**fields, **changes})


def test_another_chat_model_key_is_not_served(tmp_path: Path) -> None:
    other = chat_keys_digest({"GOOGLE_API_KEY": "someone-else"})
    assert other != chat_keys_digest({})
    with pytest.raises(NotServedHere, match="chat model keys"):
        CommandRunner().run(_request(tmp_path, chat_keys=other))


def test_a_busy_service_refuses_a_second_command(tmp_path: Path) -> None:
    runner = CommandRunner()
    with runner._lock, pytest.raises(NotServedHere, match="another command"):
        runner.run(_request(tmp_path))


def test_a_command_runs_in_the_clients_directory_and_its_output_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", "relative-home")  # resolved where the client stands
    (tmp_path / "relative-home").mkdir()
    reply = CommandRunner().run(_request(tmp_path))
    assert reply["code"] == 0 and reply["ask"] is None
    assert reply["stdout"] == f"No runs under {tmp_path / 'relative-home' / 'runs'} yet.\n"
    assert Path.cwd() != tmp_path  # the service's own directory is restored
