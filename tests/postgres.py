"""A throw-away PostgreSQL server for the tests (fixtures `postgres_cluster`, `postgres_url` in tests/conftest.py).

Debian's `postgresql` package (`make system-deps` installs it) puts the server programs in
/usr/lib/postgresql/<major>/bin, which is not on PATH; $POSTGRES_INITDB (a path or glob, the Makefile exports the
one it checks), `pg_config --bindir` and PATH are searched too. `start_cluster` runs initdb into a fresh temporary
folder and starts the server on a free loopback port, its unix socket in that folder too, trusting local
connections as user `postgres`; `Cluster.stop` stops it and deletes the folder. PostgreSQL refuses to run as root,
so as root the server programs run as `nobody` (setpriv), in a folder owned by that user. A test process killed
before its teardown leaves its server running: the next `start_cluster` stops the servers whose owner (the pid in
`owner.pid`) is gone.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg

DEFAULT_INITDB = "/usr/lib/postgresql/*/bin/initdb"
MISSING = (
    "the PostgreSQL server programs (initdb, pg_ctl, postgres) were not found in {where}: "
    "`make system-deps` installs them (Debian package postgresql)"
)
SUPERUSER = "postgres"
PREFIX = "provenance-pg-"
OWNER_FILE = "owner.pid"
UNPRIVILEGED = "nobody"


class ClusterError(RuntimeError):
    pass


def _major(path: str) -> int:
    found = re.search(r"/postgresql/(\d+)/", path)
    return int(found.group(1)) if found else -1


def _complete(folder: Path) -> bool:
    return all(os.access(folder / name, os.X_OK) for name in ("initdb", "pg_ctl", "postgres"))


def server_bindir() -> Path:
    """The folder with initdb, pg_ctl and postgres (the newest major version when several are installed)."""
    pattern = os.environ.get("POSTGRES_INITDB") or DEFAULT_INITDB
    candidates = [Path(p).parent for p in sorted(glob.glob(pattern), key=_major, reverse=True)]
    if pg_config := shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.CalledProcessError):
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=True).stdout
            candidates.append(Path(out.strip()))
    if initdb := shutil.which("initdb"):
        candidates.append(Path(initdb).resolve().parent)
    for folder in candidates:
        if _complete(folder):
            return folder
    raise ClusterError(MISSING.format(where=f"{pattern}, `pg_config --bindir` or PATH"))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    root: Path
    port: int
    bindir: Path
    as_user: list[str]

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new, empty database; returns its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*self.as_user, *args],
            cwd=self.root,
            env={**os.environ, "LC_ALL": "C", "LANG": "C"},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
            raise ClusterError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr or done.stdout}\n{tail}")
        return done

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self.run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "stop", "-m", "immediate", "-w")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _unprivileged() -> tuple[list[str], int, int]:
    """The command prefix that runs a program as `nobody`, and that user's uid and gid."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise ClusterError("running as root and setpriv (util-linux) is missing: cannot start PostgreSQL as nobody")
    user = pwd.getpwnam(UNPRIVILEGED)
    prefix = [setpriv, f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]
    return prefix, user.pw_uid, user.pw_gid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reap_stale(bindir: Path, as_user: list[str]) -> None:
    """Stop and delete the clusters of earlier test processes that died before their teardown."""
    for root in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            owner = int((root / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue  # not ours, or still being created
        if not _alive(owner):
            with contextlib.suppress(ClusterError, OSError, subprocess.TimeoutExpired):
                Cluster(root=root, port=0, bindir=bindir, as_user=as_user).stop()


def start_cluster() -> Cluster:
    bindir = server_bindir()
    as_user: list[str] = []
    if os.geteuid() == 0:
        as_user, uid, gid = _unprivileged()
    _reap_stale(bindir, as_user)
    root = Path(tempfile.mkdtemp(prefix=PREFIX))  # in /tmp: a user other than root can reach it
    (root / OWNER_FILE).write_text(str(os.getpid()))
    if as_user:
        os.chown(root, uid, gid)
    cluster = Cluster(root=root, port=0, bindir=bindir, as_user=as_user)
    try:
        cluster.run(
            str(bindir / "initdb"),
            "-D",
            str(cluster.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        for attempt in range(3):  # the free port may be taken between choosing and binding it
            cluster.port = _free_port()
            # jit=off: compiling each query with LLVM took 0.76 s of the 0.80 s the dbt worlds' marts need (3,000
            # rows); a server for tests has no query big enough to repay it.
            options = (
                f"-p {cluster.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c jit=off"
            )
            try:
                cluster.run(
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(cluster.data),
                    "-l",
                    str(root / "server.log"),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                )
                break
            except ClusterError:
                if attempt == 2:
                    raise
        return cluster
    except BaseException:
        cluster.stop()
        raise
