"""A warm start for the `provenance` command line: `python -m agent.cli.forkserver SOCKET` imports the libraries
the commands use (LangGraph, LangChain, pandas, scikit-learn, matplotlib, the DataHub SDK: ~3 CPU s) once, and
forks a fresh `provenance` process for each command started with PROVENANCE_CLI_FORKSERVER naming its socket.

Only third-party libraries are imported ahead: Provenance's own modules are imported in each child, after its
environment, directory and arguments are set, as in a new process; so the settings, the registries and the
caches of a command are its own. A launch is refused, and the command starts cold, when anything a library could
have read while being imported differs: the interpreter, its flags and path, or an environment variable other
than those only Provenance reads (PROVENANCE_*) or reads when called. The test suite starts one per session; a CI
job running many commands may too. Forking, the launch protocol and the interpreter check:
tools/runtime/forkserver.py.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import runpy
import signal
import subprocess
import sys
from typing import Any

from tools.runtime import forkserver

FORKSERVER_ENV = "PROVENANCE_CLI_FORKSERVER"
COMMAND_LINE = "agent.cli"  # what `python -m agent.cli.forkserver` runs in each child
OWN_PACKAGES = ("agent", "tools", "policies", "seed")
# Read when called, not when imported (or recomputed in the child: HOME), so a launch may differ in them.
RUNTIME_VARIABLES = frozenset(
    {
        "HOME",
        "CI",
        "PWD",
        "OLDPWD",
        "COLUMNS",
        "LINES",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "DATAHUB_GMS_URL",
        "DATAHUB_GMS_TOKEN",
        "PYTEST_CURRENT_TEST",  # pytest's, and pytest-xdist's for each of its workers
        "PYTEST_XDIST_WORKER",
        "PYTEST_XDIST_WORKER_COUNT",
        "PYTEST_XDIST_TESTRUNUID",
        "SHLVL",  # a shell's own
        "_",
        "PATH",  # where subprocesses are found, when they start
        "MLFLOW_TRACKING_URI",  # read by MLflow when a client is made
    }
)
# GitHub Actions' own (the Provenance action's steps): no library reads them.
RUNTIME_PREFIXES = ("PROVENANCE_", "GITHUB_", "RUNNER_", "INPUT_")
# The variables action.yml's steps set for their bash scripts, and those the example recipes name (examples/: read
# by DataHub's recipe loader when `catalog ingest` runs): no library reads them as it loads.
# tests/agent/cli/test_forkserver_variables.py keeps both lists in step with those files.
ACTION_VARIABLES = frozenset(
    {
        "ACTION_PATH", "BASE_REF", "CHANGES_FILE", "DIFF_ARGS", "EVIDENCE_ARTIFACT", "EVIDENCE_URL_BASE", "EXIT_CODE",
        "FAIL_ON", "HEAD_REF", "INFER_ARGS", "MODE", "PR_BASE_SHA", "RUNNER_TEMP_DIR", "VERDICT",
    }
)  # fmt: skip
RECIPE_VARIABLES = frozenset(
    {"DBT_PROJECT_DIR", "POSTGRES_HOST_PORT", "POSTGRES_DATABASE", "POSTGRES_USER", "POSTGRES_PASSWORD"}
)
_NAMED = RUNTIME_VARIABLES | ACTION_VARIABLES | RECIPE_VARIABLES
# Libraries a command never imports from a shell, and whose import reads the working directory (chainlit).
NOT_PRELOADED = ("chainlit", "__main__", "__mp_main__")
KEPT = frozenset({"tools", "tools.runtime", "tools.runtime.forkserver"})  # the forking itself, and its packages


def _may_differ(name: str) -> bool:
    return name.startswith(RUNTIME_PREFIXES) or name in _NAMED


def run_forked(argv: list[str], module: str = COMMAND_LINE) -> int | None:
    """In a `provenance` process (or another program `module` the server runs) that has imported nothing heavy yet:
    run it as a fork of the warm server, and return its exit code; None when there is no server to use or it does
    not run `module` (the caller runs the program itself)."""
    path = os.environ.get(FORKSERVER_ENV, "").strip()
    if not path or forkserver.in_child():
        return None
    launched = forkserver.launch(path, [0, 1, 2], {"argv": argv, "path0": sys.path[0], "module": module})
    if isinstance(launched, str):
        return None
    child, conn = launched
    for forwarded in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a signal to the command reaches the command
        signal.signal(forwarded, lambda sig, _frame: os.kill(child, sig))
    code = forkserver.wait_exit(conn)
    if code < 0:  # killed by a signal: so is this process, for whoever waits on it
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _imports() -> tuple[list[str], list[tuple[str, int]]]:
    """What Provenance's own modules (all but the chat's) import and compile as they load: the third-party modules,
    in import order, and the regular expressions they compile (`re.compile`'s pattern and flags). Found in a
    separate process, so this one imports none of Provenance's."""
    script = (
        "import importlib, json, pkgutil, re, sys\n"
        f"own = {OWN_PACKAGES!r}\n"
        "compiled = {}\n"
        "compile = re.compile\n"
        "def recorded(pattern, flags=0):\n"
        "    caller = sys._getframe(1).f_globals.get('__name__', '')\n"
        "    if isinstance(pattern, str) and caller.split('.')[0] in own:\n"
        "        compiled[(pattern, int(flags))] = None\n"
        "    return compile(pattern, flags)\n"
        "re.compile = recorded\n"
        "for top in own:\n"
        "    package = importlib.import_module(top)\n"
        "    for info in pkgutil.walk_packages(package.__path__, top + '.'):\n"
        "        if not info.name.startswith('agent.chat'):\n"
        "            try:\n"
        "                importlib.import_module(info.name)\n"
        "            except ImportError:\n"  # an extra this environment lacks (make dbt): not preloaded, as not used
        "                pass\n"
        "modules = [m for m in sys.modules if m.split('.')[0] not in own]\n"
        "print(json.dumps({'modules': modules, 'patterns': list(compiled)}))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL
    )
    imports = json.loads(found.stdout.splitlines()[-1])
    modules: list[str] = imports["modules"]
    names = [n for n in modules if n.split(".")[0] not in NOT_PRELOADED and n not in sys.builtin_module_names]
    return names, [(pattern, flags) for pattern, flags in imports["patterns"]]


def _compile_ahead(patterns: list[tuple[str, int]]) -> list[re.Pattern[str]]:
    """Compile the patterns Provenance's modules compile as they load (the planner's phrase tables: ~200, 0.2-0.4
    CPU s): `re` keeps what it compiled in a cache of 512, which each child inherits, so its own `re.compile` of the
    same pattern and flags finds it there. Compiled last, so the libraries' own patterns do not push them out."""
    return [re.compile(pattern, flags) for pattern, flags in patterns]


def _preload(names: list[str]) -> list[str]:
    """Import each of `names`; those that cannot be imported on their own (aliases a package installs in
    sys.modules) are returned, to be logged, not preloaded."""
    skipped = []
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - an alias or optional part: the child imports it as it would cold
            skipped.append(f"{name} ({type(exc).__name__})")
    return skipped


def _refusal(
    base_env: dict[str, str], imported_env: dict[str, str], modules: frozenset[str], request: dict[str, Any]
) -> str | None:
    """Why the launch `request` may not run as a fork of this server, or None. A variable a library set as this
    server imported it (scikit-learn's KMP_DUPLICATE_LIB_OK, say) is no difference when the launcher holds the same
    value: it comes from a process that imported the same library, and a fork gets that value either way."""
    if request.get("module") not in modules:
        return f"not a program this server runs: {request.get('module')!r}"
    env = request["env"]
    same = {name: value for name, value in imported_env.items() if env.get(name) == value}
    return forkserver.environment_refusal({**base_env, **same}, env, _may_differ)


def serve(path: str, modules: frozenset[str] = frozenset({COMMAND_LINE})) -> None:
    """Serve launches of `modules` (run as `python -m MODULE` would run them) at the socket `path`. The test suite
    adds its own runner programs, which run the command line's code in a process of their own."""
    base = dict(os.environ)  # what a launcher's environment is compared with: as it was before the imports
    libraries, patterns = _imports()
    skipped = _preload(libraries)
    _compile_ahead(patterns)
    imported_env = {k: v for k, v in os.environ.items() if base.get(k) != v}  # set by a library as it loaded
    if skipped:
        print(f"not preloaded: {', '.join(skipped)}", file=sys.stderr)
    print(f"preloaded {len(libraries) - len(skipped)} modules, compiled {len(patterns)} patterns", file=sys.stderr)
    # `-m agent.cli.forkserver` imported the packages around this module: each child imports them afresh.
    for name in [m for m in sys.modules if m.split(".")[0] in OWN_PACKAGES and m not in KEPT]:
        module = sys.modules.pop(name)
        parent, _, attribute = name.rpartition(".")
        if parent in KEPT and getattr(sys.modules[parent], attribute, None) is module:
            delattr(sys.modules[parent], attribute)  # else `from tools import x` would find the old module there
    request = forkserver.serve(path, lambda r: _refusal(base, imported_env, modules, r))
    if request is None:  # the fork server's own end
        return
    os.environ.update(imported_env)  # as each library would have set them when imported in a new process
    forkserver.rehome_datahub()
    sys.argv = list(request["argv"])
    sys.path[0] = request["path0"]
    runpy.run_module(request["module"], run_name="__main__", alter_sys=True)  # as `python -m MODULE` runs it


if __name__ == "__main__":
    serve(sys.argv[1])
