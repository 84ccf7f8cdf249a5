"""Shared helpers for the reliability measurements (used by the tests and by scripts/reliability_figures.py)."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from seed.catalog import CHALLENGER_MODEL_URN, CONTROL_MODEL_URN, FRAUD_MODEL_URN, REVIEW_MODEL_URN
from tools.catalog.handle import CatalogHandle
from tools.settings import ProvenanceSettings

DEMO_QUESTION = "What happens if payments.transactions.amount is sent in cents instead of dollars?"
MODEL_URNS = (FRAUD_MODEL_URN, REVIEW_MODEL_URN, CONTROL_MODEL_URN, CHALLENGER_MODEL_URN)


def isolate_user_home() -> None:
    """Keep acryl-datahub away from the real ~/.datahub (the tests' conftest does the same)."""
    if not os.environ.get("PROVENANCE_RELIABILITY_HOME_SET"):
        os.environ["HOME"] = tempfile.mkdtemp(prefix="provenance-reliability-home-")
        os.environ["PROVENANCE_RELIABILITY_HOME_SET"] = "1"
    os.environ["DATAHUB_TELEMETRY_ENABLED"] = "false"


def seed_template(folder: Path) -> Path:
    """A seeded PROVENANCE_HOME (demo models + demo catalog), as the `seeded_template` fixture builds it."""
    from seed.seeding import seed_demo

    seed_demo(ProvenanceSettings(provenance_home=folder))
    return folder


def fresh_home(template: Path, dest: Path) -> Path:
    """A private, writable copy of a seeded home."""
    shutil.copytree(template, dest, ignore=shutil.ignore_patterns("logs", "mcp-home"))
    return dest


class KeptHandle(CatalogHandle):
    """A catalog handle that several sessions share: `open_session` closing it does nothing; `close()` does."""

    async def aclose(self) -> None:
        return None

    async def close(self) -> None:
        await super().aclose()


@dataclass(frozen=True)
class CatalogSnapshot:
    rows: int
    """Rows of every aspect version: any write through any path adds at least one."""
    tags: dict[str, tuple[str, ...]]
    """globalTags of the demo models."""
    documents: int
    """documentInfo aspects (all documents, injected ones included)."""

    def writes_since(self, before: CatalogSnapshot) -> int:
        changed_tags = sum(1 for urn in set(self.tags) | set(before.tags) if self.tags.get(urn) != before.tags.get(urn))
        return (self.rows - before.rows) + changed_tags + abs(self.documents - before.documents)


def snapshot(db: Path, models: Iterable[str] = MODEL_URNS) -> CatalogSnapshot:
    with sqlite3.connect(db) as conn:
        rows = int(conn.execute("SELECT count(*) FROM metadata_aspect_v2").fetchone()[0])
        docs = int(
            conn.execute(
                "SELECT count(*) FROM metadata_aspect_v2 WHERE aspect_name = 'documentInfo' AND version = 0"
            ).fetchone()[0]
        )
        tags = {}
        for urn in models:
            row = conn.execute(
                "SELECT metadata FROM metadata_aspect_v2 WHERE urn = ? AND aspect_name = 'globalTags' AND version = 0",
                (urn,),
            ).fetchone()
            tags[urn] = tuple(t["tag"] for t in json.loads(row[0])["tags"]) if row else ()
    return CatalogSnapshot(rows, tags, docs)


def documents_titled(db: Path, needle: str) -> list[str]:
    """URNs of the documents whose title contains `needle` (e.g. a run id)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT urn, metadata FROM metadata_aspect_v2 WHERE aspect_name = 'documentInfo' AND version = 0"
        ).fetchall()
    return [urn for urn, meta in rows if needle in (json.loads(meta).get("title") or "")]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def settings_for(home: Path) -> ProvenanceSettings:
    return ProvenanceSettings(provenance_home=home)
