"""Refusing to read a catalog that is not there. A home without a catalog file (a command run outside the folder
whose `.provenance` has one, or before `provenance seed`) would otherwise start an empty embedded catalog and
answer "nothing depends on this field": an unknown is never a default."""

from __future__ import annotations

import sqlite3

from tools.errors import BadRequest
from tools.settings import ProvenanceSettings


class NoCatalog(BadRequest):
    """The embedded catalog this home reads has no file or no entity."""


def where_the_home_is(settings: ProvenanceSettings) -> str:
    if "provenance_home" in settings.model_fields_set:  # from $PROVENANCE_HOME, or given by the caller
        return f"PROVENANCE_HOME={settings.home}"
    return f"PROVENANCE_HOME is not set, so the home is .provenance in the current folder ({settings.home})"


def _entities(path: str) -> int:
    # immutable: reading must not create the -wal and -shm files a WAL database otherwise gets (nothing written)
    with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as conn:
        count = conn.execute("SELECT COUNT(DISTINCT urn) FROM metadata_aspect_v2").fetchone()[0]
    conn.close()
    return int(count)


def require_readable_catalog(settings: ProvenanceSettings) -> None:
    """Before a command that reads the catalog creates anything in the home: the embedded catalog it would start
    must have entities (a DataHub server, or a served catalog, answers for itself)."""
    if settings.provenance_catalog != "embedded":
        return
    try:
        require_embedded_catalog(settings)  # the file first: a few milliseconds, no MCP stack imported
    except NoCatalog:
        from tools.catalog.served import find_served

        if find_served(settings) is None:
            raise


def require_embedded_catalog(settings: ProvenanceSettings) -> None:
    """Raise NoCatalog, saying where it looked and what to do, unless the embedded catalog has entities."""
    path = settings.lite_db
    if not path.is_file():
        problem = f"no catalog at {path}"
    else:
        try:
            count = _entities(str(path))
        except sqlite3.DatabaseError as exc:
            raise NoCatalog(f"{path} is not a DataHub Lite catalog ({exc}); {where_the_home_is(settings)}") from exc
        if count:
            return
        problem = f"the catalog at {path} is empty"
    raise NoCatalog(
        f"{problem} ({where_the_home_is(settings)}). Point PROVENANCE_HOME at the home whose catalog you mean, "
        "run `provenance seed` for the demo catalog or `provenance catalog ingest RECIPE` to fill this one from "
        "your sources, or read a DataHub server with PROVENANCE_CATALOG=datahub and DATAHUB_GMS_URL"
    )
