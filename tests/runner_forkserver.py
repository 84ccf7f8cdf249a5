"""The test session's fork server for the command line (agent/cli/forkserver.py), which also runs the suite's own
runner programs: each runs Provenance's code in a process of its own (a conversation step taken by another
process, a process killed at a stage), and paid ~4 CPU s of imports started cold.

    python -m tests.runner_forkserver SOCKET
"""

from __future__ import annotations

import sys

from agent.cli.forkserver import COMMAND_LINE, serve

PROGRAMS = frozenset({COMMAND_LINE, "tests.agent.session_runner", "tests.reliability.crash_runner"})

if __name__ == "__main__":
    serve(sys.argv[1], PROGRAMS)
