"""The embedded catalog's storage: a DataHub Lite SQLite file plus the lineage index.

All access goes through one connection guarded by a lock (the HTTP server is threaded). The file stays a
plain DataHub Lite database, so anything the DataHub SDK writes into it (the `datahub-lite` sink,
`datahub lite import`, `get_datahub_lite(...).write(mcp)`) is visible here: SQLite's `data_version`
pragma tells us when another connection committed, and only then is the index rebuilt.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any

os.environ.setdefault("DATAHUB_TELEMETRY_ENABLED", "false")

from datahub.emitter.aspect import ASPECT_MAP  # noqa: E402
from datahub.emitter.mcp import MetadataChangeProposalWrapper  # noqa: E402
from datahub.emitter.serialization_helper import post_json_transform  # noqa: E402
from datahub.lite.lite_util import get_datahub_lite  # noqa: E402
from datahub.lite.sql_backed_lite import SqlBackedLite  # noqa: E402

from tools.embedded.lineage_index import INDEXED_ASPECTS, LineageIndex  # noqa: E402

log = logging.getLogger(__name__)

# WAL lets readers (the SDK, `datahub lite`, a second Provenance process) work while we write;
# synchronous=NORMAL is durable against a crashed process, which is the failure we care about here.
SQLITE_OPTIONS = {"journal_mode": "WAL", "synchronous": "NORMAL", "busy_timeout": "10000"}


class _WriterLock:
    """This process's re-entrant lock plus an exclusive lock on `<file>.lock` shared by every process writing the
    same Lite file: DataHub Lite reads the newest version and then inserts the next one, so two processes writing at
    once collided (`UNIQUE constraint failed`) and lost writes."""

    def __init__(self, thread_lock: threading.RLock, path: Path) -> None:
        self._thread_lock = thread_lock
        self._path = path
        self._depth = 0
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> bool:
        self._thread_lock.acquire()
        try:
            if self._depth == 0:
                handle = self._path.open("ab")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX)
                except BaseException:
                    handle.close()
                    raise
                self._handle = handle
            self._depth += 1
        except BaseException:
            self._thread_lock.release()
            raise
        return True

    def __exit__(self, *_exc: object) -> None:
        try:
            self._depth -= 1
            if self._depth == 0 and self._handle is not None:
                fcntl.flock(self._handle, fcntl.LOCK_UN)
                self._handle.close()
                self._handle = None
        finally:
            self._thread_lock.release()


class LiteStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(path), "options": SQLITE_OPTIONS}})
        if not isinstance(lite, SqlBackedLite):
            raise TypeError(f"expected a SQL-backed DataHub Lite, got {type(lite).__name__}")
        self._lite = lite
        self._conn = lite.sqlite_client  # type: ignore[attr-defined]
        self._lock = threading.RLock()
        self._writer = _WriterLock(self._lock, path.with_name(path.name + ".lock"))
        self.index = LineageIndex()
        self._seen_data_version = -1
        self.index_rebuilds = 0
        self._refresh_if_changed_elsewhere()

    # ---------------------------------------------------------------- consistency with other writers
    def _data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _refresh_if_changed_elsewhere(self) -> None:
        version = self._data_version()
        if version == self._seen_data_version:
            return
        started = time.perf_counter()
        rows = self._conn.execute(
            "SELECT urn, aspect_name, metadata FROM metadata_aspect_v2 WHERE version = 0 AND aspect_name IN "
            f"({','.join('?' * len(INDEXED_ASPECTS))})",
            sorted(INDEXED_ASPECTS),
        ).fetchall()
        self.index.rebuild((urn, name, json.loads(metadata)) for urn, name, metadata in rows)
        self._seen_data_version = version
        self.index_rebuilds += 1
        log.info(
            "lineage index rebuilt: %d edges in %.1f ms",
            self.index.edge_count(),
            (time.perf_counter() - started) * 1e3,
        )

    def sync(self) -> None:
        """Pick up writes made by other connections (cheap when there were none)."""
        with self._lock:
            self._refresh_if_changed_elsewhere()

    # ---------------------------------------------------------------- reads
    def aspects(self, urn: str) -> dict[str, dict[str, Any]]:
        """Latest aspects of an entity as JSON dicts (DataHub's simplified JSON)."""
        with self._lock:
            self._refresh_if_changed_elsewhere()
            rows = self._conn.execute(
                "SELECT aspect_name, metadata FROM metadata_aspect_v2 WHERE urn = ? AND version = 0", (urn,)
            ).fetchall()
        return {name: json.loads(metadata) for name, metadata in rows}

    def typed_aspects(self, urn: str) -> dict[str, Any]:
        return {
            name: ASPECT_MAP[name].from_obj(post_json_transform(value))
            for name, value in self.aspects(urn).items()
            if name in ASPECT_MAP
        }

    def aspect_version(self, urn: str, aspect_name: str, version: int) -> tuple[dict[str, Any], int] | None:
        """One stored version (0 = latest) and the number of the newest history row."""
        with self._lock:
            row = self._conn.execute(
                "SELECT metadata FROM metadata_aspect_v2 WHERE urn = ? AND aspect_name = ? AND version = ?",
                (urn, aspect_name, version),
            ).fetchone()
            newest = self._conn.execute(
                "SELECT max(version) FROM metadata_aspect_v2 WHERE urn = ? AND aspect_name = ?",
                (urn, aspect_name),
            ).fetchone()[0]
        if row is None:
            return None
        return json.loads(row[0]), int(newest or 0)

    def exists(self, urn: str) -> bool:
        with self._lock:
            self._refresh_if_changed_elsewhere()
            return (
                self._conn.execute(
                    "SELECT 1 FROM metadata_aspect_v2 WHERE urn = ? AND version = 0 LIMIT 1", (urn,)
                ).fetchone()
                is not None
            )

    def urns(self) -> Iterator[str]:
        with self._lock:
            self._refresh_if_changed_elsewhere()
            rows = self._conn.execute(
                "SELECT DISTINCT urn FROM metadata_aspect_v2 WHERE version = 0 ORDER BY urn"
            ).fetchall()
        return (row[0] for row in rows)

    def search_urns(self, needles: list[str]) -> list[str]:
        """URNs whose URN or any aspect contains every needle (case-insensitive substring match)."""
        clause = " AND ".join("instr(lower(blob), ?) > 0" for _ in needles) or "1"
        with self._lock:
            self._refresh_if_changed_elsewhere()
            rows = self._conn.execute(
                "SELECT urn FROM (SELECT urn, lower(urn) || ' ' || group_concat(lower(metadata), ' ') AS blob "
                f"FROM metadata_aspect_v2 WHERE version = 0 GROUP BY urn) WHERE {clause} ORDER BY urn",
                [needle.lower() for needle in needles],
            ).fetchall()
        return [row[0] for row in rows]

    def locked(self) -> AbstractContextManager[bool]:
        """Hold the store's (re-entrant) writer lock across a read-modify-write, in every process."""
        return self._writer

    # ---------------------------------------------------------------- writes
    def write(self, mcp: MetadataChangeProposalWrapper) -> None:
        if mcp.aspectName is None or mcp.aspect is None:
            raise ValueError(f"refusing an MCP without an aspect for {mcp.entityUrn}")
        if mcp.aspectName.endswith("Key"):
            return  # Lite derives entities from their aspects; key aspects carry nothing new
        with self._writer:
            self._refresh_if_changed_elsewhere()
            self._lite.write(mcp)
            if mcp.aspectName in INDEXED_ASPECTS and mcp.entityUrn:
                value = mcp.to_obj(simplified_structure=True)["aspect"]["json"]
                self.index.replace(mcp.entityUrn, mcp.aspectName, value)
            # Our own commits do not move data_version for this connection, so the index stays valid.

    def close(self) -> None:
        with self._lock:
            # SqlBackedLite.close() re-derives every browse edge (seconds on big files); the edges are
            # already maintained per write, so only the connection is closed.
            self._conn.close()
