"""The binding keys in the DataHub model's `mlModelProperties.customProperties`.

DataHub's `mlflow` source copies a version's tags there and rewrites the whole aspect at every ingestion, so the
MLflow tags are what lasts; writing the keys into DataHub as well only saves waiting for the next ingestion. On the
embedded catalog the aspect is read from the DataHub Lite file and written back with the keys merged (everything
else kept) with the DataHub SDK; on a real DataHub the same is done through the SDK's graph client, and only when
a token is configured.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("DATAHUB_TELEMETRY_ENABLED", "false")

from datahub.emitter.mcp import MetadataChangeProposalWrapper  # noqa: E402
from datahub.lite.lite_util import get_datahub_lite  # noqa: E402
from datahub.metadata.schema_classes import MLModelPropertiesClass  # noqa: E402

from tools.embedded.store import SQLITE_OPTIONS  # noqa: E402

ASPECT = "mlModelProperties"


@dataclass(frozen=True)
class SyncOutcome:
    written: bool
    message: str


def lite_properties(lite_db: Path, urn: str) -> dict[str, str] | None:
    """The model's customProperties in a DataHub Lite file; None when the file has no such model."""
    if not lite_db.is_file():
        return None
    lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(lite_db), "read_only": True}})
    try:
        found = lite.get(urn, aspects=[ASPECT], typed=True)
    finally:
        lite.close()
    aspect = found.get(ASPECT) if found else None
    if not isinstance(aspect, MLModelPropertiesClass):
        return None
    return dict(aspect.customProperties or {})


def merge_into_lite(lite_db: Path, urn: str, keys: dict[str, str]) -> SyncOutcome:
    """Merge `keys` into the model's customProperties in the Lite file (the embedded catalog)."""
    if not lite_db.is_file():
        return SyncOutcome(False, f"no catalog file at {lite_db}: DataHub gets the keys at the next mlflow ingestion")
    lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(lite_db), "options": SQLITE_OPTIONS}})
    try:
        found = lite.get(urn, aspects=[ASPECT], typed=True)
        aspect = found.get(ASPECT) if found else None
        if not isinstance(aspect, MLModelPropertiesClass):
            return SyncOutcome(
                False,
                f"{urn} is not in the catalog {lite_db} yet: DataHub's mlflow ingestion will bring it with the keys",
            )
        merged = {**(aspect.customProperties or {}), **keys}
        if merged == (aspect.customProperties or {}):
            return SyncOutcome(False, f"{urn} in {lite_db} already carries these keys")
        aspect.customProperties = merged
        lite.write(MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect))
    finally:
        lite.close()
    return SyncOutcome(True, f"merged into {ASPECT}.customProperties of {urn} in the DataHub Lite file {lite_db}")


def gms_properties(gms_url: str, token: str | None, urn: str) -> dict[str, str] | None:
    from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph

    with DataHubGraph(DatahubClientConfig(server=gms_url, token=token or None)) as graph:
        aspect = graph.get_aspect(urn, MLModelPropertiesClass)
    return dict(aspect.customProperties or {}) if aspect is not None else None


def merge_into_gms(gms_url: str, token: str, urn: str, keys: dict[str, str]) -> SyncOutcome:
    """The same merge on a real DataHub, through the SDK (read the aspect, write it back)."""
    from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph

    with DataHubGraph(DatahubClientConfig(server=gms_url, token=token)) as graph:
        aspect = graph.get_aspect(urn, MLModelPropertiesClass)
        if aspect is None:
            return SyncOutcome(False, f"{urn} is not in DataHub at {gms_url} yet: the next mlflow ingestion brings it")
        aspect.customProperties = {**(aspect.customProperties or {}), **keys}
        graph.emit_mcp(MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect))
    return SyncOutcome(True, f"merged into {ASPECT}.customProperties of {urn} in DataHub at {gms_url}")
