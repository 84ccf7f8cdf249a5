"""Shared fixtures. HOME points at a temporary folder so acryl-datahub never writes into the real ~/.datahub."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_HOME = tempfile.mkdtemp(prefix="provenance-test-home-")
os.environ["HOME"] = _HOME
os.environ["DATAHUB_TELEMETRY_ENABLED"] = "false"

from seed.seeding import seed_demo  # noqa: E402
from tools.settings import ProvenanceSettings  # noqa: E402


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seeded PROVENANCE_HOME, built once per test session; copy it before writing."""
    home = tmp_path_factory.mktemp("seeded-home")
    seed_demo(ProvenanceSettings(provenance_home=home))
    return home


@pytest.fixture
def seeded_home(seeded_template: Path, tmp_path: Path) -> Iterator[Path]:
    """A private, writable copy of the seeded home (catalog file + demo artifacts)."""
    import shutil

    home = tmp_path / "home"
    shutil.copytree(seeded_template, home, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    yield home


@pytest.fixture
def settings(seeded_home: Path) -> ProvenanceSettings:
    return ProvenanceSettings(provenance_home=seeded_home)
