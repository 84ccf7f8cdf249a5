"""tools/atomic.py: whole-file replacement (modes, no temporary left behind, target untouched on failure) and the
inter-process lock."""

from __future__ import annotations

import errno
import multiprocessing
import os
import stat
import time
from pathlib import Path

import pytest

from tools import atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "evidence.json"
    atomic.write_atomically(target, b"old")
    atomic.write_atomically(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["evidence.json"]


def test_private_by_default_shared_follows_the_umask(tmp_path: Path) -> None:
    atomic.write_atomically(tmp_path / "private", b"x")
    assert _mode(tmp_path / "private") == 0o600
    previous = os.umask(0o027)
    try:
        atomic.write_atomically(tmp_path / "shared", b"x", mode=atomic.SHARED)
    finally:
        os.umask(previous)
    assert _mode(tmp_path / "shared") == 0o640


def test_a_failed_write_keeps_the_old_file_and_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.md"
    atomic.write_atomically(target, b"old")

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", no_space)
    with pytest.raises(OSError, match="No space"):
        atomic.write_atomically(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def _hold(path: str, started: multiprocessing.synchronize.Event) -> None:
    with atomic.file_lock(Path(path)):
        started.set()
        time.sleep(0.5)


def test_file_lock_excludes_another_process(tmp_path: Path) -> None:
    target = tmp_path / "traces" / "t.json"  # the parent folder is created
    context = multiprocessing.get_context("spawn")
    started = context.Event()
    holder = context.Process(target=_hold, args=(str(target), started))
    holder.start()
    try:
        assert started.wait(30)
        begun = time.monotonic()
        with atomic.file_lock(target):
            waited = time.monotonic() - begun
    finally:
        holder.join(30)
    assert waited > 0.2
    assert (tmp_path / "traces" / ".t.json.lock").is_file()
