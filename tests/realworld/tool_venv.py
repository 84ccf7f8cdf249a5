"""A command-line tool that cannot share .venv (dbt, Feast: their pins clash with ours) in a venv of its own, installed
with uv from exact pins the first time it is needed and again whenever the pins or the Python change."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path


def _stamp(requirements: Path) -> str:
    return hashlib.sha256(requirements.read_bytes() + sys.version.encode()).hexdigest()


def tool_executable(venv: Path, requirements: Path, command: str, env_var: str, what: str) -> Path:
    """`$env_var` when set (a tool installed elsewhere), else `venv/bin/command`, installed first when missing or
    out of date (a file lock keeps parallel sessions from installing twice)."""
    if given := os.environ.get(env_var):
        return Path(given)
    executable = venv / "bin" / command
    stamp = venv / ".installed"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if executable.is_file() and stamp.is_file() and stamp.read_text() == _stamp(requirements):
            return executable
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        done = subprocess.run(
            [sys.executable, "-m", "uv", "pip", "install", "-q", "--python", str(python), "-r", str(requirements)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"installing {what} into {venv} failed: {done.stderr[-3000:]}")
        stamp.write_text(_stamp(requirements))
    return executable
