"""scripts/system_deps.sh, run by `make test`: installs missing system packages with apt-get, or says which."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "system_deps.sh"
BASH = shutil.which("bash") or "/bin/bash"


def tool_dir(tmp_path: Path, *names: str, uid: int | None = None, fakes: tuple[str, ...] = ()) -> Path:
    """A PATH folder with only the named real commands, plus fakes: `id -u` printing `uid`, and `apt-get` / `sudo`
    that append their call (with the DEBIAN_FRONTEND they saw) to tmp_path/calls; the fake sudo then runs it."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in names:
        real = shutil.which(name)
        assert real, name
        (folder / name).symlink_to(real)
    bodies = {
        "id": f"echo {uid}",
        "apt-get": f'echo "DEBIAN_FRONTEND=${{DEBIAN_FRONTEND:-}} apt-get $*" >> "{tmp_path}/calls"',
        "sudo": f'echo "sudo $*" >> "{tmp_path}/calls"; exec "$@"',
    }
    for name in (*fakes, *(("id",) if uid is not None else ())):
        fake = folder / name
        fake.write_text(f"#!{BASH}\n{bodies[name]}\n")
        fake.chmod(0o755)
    return folder


def calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls"
    return log.read_text().splitlines() if log.exists() else []


def run(args: list[str], path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PATH", "DEBIAN_FRONTEND")} | {"PATH": str(path)}
    return subprocess.run([BASH, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60)


def test_present_binary_means_nothing_to_do(tmp_path: Path) -> None:
    present = tmp_path / "chromium"
    present.write_text("#!/bin/sh\n")
    present.chmod(0o755)
    done = run([f"{present}:chromium"], tool_dir(tmp_path, uid=1000, fakes=("apt-get", "sudo")))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert calls(tmp_path) == []  # apt-get and sudo are there, and never called


def test_without_apt_get_it_names_the_package_and_fails(tmp_path: Path) -> None:
    absent = tmp_path / "nowhere" / "chromium"
    done = run([f"{absent}:chromium", f"{tmp_path}/gone/postgres:postgresql"], tool_dir(tmp_path, uid=0))
    assert done.returncode == 1
    assert f"install Debian/Ubuntu package 'chromium' ({absent})" in done.stderr
    assert "install Debian/Ubuntu package 'postgresql'" in done.stderr
    assert "apt-get is not available" in done.stderr


@pytest.mark.parametrize(("uid", "sudo"), [(0, False), (1000, True)], ids=["root", "user"])
def test_missing_binary_is_installed_with_apt_get_noninteractively(tmp_path: Path, uid: int, sudo: bool) -> None:
    absent, present = tmp_path / "nowhere" / "chromium", tmp_path / "psql"
    present.write_text("#!/bin/sh\n")
    present.chmod(0o755)
    done = run(
        [f"{absent}:chromium", f"{present}:postgresql"], tool_dir(tmp_path, "env", uid=uid, fakes=("apt-get", "sudo"))
    )
    update, install = "apt-get update", "apt-get install -y chromium"  # only the missing package
    apt = [f"DEBIAN_FRONTEND=noninteractive {update}", f"DEBIAN_FRONTEND=noninteractive {install}"]
    if sudo:  # sudo resets the environment: DEBIAN_FRONTEND must be on its command line
        apt = [
            f"sudo env DEBIAN_FRONTEND=noninteractive {update}",
            apt[0],
            f"sudo env DEBIAN_FRONTEND=noninteractive {install}",
            apt[1],
        ]
    assert calls(tmp_path) == apt  # through sudo only when not root
    # The fake apt-get installed nothing, so the binary is still missing: that must fail, not pass silently.
    assert done.returncode == 1 and f"{absent} is still missing" in done.stderr


def test_not_root_and_no_sudo_says_what_to_install(tmp_path: Path) -> None:
    absent = tmp_path / "nowhere" / "chromium"
    done = run([f"{absent}:chromium"], tool_dir(tmp_path, uid=1000, fakes=("apt-get",)))
    assert done.returncode == 1 and calls(tmp_path) == []
    assert f"install Debian/Ubuntu package 'chromium' ({absent})" in done.stderr and "no sudo" in done.stderr


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    path = tool_dir(tmp_path, uid=0, fakes=("apt-get",))
    for args in ([], ["/usr/bin/chromium"], [":chromium"], ["/usr/bin/chromium:"]):
        done = run(args, path)
        assert done.returncode == 2 and done.stderr, args
    assert calls(tmp_path) == []


def test_make_test_runs_it() -> None:
    make = shutil.which("make")
    if make is None:  # pragma: no cover - make is how the suite is run
        return
    dry = subprocess.run([make, "-n", "test", "CHROMIUM=/opt/x/chromium"], capture_output=True, text=True, cwd=ROOT)
    wanted = "scripts/system_deps.sh '/opt/x/chromium:chromium' '/usr/lib/postgresql/*/bin/initdb:postgresql'"
    assert wanted in dry.stdout, dry.stdout + dry.stderr


def test_a_glob_binary_is_present_when_any_match_is_executable(tmp_path: Path) -> None:
    """Debian's PostgreSQL server lives in /usr/lib/postgresql/<major>/bin: the Makefile passes a glob."""
    initdb = tmp_path / "postgresql" / "15" / "bin" / "initdb"
    initdb.parent.mkdir(parents=True)
    initdb.write_text("#!/bin/sh\n")
    initdb.chmod(0o755)
    (tmp_path / "postgresql" / "13" / "bin").mkdir(parents=True)  # an older major version's folder, left empty
    path = tool_dir(tmp_path, "env", uid=0, fakes=("apt-get",))
    found = run([f"{tmp_path}/postgresql/*/bin/initdb:postgresql"], path)
    assert (found.returncode, found.stderr) == (0, "") and calls(tmp_path) == []

    initdb.chmod(0o644)  # matches, but not executable: missing, installed
    missing = run([f"{tmp_path}/postgresql/*/bin/initdb:postgresql", f"{tmp_path}/no where/*/x:other"], path)
    assert calls(tmp_path) == [
        "DEBIAN_FRONTEND=noninteractive apt-get update",
        "DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql other",
    ]
    assert missing.returncode == 1 and f"{tmp_path}/postgresql/*/bin/initdb is still missing" in missing.stderr
