"""The command line's fork server (agent/cli/forkserver.py): a forked command answers as a new process does, a
launch it cannot vouch for starts cold, a signal to the command reaches it, and it runs only the programs it was
given (the session's also runs the suite's runners, tests/runner_forkserver.py)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.cli.forkserver import COMMAND_LINE, _refusal
from seed.catalog import POSTGRES_TABLE_URN
from tests.agent.helpers import REPO, runner_env
from tests.warm_start import CLI_FORKSERVER_ENV, ForkServer

PROVENANCE = [sys.executable, "-m", "agent.cli"]
pytestmark = pytest.mark.slow  # the session starts the command line's fork server for `make test`, not `make check`


@pytest.fixture
def server(forkservers: dict[str, ForkServer]) -> ForkServer:
    """The session's fork server (tests/conftest.py), once it listens: it imports the libraries first."""
    served = forkservers[CLI_FORKSERVER_ENV]
    deadline = time.monotonic() + 120
    while not served.socket.exists():
        assert time.monotonic() < deadline, served.log.read_text()
        time.sleep(0.2)
    return served


def _start(server: ForkServer | None, home: Path, *args: str, **extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != CLI_FORKSERVER_ENV} | {"PROVENANCE_HOME": str(home)} | extra
    if server is not None:
        env[CLI_FORKSERVER_ENV] = str(server.socket)
    return subprocess.Popen(
        [*PROVENANCE, *args], env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _run(server: ForkServer | None, home: Path, *args: str, **extra: str) -> tuple[int, int, str, str]:
    process = _start(server, home, *args, **extra)
    out, err = process.communicate(timeout=180)
    return process.pid, process.returncode, out, err


def _timings_removed(text: str) -> str:
    return re.sub(r"\d+ ms|\d+\.\d+ s", "<time>", text)


def test_a_forked_command_answers_as_a_new_process(server: ForkServer, seeded_home: Path) -> None:
    # An assessment reads Provenance's registries (the ML tasks), which must be the child's own imports: a module
    # the server had imported and forgotten was still found on its package, and the regressor became INCOMPLETE.
    assess = ("assess", "--dataset", POSTGRES_TABLE_URN, "--field", "amount", "--op", "scale", "--param")
    assess += ("factor=100", "--json", "--no-publish")
    pid, code, out, err = _run(server, seeded_home, *assess)
    assert server.launched(pid), server.log.read_text()
    _, cold_code, cold_out, cold_err = _run(None, seeded_home, *assess)
    forked, cold = json.loads(out), json.loads(cold_out)
    assert [(m["urn"], m["verdict"], m["reasons"]) for m in forked["models"]] == [
        (m["urn"], m["verdict"], m["reasons"]) for m in cold["models"]
    ]
    assert (code, cold_code, [m["verdict"] for m in cold["models"]]) == (20, 20, ["BLOCK", "BLOCK"])
    assert _timings_removed(err) == _timings_removed(cold_err)

    pid, code, out, err = _run(server, seeded_home, "assess", "--dataset", POSTGRES_TABLE_URN)  # a usage error
    assert server.launched(pid)
    assert (code, out) == (2, "") and "--field" in err


def test_the_planners_patterns_are_compiled_in_the_server(server: ForkServer) -> None:
    """Provenance's modules compile ~200 regular expressions as they load (the planner's phrase tables), 0.2-0.4 CPU s
    a command; the server compiles them once, into the cache of `re` that each child inherits."""
    from agent.planning import phrases

    tables = [value for value in vars(phrases).values() if isinstance(value, re.Pattern)]
    found = re.search(r"compiled (\d+) patterns", server.log.read_text())
    assert found is not None, server.log.read_text()[-2000:]
    assert int(found.group(1)) >= len(tables) > 10


def test_a_pattern_compiled_ahead_is_the_one_a_module_then_compiles() -> None:
    """The server records flags as numbers (JSON); a module passes `re.IGNORECASE`: the same entry of the cache."""
    from agent.cli.forkserver import _compile_ahead

    pattern = rf"\bcompiled-ahead-{os.getpid()}-{time.time_ns()}\b"
    [ahead] = _compile_ahead([(pattern, int(re.IGNORECASE))])
    assert re.compile(pattern, re.IGNORECASE) is ahead


def test_a_launch_it_cannot_vouch_for_runs_cold(server: ForkServer, tmp_path: Path) -> None:
    # A variable a library reads while it is imported (matplotlib's backend): the server's imports did not see it.
    pid, code, out, _ = _run(server, tmp_path, "--version", MPLBACKEND="svg")
    assert server.refusal(pid) == "environment differs in MPLBACKEND"
    assert (code, out.split()[0]) == (0, "provenance")

    env = dict(os.environ) | {CLI_FORKSERVER_ENV: str(server.socket)}
    flagged = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "agent.cli", "--version"],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = flagged.communicate(timeout=60)
    assert server.refusal(flagged.pid) == "interpreter differs in xoptions"
    assert flagged.returncode == 0 and "import time:" in err  # it ran here, cold, as asked

    # A Provenance setting differs freely: Provenance's own modules are imported in the child.
    pid, code, out, _ = _run(server, tmp_path, "--version", PROVENANCE_EXECUTOR="thread")
    assert server.launched(pid) and code == 0


