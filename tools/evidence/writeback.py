"""Publishing a verdict to DataHub: replace each tested model's provenance:* tag and save one linked impact
document. Only called after a person approved (the agent's approval node or an explicit `provenance publish`).
Idempotent: tags are replaced, not appended, and the document URN from an earlier attempt is reused.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from tools.catalog.datahub import CatalogReader, CatalogWriter
from tools.catalog.entity import EntitySummary
from tools.catalog.session import CatalogError
from tools.evidence.schema import Evidence, PublicationRecord

STATUS_TAG_PREFIX = "urn:li:tag:provenance:"
MAX_DOCUMENT_CHARS = 60_000  # the MCP server's response budget; the full report stays in the run folder


def status_tag(verdict: str) -> str:
    return f"{STATUS_TAG_PREFIX}{verdict}"


def document_title(evidence: Evidence) -> str:
    req = evidence.request
    dataset = req.dataset_urn.split(",")[1] if req.dataset_urn.count(",") >= 2 else req.dataset_urn
    return f"Provenance {evidence.verdict}: {req.op} on {dataset}.{req.field} (run {evidence.run_id})"


def planned_writes(evidence: Evidence) -> list[str]:
    """Human-readable list of every write, shown in the approval request before anything happens."""
    writes = [
        f"set tag {status_tag(m.verdict)} on {m.urn} (removing any other provenance:* tag)" for m in evidence.models
    ]
    assets = [m.urn for m in evidence.models] + [evidence.request.dataset_urn]
    writes.append(
        f"save document '{document_title(evidence)}' linked to {', '.join(assets)}"
        + (f" (updating {evidence.publication.document_urn})" if evidence.publication.document_urn else "")
    )
    return writes


def _saved_earlier(entities: Iterable[EntitySummary | None], title: str) -> str | None:
    for entity in entities:
        if entity is None:
            continue
        for doc in (entity.raw.get("relatedDocuments") or {}).get("documents") or []:
            if (doc.get("info") or {}).get("title") == title:
                return str(doc["urn"])
    return None


async def publish_evidence(
    reader: CatalogReader, writer: CatalogWriter, evidence: Evidence, report: str, decided_by: str
) -> PublicationRecord:
    """Reads through `reader` (the read-only session), writes through `writer` (the publish step's writer session,
    on the same endpoint). A catalog failure is recorded in the returned record, never raised."""
    record = evidence.publication.model_copy(deep=True)
    record.attempts += 1
    record.decided_by = decided_by
    record.updated_at = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        current = await reader.get_entities([m.urn for m in evidence.models])
        for model in evidence.models:
            wanted = status_tag(model.verdict)
            entity = current.get(model.urn)
            if entity is None:
                raise CatalogError(f"model {model.urn} is no longer in the catalog")
            stale = [t for t in entity.tags if t.startswith(STATUS_TAG_PREFIX) and t != wanted]
            if stale:
                await writer.remove_tags(stale, [model.urn])
            if wanted not in entity.tags:
                await writer.add_tags([wanted], [model.urn])
            record.tags[model.urn] = wanted
        content = (
            report
            if len(report) <= MAX_DOCUMENT_CHARS
            else (report[:MAX_DOCUMENT_CHARS] + f"\n\n… truncated; full report in run {evidence.run_id}")
        )
        record.document_urn = await writer.save_document(
            title=document_title(evidence),
            content=content,
            document_type="Analysis",
            related_assets=[m.urn for m in evidence.models] + [evidence.request.dataset_urn],
            # An attempt that died after saving the document but before the evidence recorded its URN left it
            # in the catalog: find it by its title (which names the run) rather than save a second one.
            urn=record.document_urn or _saved_earlier(current.values(), document_title(evidence)),
            topics=["provenance", f"provenance-{evidence.verdict.lower()}"],
        )
    except CatalogError as exc:
        record.status = "failed"
        record.message = str(exc)
        return record
    record.status = "published"
    record.message = f"tagged {len(record.tags)} model(s), document {record.document_urn}"
    return record
