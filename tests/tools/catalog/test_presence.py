"""A command that reads the catalog refuses a home without one, saying where it looked and what to do, and leaves
nothing behind in the folder it was run from."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.warm_start import cleared
from tools.catalog.presence import NoCatalog, require_embedded_catalog
from tools.settings import ProvenanceSettings

ROOT = Path(__file__).resolve().parents[3]
LINEAGE = ["lineage", "--dataset", "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"]


def _provenance(cwd: Path, *args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not cleared(k, ("PROVENANCE_", "DATAHUB_"))}
    env["PYTHONPATH"] = str(ROOT)  # run from another folder, as a user would
    if home is not None:
        env["PROVENANCE_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        [*LINEAGE, "--field", "amount"],
        ["ask", "What happens if payments.public.transactions.amount is sent in cents?"],
    ],
)
def test_outside_the_repository_a_command_refuses_and_leaves_no_home(tmp_path: Path, args: list[str]) -> None:
    done = _provenance(tmp_path, *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"no catalog at {tmp_path / '.provenance' / 'catalog.db'}" in done.stderr
    assert "PROVENANCE_HOME is not set, so the home is .provenance in the current folder" in done.stderr
    assert "provenance seed" in done.stderr and "PROVENANCE_CATALOG=datahub" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_empty_catalog_file_is_refused_too(seeded_template: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(seeded_template / "catalog.db", home / "catalog.db")
    with sqlite3.connect(home / "catalog.db") as conn:
        conn.execute("DELETE FROM metadata_aspect_v2")
    conn.close()
    with pytest.raises(NoCatalog, match=rf"the catalog at {home / 'catalog.db'} is empty \(PROVENANCE_HOME="):
        require_embedded_catalog(ProvenanceSettings(provenance_home=home))


def test_the_seeded_catalog_is_accepted(seeded_template: Path) -> None:
    require_embedded_catalog(ProvenanceSettings(provenance_home=seeded_template))
