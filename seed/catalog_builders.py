"""Small, pure builders for the entities and aspects the demo catalog repeats (schemas, lineage, owners…).

Every builder returns fresh SDK objects with no wall-clock values in them, so the catalog built from them is
the same on every call and re-emitting it leaves DataHub (or a DataHub Lite file) unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import datahub.metadata.schema_classes as m
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.urns import MlModelGroupUrn, MlModelUrn, SchemaFieldUrn, TagUrn

# Upstream edges carry an audit stamp; a fixed one keeps the aspect byte-identical across seeds, which is
# what lets DataHub Lite (and GMS) recognise a re-seed as "no change" instead of writing a new version.
FIXED_AUDIT_TIME_MS = 0
AUDIT_ACTOR = "urn:li:corpuser:datahub"

ColumnKind = Literal["string", "number", "boolean"]


@dataclass(frozen=True)
class Column:
    """One schema field: its logical kind drives DataHub's type, `native` is what the platform calls it."""

    name: str
    kind: ColumnKind
    native: str
    description: str | None = None


def _field_type(kind: ColumnKind) -> m.SchemaFieldDataTypeClass:
    types: dict[ColumnKind, m.StringTypeClass | m.NumberTypeClass | m.BooleanTypeClass] = {
        "string": m.StringTypeClass(),
        "number": m.NumberTypeClass(),
        "boolean": m.BooleanTypeClass(),
    }
    return m.SchemaFieldDataTypeClass(type=types[kind])


def schema_metadata(
    platform: str, schema_name: str, columns: Sequence[Column], primary_keys: Sequence[str] = ()
) -> m.SchemaMetadataClass:
    return m.SchemaMetadataClass(
        schemaName=schema_name,
        platform=f"urn:li:dataPlatform:{platform}",
        version=0,
        hash="",
        platformSchema=m.OtherSchemaClass(rawSchema=""),
        fields=[
            m.SchemaFieldClass(
                fieldPath=column.name,
                type=_field_type(column.kind),
                nativeDataType=column.native,
                description=column.description,
                nullable=False,
                isPartOfKey=column.name in primary_keys or None,
            )
            for column in columns
        ],
        primaryKeys=list(primary_keys) or None,
    )


def upstream_lineage(
    upstream: str,
    downstream: str,
    column_map: Iterable[tuple[str, str]],
    *,
    lineage_type: str = m.DatasetLineageTypeClass.TRANSFORMED,
    transform_operation: str = "IDENTITY",
) -> m.UpstreamLineageClass:
    """Dataset-level edge plus one fine-grained edge per (upstream column, downstream column) pair.

    One edge per column pair (rather than one edge over a field set) gives every column its own
    transformOperation, which Provenance reads to decide whether a mutation propagates as is.
    """
    return m.UpstreamLineageClass(
        upstreams=[
            m.UpstreamClass(
                dataset=upstream,
                type=lineage_type,
                auditStamp=m.AuditStampClass(time=FIXED_AUDIT_TIME_MS, actor=AUDIT_ACTOR),
            )
        ],
        fineGrainedLineages=[
            m.FineGrainedLineageClass(
                upstreamType=m.FineGrainedLineageUpstreamTypeClass.FIELD_SET,
                upstreams=[str(SchemaFieldUrn(upstream, source_column))],
                downstreamType=m.FineGrainedLineageDownstreamTypeClass.FIELD,
                downstreams=[str(SchemaFieldUrn(downstream, target_column))],
                transformOperation=transform_operation,
            )
            for source_column, target_column in column_map
        ],
    )


def tag_mcps(urn: str, description: str, color_hex: str) -> list[MetadataChangeProposalWrapper]:
    # The MCP server's add_tags tool refuses tags whose entity does not exist, so every tag is created.
    name = TagUrn.from_string(urn).name
    return mcps_for(urn, m.TagPropertiesClass(name=name, description=description, colorHex=color_hex))


def corp_user_mcps(urn: str, display_name: str, title: str) -> list[MetadataChangeProposalWrapper]:
    # Owners are bare URNs on assets; the entity gives them a display name in DataHub and in MCP answers.
    return mcps_for(urn, m.CorpUserInfoClass(active=True, displayName=display_name, title=title))


def corp_group_mcps(urn: str, display_name: str, description: str) -> list[MetadataChangeProposalWrapper]:
    info = m.CorpGroupInfoClass(admins=[], members=[], groups=[], displayName=display_name, description=description)
    return mcps_for(urn, info)


def ownership(*owners: tuple[str, str]) -> m.OwnershipClass:
    """`owners` are (owner urn, OwnershipTypeClass value) pairs; no lastModified, to stay deterministic."""
    return m.OwnershipClass(owners=[m.OwnerClass(owner=urn, type=owner_type) for urn, owner_type in owners])


def mcps_for(urn: str, *aspects: m._Aspect) -> list[MetadataChangeProposalWrapper]:
    """One UPSERT per aspect: DataHub Lite rejects patches, and a whole-aspect UPSERT is idempotent."""
    return [MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect) for aspect in aspects]


def ml_model_group_mcps(urn: str, description: str, owners: m.OwnershipClass) -> list[MetadataChangeProposalWrapper]:
    name = MlModelGroupUrn.from_string(urn).name
    return mcps_for(urn, m.MLModelGroupPropertiesClass(name=name, description=description), owners)


def ml_model_mcps(
    urn: str,
    *,
    description: str,
    model_type: str,
    tags: Sequence[str],
    features: Sequence[str],
    group: str,
    custom_properties: Mapping[str, str],
    owners: m.OwnershipClass,
) -> list[MetadataChangeProposalWrapper]:
    """The model with its feature edges (`mlFeatures`, Consumes) and group membership (`groups`, MemberOf).

    The MLflow ingestion source never writes `mlFeatures`, so the model → feature edge is emitted here.
    """
    properties = m.MLModelPropertiesClass(
        name=MlModelUrn.from_string(urn).name,
        description=description,
        type=model_type,
        tags=list(tags),
        mlFeatures=list(features),
        groups=[group],
        customProperties=dict(custom_properties),
    )
    return mcps_for(urn, properties, owners)


def feature_table_mcps(
    table_urn: str,
    dataset_urn: str,
    features: Sequence[tuple[str, str, str]],
    description: str,
    owners: m.OwnershipClass,
) -> list[MetadataChangeProposalWrapper]:
    """MLFeatures, then the MLFeatureTable listing them; `features` are (urn, MLFeatureDataType, description).

    Each feature's `sources` (DerivedFrom) is the lineage edge from the feature dataset to the feature.
    """
    mcps = [
        MetadataChangeProposalWrapper(
            entityUrn=urn,
            aspect=m.MLFeaturePropertiesClass(sources=[dataset_urn], dataType=data_type, description=text),
        )
        for urn, data_type, text in features
    ]
    table = m.MLFeatureTablePropertiesClass(description=description, mlFeatures=[urn for urn, _, _ in features])
    return mcps + mcps_for(table_urn, table, owners)
