"""Copies of the seeded demo catalog for the embedded DataHub tests (the shared template is never opened)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def copy_catalog(home: Path, dest: Path) -> Path:
    """Copy `<home>/catalog.db` with its WAL side files, so no committed page is left behind."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in home.glob("catalog.db*"):
        shutil.copy2(part, dest / part.name)
    return dest / "catalog.db"


@pytest.fixture(scope="module")
def shared_catalog_db(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy per test module, for tests that only read."""
    return copy_catalog(seeded_template, tmp_path_factory.mktemp("catalog"))


@pytest.fixture
def catalog_db(seeded_template: Path, tmp_path: Path) -> Path:
    """A private copy per test, for tests that write."""
    return copy_catalog(seeded_template, tmp_path / "catalog")