def test_a_signal_to_the_command_reaches_it_and_its_end_is_the_launchers(server: ForkServer, seeded_home: Path) -> None:
    serve = _start(server, seeded_home, "catalog", "serve")  # runs until it is told to stop
    child = _forked_child(server, serve)
    time.sleep(2)
    serve.send_signal(signal.SIGTERM)
    serve.communicate(timeout=60)
    with pytest.raises(ProcessLookupError):  # the command itself ended, not only its launcher
        os.kill(child, 0)

    killed = _start(server, seeded_home, "catalog", "serve")
    child = _forked_child(server, killed)
    killed.kill()  # SIGKILL cannot be forwarded: the child watches its launcher and dies with it
    killed.communicate(timeout=30)
    deadline = time.monotonic() + 15
    while _alive(child):
        assert time.monotonic() < deadline, f"pid {child} outlived its killed launcher"
        time.sleep(0.2)


def _forked_child(server: ForkServer, launcher: subprocess.Popen[str]) -> int:
    """The pid of the child the server forked for `launcher`; fails at once when it refused the launch or the
    launcher ended, and after two minutes."""
    deadline = time.monotonic() + 120
    while not server.launched(launcher.pid):
        refused = server.refusal(launcher.pid)
        if refused is not None:
            launcher.kill()
            pytest.fail(f"the fork server refused the launch: {refused}")
        assert launcher.poll() is None and time.monotonic() < deadline, launcher.communicate()
        time.sleep(0.2)
    return int(re.findall(rf"forked pid (\d+) for launcher {launcher.pid}\n", server.log.read_text())[0])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_suites_runner_programs_are_forked_with_the_environment_they_are_given(
    server: ForkServer, tmp_path: Path
) -> None:
    """tests/runner_forkserver.py also runs the suite's runners; launched as the tests launch them (`runner_env`),
    they are forked, not started cold (a runner refused for its environment costs ~4 CPU s; a run starts 12)."""
    usage_errors = {  # each program's own answer to arguments it cannot use, given in the forked child
        "tests.reliability.crash_runner": ("kill", "no-such-stage"),
        "tests.agent.session_runner": ("ask", "thread-only"),
    }
    for module, arguments in usage_errors.items():
        runner = subprocess.Popen(
            [sys.executable, "-m", module, *arguments],
            cwd=REPO,
            env=runner_env(tmp_path / "home", None),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        _, err = runner.communicate(timeout=120)
        assert server.launched(runner.pid), (server.refusal(runner.pid), server.log.read_text()[-2000:])
        assert runner.returncode in (1, 2), err


def test_a_program_the_server_does_not_run_is_refused() -> None:
    base = {"HOME": "/x"}
    assert _refusal(base, {}, frozenset({COMMAND_LINE}), {"module": "tests.agent.session_runner", "env": base}) == (
        "not a program this server runs: 'tests.agent.session_runner'"
    )
    assert _refusal(base, {}, frozenset({COMMAND_LINE}), {"module": COMMAND_LINE, "env": base}) is None


def test_a_variable_the_servers_imports_set_differs_only_when_the_launcher_holds_another_value() -> None:
    """A launcher that imported scikit-learn holds the KMP_ variables scikit-learn sets on import (the server set the
    same ones as it imported it): the same values are forked, another value (a user's own) is refused."""
    base = {"HOME": "/x"}
    imported = {"KMP_DUPLICATE_LIB_OK": "True", "KMP_INIT_AT_FORK": "FALSE"}
    command = frozenset({COMMAND_LINE})
    assert _refusal(base, imported, command, {"module": COMMAND_LINE, "env": {**base, **imported}}) is None
    assert _refusal(base, imported, command, {"module": COMMAND_LINE, "env": base}) is None
    own = {**base, **imported, "KMP_DUPLICATE_LIB_OK": "False"}
    assert _refusal(base, imported, command, {"module": COMMAND_LINE, "env": own}) == (
        "environment differs in KMP_DUPLICATE_LIB_OK"
    )
    assert _refusal(base, {}, command, {"module": COMMAND_LINE, "env": {**base, **imported}}) == (
        "environment differs in KMP_DUPLICATE_LIB_OK, KMP_INIT_AT_FORK"
    )


def test_a_command_from_a_process_that_imported_scikit_learn_is_forked(server: ForkServer, tmp_path: Path) -> None:
    """This test's own process imported scikit-learn (the KMP_ variables are in its environment), as a pytest worker
    or a Provenance process has: a command it starts forks all the same."""
    import sklearn  # noqa: F401

    assert os.environ.get("KMP_DUPLICATE_LIB_OK") == "True"
    command = subprocess.Popen(
        [*PROVENANCE, "--version"], cwd=REPO, env=runner_env(tmp_path / "home", None), stdout=subprocess.DEVNULL
    )
    assert command.wait(timeout=120) == 0
    assert server.launched(command.pid), (server.refusal(command.pid), server.log.read_text()[-2000:])
