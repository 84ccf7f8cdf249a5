"""The fork server's core (tools/runtime/forkserver.py), with a server of its own: a child starts with what the
server imported set apart from the garbage collector, so its first full collection copies none of those pages."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SERVER = """
import gc, sys
import json  # something imported, as a real server imports its libraries
from tools.runtime import forkserver
request = forkserver.serve(sys.argv[1], lambda request: None)
if request is not None:  # the child
    print(gc.get_freeze_count(), len(gc.get_objects()), flush=True)  # frozen, and still collected
"""
# The launcher is a process of its own too: the server refuses one whose module path differs (pytest's does).
LAUNCHER = """
import sys
from tools.runtime import forkserver
launched = forkserver.launch(sys.argv[1], [0, 1, 2], {})
sys.exit(launched if isinstance(launched, str) else forkserver.wait_exit(launched[1]))
"""


def test_a_child_starts_with_the_servers_objects_frozen(tmp_path: Path) -> None:
    socket_path = tmp_path / "fs.sock"
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(socket_path)], cwd=REPO, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not socket_path.exists():
            assert server.poll() is None and time.monotonic() < deadline, "the fork server did not start"
            time.sleep(0.05)
        launcher = [sys.executable, "-c", LAUNCHER, str(socket_path)]
        done = subprocess.run(launcher, cwd=REPO, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)
    frozen, collected = map(int, done.stdout.split())
    assert frozen > 10 * collected, done.stdout  # the child's own few objects are the only ones collected
