"""Publishing a tolerance map, after a person approved: on the scanned source column, the structured property
`io.provenance.tolerance` with one value per production model downstream ("fraud_detector: BLOCK from ×1.5 (×1.2
tolerated); …; scanned 2026-12-05, policy default v2, scan scan-…"), and one impact document linked to the dataset
and the models. Idempotent: the upsert replaces the property's values, and the column's document (found by its
title, which names the column) is updated in place by a retry or a later scan, never duplicated.
"""

from __future__ import annotations

from datetime import UTC, datetime

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import StructuredPropertyDefinitionClass

from tools.catalog.datahub import CatalogReader, CatalogWriter
from tools.catalog.session import CatalogError
from tools.evidence.writeback import MAX_DOCUMENT_CHARS
from tools.tolerance.schema import ModelScan, ScanPublication, ScanResult

TOLERANCE_PROPERTY = "io.provenance.tolerance"
TOLERANCE_PROPERTY_URN = f"urn:li:structuredProperty:{TOLERANCE_PROPERTY}"


def definition_mcp() -> MetadataChangeProposalWrapper:
    """The property's definition (seeded into the demo catalog; on another catalog, created once by its admin)."""
    return MetadataChangeProposalWrapper(
        entityUrn=TOLERANCE_PROPERTY_URN,
        aspect=StructuredPropertyDefinitionClass(
            qualifiedName=TOLERANCE_PROPERTY,
            displayName="Provenance tolerance",
            description="How much change each production model downstream of this column takes before Provenance's "
            "policy says WARNING or BLOCK, one value per model, from `provenance scan`.",
            valueType="urn:li:dataType:datahub.string",
            cardinality="MULTIPLE",
            entityTypes=["urn:li:entityType:datahub.schemaField"],
        ),
    )


def field_urn(result: ScanResult) -> str:
    return f"urn:li:schemaField:({result.dataset_urn},{result.field})"


def tolerance_values(result: ScanResult) -> list[str]:
    day = result.created_at[:10]
    tail = f"scanned {day}, policy {result.policy.name} v{result.policy.version}, scan {result.scan_id}"
    return [f"{_model_text(m)}; {tail}" for m in result.models]


def _model_text(model: ModelScan) -> str:
    if model.not_scanned:
        return f"{model.name}: not scanned (INCOMPLETE: {model.not_scanned})"
    parts = [f"{a.axis} {a.levels_text(', ')}" for a in model.axes]
    return f"{model.name}: " + "; ".join(parts)


def document_title(result: ScanResult) -> str:
    dataset = result.dataset_urn.split(",")[1] if result.dataset_urn.count(",") >= 2 else result.dataset_urn
    return f"Provenance tolerance map: {dataset}.{result.field}"  # one per column: a re-scan updates it in place


def planned_writes(result: ScanResult) -> list[str]:
    writes = [f"set structured property {TOLERANCE_PROPERTY_URN} on {field_urn(result)} to:"]
    writes += [f"  {value}" for value in tolerance_values(result)]
    assets = [result.dataset_urn, *(m.urn for m in result.models)]
    writes.append(f"save document '{document_title(result)}' linked to {', '.join(assets)}")
    return writes


async def publish_scan(
    reader: CatalogReader, writer: CatalogWriter, result: ScanResult, report: str, decided_by: str
) -> ScanPublication:
    """A catalog failure is recorded in the returned publication, never raised: the scan's evidence stays."""
    column = field_urn(result)
    record = ScanPublication(decided_by=decided_by, field_urn=column, values=tolerance_values(result))
    record.updated_at = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        await writer.add_structured_properties({TOLERANCE_PROPERTY_URN: record.values}, [column])
        assets = [result.dataset_urn, *(m.urn for m in result.models)]
        current = await reader.get_entities(assets)
        earlier = next(
            (
                str(doc["urn"])
                for entity in current.values()
                if entity is not None
                for doc in (entity.raw.get("relatedDocuments") or {}).get("documents") or []
                if (doc.get("info") or {}).get("title") == document_title(result)
            ),
            None,
        )
        record.document_urn = await writer.save_document(
            title=document_title(result),
            content=report[:MAX_DOCUMENT_CHARS],
            document_type="Analysis",
            related_assets=assets,
            urn=earlier,
            topics=["provenance", "provenance-tolerance"],
        )
    except CatalogError as exc:
        record.status, record.message = "failed", str(exc)
        return record
    record.status = "published"
    record.message = f"{len(record.values)} value(s) on {record.field_urn}, document {record.document_urn}"
    return record
