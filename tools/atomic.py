"""Atomic file replacement and an inter-process lock: the one place the project writes a file that readers (or a
crash) must see either old and whole or new and whole.

`write_atomically` writes a temporary sibling ``.<name>.<random>``, flushes and fsyncs it, then ``os.replace``s it
over the target; on any failure the temporary file is removed and the target is untouched. `file_lock` serialises
read-modify-write of one file between processes (``fcntl.flock`` on a sibling ``.<name>.lock``).

Callers use the module attribute (``atomic.write_atomically(...)``), so a test that simulates a full disk patches
one name and reaches every writer.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

PRIVATE = 0o600
"""Owner-only (tempfile.mkstemp's mode): run folders, reports, plots, traces."""
SHARED = 0o666
"""What plain open() asks for, so the umask decides (usually 0o644): seed files other tools read."""


_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def _create_temporary(path: Path, mode: int) -> tuple[int, Path]:
    """A new, exclusively created sibling of `path` (tempfile.mkstemp's way, with the caller's mode)."""
    for _ in range(100):
        candidate = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        try:
            return os.open(candidate, _EXCLUSIVE, mode), candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name next to {path}")


def write_atomically(path: Path, data: bytes, *, mode: int = PRIVATE) -> None:
    """Replace `path` with `data` atomically. `mode` is the new file's permission bits before the umask."""
    descriptor, temporary = _create_temporary(path, mode)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (via ``.<name>.lock`` next to it) between processes; creates the parent
    folder. Where fcntl does not exist (not POSIX) it does not lock, and atomic replacement is all there is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: atomic replace only
        yield
        return
    with open(path.with_name(f".{path.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
