"""What a warm local service was started with, so a command can tell whether it still serves what the command would
run: the installed version, the newest source file of the product's packages (an editable install changes without a
version bump), the default policies, this home's conventions, and every PROVENANCE_/DATAHUB_/MLFLOW_ setting but the
service's own. A service whose stamp differs is stopped and replaced (tools/catalog/serve_state.py). Light: no
import beyond the standard library, a few milliseconds."""

from __future__ import annotations

import hashlib
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agent", "tools", "policies", "seed")
# The service's own settings, and the home (the state file's place already names it, relative or not)
OWN_SETTINGS = ("PROVENANCE_SERVICE", "PROVENANCE_SERVICE_IDLE", "PROVENANCE_HOME")


def _installed_version() -> str:
    try:
        return version("provenance")
    except PackageNotFoundError:
        return "unknown"


def _newest_source() -> int:
    newest = 0
    for package in PACKAGES:
        for folder, _dirs, files in os.walk(ROOT / package):
            for name in files:
                if name.endswith((".py", ".yaml", ".j2")):
                    newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
    return newest


def service_stamp(home: Path) -> str:
    """The digest a service records when it starts and a command compares with its own."""
    parts = [_installed_version(), str(_newest_source())]
    for path in sorted((ROOT / "policies").glob("*.yaml")) + [home / "conventions.yaml"]:
        parts.append(hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else f"{path.name}: none")
    parts += sorted(
        f"{k}={v}"
        for k, v in os.environ.items()
        if k.startswith(("PROVENANCE_", "DATAHUB_", "MLFLOW_")) and k not in OWN_SETTINGS
    )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
