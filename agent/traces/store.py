"""Trace files: `$PROVENANCE_HOME/traces/<trace_id>.json`, one per conversation thread.

The trace id is the thread id made safe for a file name. Files are replaced atomically (with the evidence store's
helper) under a per-file lock, so a CLI `resume` and the chat can both append to one trace; reading validates
against the schema; listing keeps unreadable files, with their error.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from agent.traces.schema import Trace, TraceError, parse_trace
from tools import atomic

TRACES_DIR = "traces"


def traces_dir(home: Path) -> Path:
    return home / TRACES_DIR


def trace_id_for(thread_id: str) -> str:
    """A file-name-safe id: the thread id with anything but letters, digits, '.', '_' and '-' replaced."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", thread_id)[:200]
    return safe if safe and not safe.startswith(".") else f"t{safe}"


def trace_path(home: Path, thread_id: str) -> Path:
    return traces_dir(home) / f"{trace_id_for(thread_id)}.json"


def sha256_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_atomically(path, data)  # through the module: one fault injected there reaches every writer


def locked(path: Path) -> contextlib.AbstractContextManager[None]:
    """Serialise read-modify-write of one trace between processes (CLI resume while the chat runs)."""
    return atomic.file_lock(path)


def write_trace(path: Path, trace: Trace) -> None:
    _write_atomically(path, trace.model_dump_json(indent=1).encode())


def read_trace(path: Path) -> Trace:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TraceError(f"cannot read trace {path}: {exc.strerror or exc}") from None
    return parse_trace(data, str(path))


def find_trace(home: Path, ref: str | Path) -> Path:
    """A trace file from a path or a trace/thread id (looked up under $PROVENANCE_HOME/traces)."""
    candidate = Path(ref).expanduser()
    if candidate.is_file():
        return candidate
    for name in (str(ref), trace_id_for(str(ref))):
        path = traces_dir(home) / (name if name.endswith(".json") else f"{name}.json")
        if path.is_file():
            return path
    known = ", ".join(p.stem for p in sorted_trace_files(home)[-5:]) or "none"
    raise TraceError(
        f"no trace {str(ref)!r}: not a file, and not a trace id under {traces_dir(home)} (recent: {known})"
    )


def sorted_trace_files(home: Path) -> list[Path]:
    folder = traces_dir(home)
    if not folder.is_dir():
        return []
    files = [p for p in folder.glob("*.json") if not p.name.startswith(".")]
    return sorted(files, key=lambda p: (p.stat().st_mtime, p.name))


@dataclass
class TraceListing:
    path: Path
    trace: Trace | None
    error: str | None = None


def list_traces(home: Path) -> list[TraceListing]:
    """Every trace file, oldest first; an unreadable one is listed with its error, not skipped."""
    listings = []
    for path in sorted_trace_files(home):
        try:
            listings.append(TraceListing(path, read_trace(path)))
        except TraceError as exc:
            listings.append(TraceListing(path, None, str(exc)))
    return listings
