"""PATCH proposals for lineage, sent by the real SDK (patch builders, incremental lineage) over HTTP.

Expected values follow GMS's UpstreamLineageTemplate: upstreams keyed by `dataset`, fine-grained lineages keyed
by transformOperation / downstream field / query, so an add keeps every other entry, an add of an existing key
replaces that entry and a remove takes only the addressed entry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.rest_emitter import DatahubRestEmitter
from datahub.ingestion.api.common import PipelineContext
from datahub.ingestion.api.incremental_lineage_helper import (
    IncrementalLineageConfigMixin,
    convert_upstream_lineage_to_patch,
)
from datahub.ingestion.api.source import SourceReport
from datahub.ingestion.api.workunit_processor import WorkunitProcessorContext
from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph
from datahub.ingestion.workunit_processors.auto_incremental_lineage import AutoIncrementalLineageProcessor
from datahub.metadata.urns import DatasetUrn, SchemaFieldUrn
from datahub.sdk.main_client import DataHubClient
from datahub.specific.dataset import DatasetPatchBuilder
from mcp_server_datahub import graphql_helpers
from mcp_server_datahub.tools.lineage import get_lineage

from seed.catalog import FEATURE_TABLE_DATASET_URN, KAFKA_TOPIC_URN, POSTGRES_TABLE_URN, STATUS_TAG_URNS
from tools.embedded.server import RunningCatalog, embedded_catalog

# A path with "/" and "~" in it: the SDK escapes them as ~1 and ~0 in the patch path.
S3_URN = str(DatasetUrn("s3", "lake/raw~v2", "PROD"))
DBT_URN = str(DatasetUrn("dbt", "analytics.transaction_features", "PROD"))
FIELD_SET, FIELD = m.FineGrainedLineageUpstreamTypeClass.FIELD_SET, m.FineGrainedLineageDownstreamTypeClass.FIELD


def field(dataset: str, column: str) -> str:
    return str(SchemaFieldUrn(dataset, column))


def fgl(up: str, down: str, operation: str | None = None, **kwargs: Any) -> m.FineGrainedLineageClass:
    return m.FineGrainedLineageClass(FIELD_SET, FIELD, [up], [down], transformOperation=operation, **kwargs)


@pytest.fixture
def catalog(catalog_db: Path) -> Iterator[RunningCatalog]:
    with embedded_catalog(catalog_db) as running:
        yield running


@pytest.fixture
def graph(catalog: RunningCatalog) -> Iterator[DataHubGraph]:
    g = DataHubGraph(DatahubClientConfig(server=catalog.url, token=catalog.token))
    yield g
    g.close()


@pytest.fixture
def emitter(catalog: RunningCatalog) -> Iterator[DatahubRestEmitter]:
    e = DatahubRestEmitter(catalog.url, token=catalog.token)
    e.test_connection()
    yield e
    e.close()


def lineage_of(graph: DataHubGraph, urn: str) -> m.UpstreamLineageClass:
    aspect = graph.get_aspect(urn, m.UpstreamLineageClass)
    assert aspect is not None
    return aspect


def downstream_urns(graph: DataHubGraph, urn: str, hops: int = 1) -> list[str]:
    with graphql_helpers.with_datahub_client(DataHubClient(graph=graph)):
        found = get_lineage(urn, upstream=False, max_hops=hops)
    return [hit["entity"]["urn"] for hit in found["downstreams"]["searchResults"]]


def test_what_the_sdk_emitter_sends(
    catalog: RunningCatalog, emitter: DatahubRestEmitter, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []
    ingest = catalog.gms._ingest
    monkeypatch.setattr(catalog.gms, "_ingest", lambda proposal: (seen.append(proposal), ingest(proposal)))
    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN).add_upstream_lineage(m.UpstreamClass(S3_URN, "TRANSFORMED"))
    emitter.emit_mcps(patch.add_tag(m.TagAssociationClass(STATUS_TAG_URNS["BLOCK"])).build())

    by_aspect = {proposal["aspectName"]: proposal for proposal in seen}
    assert set(by_aspect) == {"upstreamLineage", "globalTags"}
    for proposal in by_aspect.values():
        assert proposal["changeType"] == "PATCH"
        assert proposal["entityUrn"] == POSTGRES_TABLE_URN
        assert proposal["aspect"]["contentType"] == "application/json-patch+json"
    # A bare RFC 6902 list, path components escaped ...
    assert json.loads(by_aspect["upstreamLineage"]["aspect"]["value"]) == [
        {
            "op": "add",
            "path": "/upstreams/urn:li:dataset:(urn:li:dataPlatform:s3,lake~1raw~0v2,PROD)",
            "value": {
                "auditStamp": {"time": 0, "actor": "urn:li:corpuser:unknown"},
                "dataset": S3_URN,
                "type": "TRANSFORMED",
            },
        }
    ]
    # ... or a GenericJsonPatch envelope naming the array's key fields.
    assert json.loads(by_aspect["globalTags"]["aspect"]["value"]) == {
        "arrayPrimaryKeys": {"tags": ["attribution\u241fsource", "tag"]},
        "patch": [
            {"op": "add", "path": f"/tags//{STATUS_TAG_URNS['BLOCK']}", "value": {"tag": STATUS_TAG_URNS["BLOCK"]}}
        ],
    }


def test_adding_upstreams_keeps_the_old_ones_and_feeds_the_reverse_index(
    catalog: RunningCatalog, emitter: DatahubRestEmitter, graph: DataHubGraph
) -> None:
    before = lineage_of(graph, POSTGRES_TABLE_URN)
    assert [u.dataset for u in before.upstreams] == [KAFKA_TOPIC_URN]
    emitter.emit_mcp(MetadataChangeProposalWrapper(entityUrn=S3_URN, aspect=m.StatusClass(removed=False)))
    new_column = fgl(field(S3_URN, "amount_cents"), field(POSTGRES_TABLE_URN, "amount"), "SCALE")
    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN).add_upstream_lineage(m.UpstreamClass(S3_URN, "TRANSFORMED"))
    emitter.emit_mcps(patch.add_fine_grained_lineage(new_column).build())

    after = lineage_of(graph, POSTGRES_TABLE_URN)
    assert after.upstreams == [before.upstreams[0], m.UpstreamClass(S3_URN, "TRANSFORMED")]
    new_column.confidenceScore = 1.0
    assert after.fineGrainedLineages == [*(before.fineGrainedLineages or []), new_column]

    index = catalog.gms.store.index
    assert index.neighbours(S3_URN, "DOWNSTREAM", "entity") == {POSTGRES_TABLE_URN}
    assert index.neighbours(KAFKA_TOPIC_URN, "DOWNSTREAM", "entity") == {POSTGRES_TABLE_URN}
    assert index.neighbours(POSTGRES_TABLE_URN, "UPSTREAM", "entity") == {KAFKA_TOPIC_URN, S3_URN}
    assert index.neighbours(field(S3_URN, "amount_cents"), "DOWNSTREAM", "field") == {
        field(POSTGRES_TABLE_URN, "amount")
    }
    # The MCP server's lineage tool, over HTTP: the new upstream now reaches the table and what it feeds.
    assert downstream_urns(graph, S3_URN) == [POSTGRES_TABLE_URN]
    assert downstream_urns(graph, S3_URN, hops=2) == [POSTGRES_TABLE_URN, FEATURE_TABLE_DATASET_URN]


def test_an_existing_key_is_replaced_and_a_remove_takes_only_its_entry(
    catalog: RunningCatalog, emitter: DatahubRestEmitter, graph: DataHubGraph
) -> None:
    before = lineage_of(graph, POSTGRES_TABLE_URN)
    replacement = m.UpstreamClass(KAFKA_TOPIC_URN, "TRANSFORMED", auditStamp=m.AuditStampClass(5, "urn:li:corpuser:x"))
    emitter.emit_mcps(DatasetPatchBuilder(POSTGRES_TABLE_URN).add_upstream_lineage(replacement).build())
    assert lineage_of(graph, POSTGRES_TABLE_URN).upstreams == [replacement]

    amount = field(POSTGRES_TABLE_URN, "amount")
    (amount_edge,) = [f for f in before.fineGrainedLineages or [] if f.downstreams == [amount]]
    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN).remove_upstream_lineage(KAFKA_TOPIC_URN)
    emitter.emit_mcps(patch.remove_fine_grained_lineage(amount_edge).build())

    after = lineage_of(graph, POSTGRES_TABLE_URN)
    assert after.upstreams == []
    assert after.fineGrainedLineages == [f for f in before.fineGrainedLineages or [] if f is not amount_edge]
    index = catalog.gms.store.index
    assert index.neighbours(KAFKA_TOPIC_URN, "DOWNSTREAM", "entity") == set()
    assert index.neighbours(field(KAFKA_TOPIC_URN, "amount"), "DOWNSTREAM", "field") == set()
    # Column edges the patch did not address stay, as in GMS.
    assert index.neighbours(field(KAFKA_TOPIC_URN, "country"), "DOWNSTREAM", "field") == {
        field(POSTGRES_TABLE_URN, "country")
    }


def test_column_edges_merge_per_operation_downstream_and_query(
    emitter: DatahubRestEmitter, graph: DataHubGraph
) -> None:
    before = lineage_of(graph, POSTGRES_TABLE_URN).fineGrainedLineages or []
    amount, kafka_amount, s3_amount = (
        field(POSTGRES_TABLE_URN, "amount"),
        field(KAFKA_TOPIC_URN, "amount"),
        field(S3_URN, "amount"),
    )
    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN)
    patch.add_fine_grained_lineage(fgl(s3_amount, amount, "IDENTITY"))  # same key as the seeded edge: merged
    patch.add_fine_grained_lineage(fgl(s3_amount, amount, "IDENTITY", query="urn:li:query:q1", confidenceScore=0.5))
    emitter.emit_mcps(patch.build())

    after = lineage_of(graph, POSTGRES_TABLE_URN).fineGrainedLineages or []
    assert len(after) == len(before) + 1
    (merged,) = [f for f in after if f.downstreams == [amount] and f.query is None]
    assert merged.upstreams == [kafka_amount, s3_amount]
    (queried,) = [f for f in after if f.query is not None]
    assert queried == fgl(s3_amount, amount, "IDENTITY", query="urn:li:query:q1", confidenceScore=0.5)
    assert after.index(queried) == after.index(merged) + 1  # filed under the same operation and downstream

    removal = DatasetPatchBuilder(POSTGRES_TABLE_URN).remove_fine_grained_lineage(fgl(kafka_amount, amount, "IDENTITY"))
    emitter.emit_mcps(removal.build())
    after = lineage_of(graph, POSTGRES_TABLE_URN).fineGrainedLineages or []
    assert [f.upstreams for f in after if f.downstreams == [amount]] == [[s3_amount], [s3_amount]]


def test_dbt_style_incremental_lineage_adds_to_the_warehouse_lineage(
    catalog: RunningCatalog, emitter: DatahubRestEmitter, graph: DataHubGraph
) -> None:
    """dbt (incremental_lineage: true) patches the dbt model -> warehouse table edge onto the table."""
    before = lineage_of(graph, FEATURE_TABLE_DATASET_URN)
    dbt_edge = fgl(field(DBT_URN, "txn_amount"), field(FEATURE_TABLE_DATASET_URN, "txn_amount"), confidenceScore=0.9)
    lineage = m.UpstreamLineageClass(upstreams=[m.UpstreamClass(DBT_URN, "COPY")], fineGrainedLineages=[dbt_edge])
    workunit = convert_upstream_lineage_to_patch(FEATURE_TABLE_DATASET_URN, lineage, None)
    emitter.emit(workunit.metadata)  # type: ignore[arg-type]

    after = lineage_of(graph, FEATURE_TABLE_DATASET_URN)
    assert after.upstreams == [*before.upstreams, m.UpstreamClass(DBT_URN, "COPY")]
    dbt_edge.transformOperation = "NONE"  # GMS writes the key it filed the edge under
    assert after.fineGrainedLineages == [*(before.fineGrainedLineages or []), dbt_edge]
    assert catalog.gms.store.index.neighbours(DBT_URN, "DOWNSTREAM", "entity") == {FEATURE_TABLE_DATASET_URN}
    assert POSTGRES_TABLE_URN in catalog.gms.store.index.neighbours(FEATURE_TABLE_DATASET_URN, "UPSTREAM", "entity")

    emitter.emit(workunit.metadata)  # type: ignore[arg-type]  # a re-run changes nothing
    assert lineage_of(graph, FEATURE_TABLE_DATASET_URN) == after


def test_auto_incremental_lineage_processor_output_is_accepted(
    emitter: DatahubRestEmitter, graph: DataHubGraph
) -> None:
    ctx = WorkunitProcessorContext(
        source_report=SourceReport(),
        pipeline_context=PipelineContext(run_id="patch-test"),
        source_config=IncrementalLineageConfigMixin(incremental_lineage=True),
        platform=None,
    )
    assert AutoIncrementalLineageProcessor.should_enable(ctx)
    stream = [
        MetadataChangeProposalWrapper(
            entityUrn=KAFKA_TOPIC_URN, aspect=m.UpstreamLineageClass(upstreams=[m.UpstreamClass(S3_URN, "COPY")])
        ).as_workunit(),
        MetadataChangeProposalWrapper(entityUrn=KAFKA_TOPIC_URN, aspect=m.StatusClass(removed=False)).as_workunit(),
    ]
    out = list(AutoIncrementalLineageProcessor.create(ctx).process(stream))
    assert [wu.metadata.changeType for wu in out] == ["PATCH", "UPSERT"]  # type: ignore[union-attr]
    assert graph.get_aspect(KAFKA_TOPIC_URN, m.UpstreamLineageClass) is None  # the patch will create it
    for wu in out:
        emitter.emit(wu.metadata)  # type: ignore[arg-type]
    assert lineage_of(graph, KAFKA_TOPIC_URN) == m.UpstreamLineageClass(
        upstreams=[m.UpstreamClass(S3_URN, "COPY")], fineGrainedLineages=[]
    )
    assert downstream_urns(graph, S3_URN) == [KAFKA_TOPIC_URN]
