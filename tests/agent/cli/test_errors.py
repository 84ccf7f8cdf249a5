"""How the CLI ends when output or the disk fails: a reader that goes away (`| head`, `| true`) ends it quietly;
an OSError names itself, and only a full disk or a permission problem gets the "free the space" advice."""

from __future__ import annotations

import argparse
import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agent.cli.app
from agent.cli import main
from agent.errors import UsageError
from tools.mutations import PlanError
from tools.settings import ProvenanceSettings

NOISE = ("Broken pipe", "free the space", "Traceback", "Exception ignored", "BrokenPipeError")


def provenance() -> list[str]:
    """The installed console script (what users run), else the module."""
    script = Path(sys.executable).with_name("provenance")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agent.cli"]


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONIOENCODING")}
    return env | {"PROVENANCE_HOME": str(home), "PROVENANCE_CATALOG": "embedded"}


def run_with_closed_reader(args: list[str], home: Path) -> tuple[int, str]:
    """Run the CLI with stdout a real pipe whose only read end is closed before the CLI writes anything."""
    proc = subprocess.Popen(
        [*provenance(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(home), cwd=home
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # nobody reads: every write to stdout now fails with EPIPE
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    return proc.wait(timeout=120), stderr


def many_traces(home: Path, count: int = 2000) -> None:
    """Unreadable trace files: `traces --json` lists each with its error, far more output than a pipe holds."""
    folder = home / "traces"
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"broken-{i:05d}.json").write_text("{not json")


@pytest.mark.slow
def test_broken_pipe_after_the_command_returned_keeps_its_exit_code(tmp_path: Path) -> None:
    # "[]" stays in stdout's buffer until main() flushes it: the command had returned 0, and that is the exit code.
    code, stderr = run_with_closed_reader(["traces", "--json"], tmp_path)
    assert not any(noise in stderr for noise in NOISE), stderr
    assert code == 0, stderr


@pytest.mark.slow
def test_broken_pipe_while_printing_exits_1_quietly(tmp_path: Path) -> None:
    # The print itself fails inside the command: its own exit code is unknown, so 1 (never a PASS's 0).
    many_traces(tmp_path)
    code, stderr = run_with_closed_reader(["traces", "--json"], tmp_path)
    assert not any(noise in stderr for noise in NOISE), stderr
    assert code == 1, stderr


def test_broken_pipe_on_help_is_quiet(tmp_path: Path) -> None:
    code, stderr = run_with_closed_reader(["--help"], tmp_path)
    assert not any(noise in stderr for noise in NOISE), stderr
    assert code == 0, stderr


@pytest.mark.slow
def test_pipe_into_head_through_a_shell(tmp_path: Path) -> None:
    """The issue's own shape: `provenance traces --json | head -c 10`, the CLI's status read from PIPESTATUS."""
    many_traces(tmp_path)
    command = " ".join(f"'{part}'" for part in provenance()) + " traces --json | head -c 10; "
    command += 'status=${PIPESTATUS[0]}; echo; echo "status=$status"'
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=cli_env(tmp_path), cwd=tmp_path, timeout=120
    )
    assert done.stdout.startswith("[\n  {"), done.stdout
    assert done.stdout.rstrip().endswith("status=1"), done.stdout  # the CLI broke off while printing: 1
    assert not any(noise in done.stderr for noise in NOISE), done.stderr


def raising(exc: OSError) -> object:
    def handler(_settings: ProvenanceSettings, _args: argparse.Namespace) -> int:
        raise exc

    return handler


@pytest.mark.parametrize(
    ("error", "advice"),
    [
        (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/runs/x/evidence.json"), True),
        (PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/runs/x/evidence.json"), True),
        (OSError(errno.EIO, os.strerror(errno.EIO), "/runs/x/evidence.json"), False),
        (ConnectionResetError(errno.ECONNRESET, os.strerror(errno.ECONNRESET)), False),
        (OSError("no errno at all"), False),
    ],
    ids=["ENOSPC", "EACCES", "EIO", "ECONNRESET", "no-errno"],
)
def test_os_error_names_itself_and_only_disk_or_permission_gets_the_advice(
    error: OSError, advice: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    monkeypatch.setitem(agent.cli.app.HANDLERS, "runs", raising(error))
    assert main(["runs"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {error}"), err
    assert ("free the space or fix the permissions, then run `provenance runs` again" in err) is advice, err
    assert "Broken pipe" not in err


def test_a_full_disk_during_ask_names_the_thread_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ENOSPC advice once said `provenance resume THREAD`: now the id, named before the turn starts."""
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/runs/x/evidence.json")
    seen: list[str] = []

    def ask(settings: object, args: argparse.Namespace) -> int:
        args.thread = args.thread or "cli-0123456789ab"  # as the conversation names it before the turn
        seen.append(args.thread)
        raise full

    monkeypatch.setitem(agent.cli.app.HANDLERS, "ask", ask)
    assert main(["ask", "what if amount is in cents?"]) == 1
    err = capsys.readouterr().err
    assert f"then `provenance resume {seen[0]}`" in err and "THREAD" not in err, err
    monkeypatch.setitem(agent.cli.app.HANDLERS, "ask", ask)
    assert main(["ask", "--thread", "t-7", "what if amount is in cents?"]) == 1
    assert "then `provenance resume t-7`" in capsys.readouterr().err


def _our_bug() -> Exception:
    from pydantic import BaseModel, ValidationError

    class Record(BaseModel):
        count: int

    try:
        Record.model_validate({"count": "many"})
    except ValidationError as exc:
        return exc
    raise AssertionError("pydantic accepted a bad record")


def test_an_internal_error_is_exit_1_with_the_log_path_not_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pydantic ValidationError from our own code is a ValueError; it must not pass for the user's bad input."""
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    monkeypatch.setitem(agent.cli.app.HANDLERS, "runs", raising(_our_bug()))
    assert main(["runs"]) == 1
    err = capsys.readouterr().err
    log_file = tmp_path / "logs" / "cli.log"
    assert err.startswith("internal error: ValidationError") and str(log_file) in err, err
    assert "Traceback" in log_file.read_text() and "internal error in `provenance runs`" in log_file.read_text()


@pytest.mark.parametrize(
    "error",
    [PlanError("factor must be non-zero"), UsageError("thread t has no pending approval")],
    ids=["plan", "usage"],
)
def test_bad_input_is_exit_2_and_names_the_problem(
    error: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    monkeypatch.setitem(agent.cli.app.HANDLERS, "runs", raising(error))
    assert main(["runs"]) == 2
    assert capsys.readouterr().err == f"error: {error}\n"
    assert not (tmp_path / "logs" / "cli.log").exists()


def test_sqlite_saying_the_disk_is_full_is_no_bug_of_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite's "database or disk is full" (a checkpoint, the catalog file) was reported as a bug."""
    import sqlite3

    monkeypatch.setenv("PROVENANCE_HOME", str(tmp_path))
    try:
        raise sqlite3.OperationalError("database or disk is full")
    except sqlite3.OperationalError as cause:
        wrapped = RuntimeError("checkpoint write failed")
        wrapped.__cause__ = cause
    monkeypatch.setitem(agent.cli.app.HANDLERS, "runs", raising(wrapped))
    assert main(["runs"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: database or disk is full; free the space"), err
    assert "internal error" not in err and "run `provenance runs` again" in err
