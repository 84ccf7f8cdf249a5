"""Shared helpers for agent tests: read the catalog file directly (not through Provenance) to prove writes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from seed.catalog import FRAUD_MODEL_URN

DEMO_QUESTION = "What happens if payments.transactions.amount is sent in cents instead of dollars?"


def model_tags(db: Path, urn: str = FRAUD_MODEL_URN) -> list[str]:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT metadata FROM metadata_aspect_v2 WHERE urn = ? AND aspect_name = 'globalTags' AND version = 0",
            (urn,),
        ).fetchone()
    return [t["tag"] for t in json.loads(row[0])["tags"]] if row else []


def documents(db: Path) -> list[dict[str, object]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT urn, metadata FROM metadata_aspect_v2 WHERE aspect_name = 'documentInfo' AND version = 0 "
            "AND urn LIKE 'urn:li:document:shared-%'"
        ).fetchall()
    return [{"urn": urn, **json.loads(meta)} for urn, meta in rows]


def catalog_write_count(db: Path) -> int:
    """Rows of every aspect version: any write through any path adds at least one."""
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM metadata_aspect_v2").fetchone()[0])
