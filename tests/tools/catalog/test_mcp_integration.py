"""The real pinned mcp-server-datahub over stdio, against the embedded endpoint, for every wrapped tool."""

from __future__ import annotations

import asyncio
from pathlib import Path

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.lite.lite_util import get_datahub_lite

from seed.catalog import (
    CONTROL_MODEL_URN,
    FEATURE_TABLE_DATASET_URN,
    FRAUD_MODEL_URN,
    POSTGRES_TABLE_URN,
    STATUS_TAG_URNS,
)
from tools.catalog.connection import open_catalog, open_writer
from tools.catalog.datahub import CatalogReader, CatalogWriter
from tools.catalog.sdk_tools import SDK_ASPECTS_TOOL
from tools.catalog.session import READ_TOOLS, WRITE_TOOLS, CatalogError, WriterSession
from tools.settings import ProvenanceSettings


def test_every_wrapped_tool_reads_and_writes_through_the_real_server(settings: ProvenanceSettings) -> None:
    async def scenario() -> None:
        async with open_catalog(settings) as catalog, open_writer(catalog) as writer_session:
            reader, writer = CatalogReader(catalog.session), CatalogWriter(writer_session)

            entities = await reader.get_entities([FRAUD_MODEL_URN, POSTGRES_TABLE_URN])
            model = entities[FRAUD_MODEL_URN]
            assert model is not None and model.name == "fraud_detector"
            assert model.custom_properties["provenance.label_column"] == "is_fraud"
            assert "urn:li:corpGroup:fraud-ml" in model.owners
            assert await reader.get_entity(FRAUD_MODEL_URN.replace("fraud_detector", "nope")) is None

            fields = await reader.list_schema_fields(POSTGRES_TABLE_URN)
            amount = next(f for f in fields if f.field_path == "amount")
            assert (amount.type, amount.native_data_type) == ("NUMBER", "numeric(12,2)")

            column_hits = await reader.get_lineage(POSTGRES_TABLE_URN, column="amount", max_hops=3)
            assert [(h.urn, h.lineage_columns) for h in column_hits] == [(FEATURE_TABLE_DATASET_URN, ["txn_amount"])]
            edges = await reader.fine_grained_lineage([FEATURE_TABLE_DATASET_URN])
            assert any(
                e.downstream.endswith(",txn_amount)") and e.transform == "IDENTITY"
                for e in edges[FEATURE_TABLE_DATASET_URN]
            )

            hits = await reader.search("fraud_detector", filter="entity_type = mlModel")
            assert FRAUD_MODEL_URN in [h.urn for h in hits]

            await writer.add_tags([STATUS_TAG_URNS["BLOCK"]], [FRAUD_MODEL_URN])
            await writer.remove_tags([STATUS_TAG_URNS["PASS"]], [FRAUD_MODEL_URN])
            doc = await writer.save_document(
                title="Impact of amount", content="## BLOCK", related_assets=[FRAUD_MODEL_URN, POSTGRES_TABLE_URN]
            )
            updated = await writer.save_document(
                title="Impact of amount (v2)", content="## BLOCK again", related_assets=[FRAUD_MODEL_URN], urn=doc
            )
            assert updated == doc

            after = await reader.get_entity(FRAUD_MODEL_URN)
            assert after is not None
            assert after.tags == [STATUS_TAG_URNS["BLOCK"]]
            assert after.related_documents == [doc]
            control = await reader.get_entity(CONTROL_MODEL_URN)
            assert control is not None and control.tags == []
            await writer.remove_tags([STATUS_TAG_URNS["BLOCK"]], [FRAUD_MODEL_URN])
            cleared = await reader.get_entity(FRAUD_MODEL_URN)
            assert cleared is not None and cleared.tags == []
            assert {c.tool for c in catalog.session.calls} >= {
                "get_entities",
                "list_schema_fields",
                "get_lineage",
                "get_aspect_history",
                "search",
            }
            assert {c.tool for c in writer_session.calls} == {"add_tags", "remove_tags", "save_document"}

    asyncio.run(scenario())

    # Read the writes back from the Lite file itself, not through Provenance.
    lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(settings.lite_db), "read_only": True}})
    docs = [u for u in lite.list_ids() if u.startswith("urn:li:document:shared-")]
    assert len(docs) == 1, "re-publishing with the URN must update, not duplicate"
    info = lite.get(docs[0], aspects=["documentInfo"])
    assert info is not None
    assert info["documentInfo"]["title"] == "Impact of amount (v2)"  # type: ignore[index]


def test_the_reader_session_cannot_write_only_a_writer_session_can(settings: ProvenanceSettings) -> None:
    """Least privilege: the reader's MCP server runs with mutations off; writes need the publish step's writer."""

    async def scenario() -> None:
        async with open_catalog(settings) as catalog:
            session = catalog.session
            assert not isinstance(session, WriterSession)
            assert set(session.tool_names) <= READ_TOOLS | {SDK_ASPECTS_TOOL}
            assert SDK_ASPECTS_TOOL in session.tool_names and "get_entities" in session.tool_names
            assert not WRITE_TOOLS & set(session.tool_names)
            arguments = {
                "add_tags": {"tag_urns": [STATUS_TAG_URNS["BLOCK"]], "entity_urns": [FRAUD_MODEL_URN]},
                "remove_tags": {"tag_urns": [STATUS_TAG_URNS["BLOCK"]], "entity_urns": [FRAUD_MODEL_URN]},
                "save_document": {
                    "document_type": "Analysis",
                    "title": "must not be written",
                    "content": "x",
                    "related_assets": [FRAUD_MODEL_URN],
                },
            }
            for tool, args in arguments.items():
                with pytest.raises(CatalogError, match=f"DataHub MCP tool {tool} writes to the catalog.*read-only"):
                    await session.call(tool, args)
            # Not just left out by Provenance: the server itself was started without its mutation tools.
            assert not WRITE_TOOLS & session.server_tools and "get_entities" in session.server_tools
            assert catalog.spec is not None
            assert catalog.spec.connection()["env"]["TOOLS_IS_MUTATION_ENABLED"] == "false"
            with pytest.raises(TypeError, match="WriterSession"):
                CatalogWriter(session)  # type: ignore[arg-type]

            async with open_writer(catalog) as writer_session:
                assert set(writer_session.tool_names) == WRITE_TOOLS <= writer_session.server_tools
                await CatalogWriter(writer_session).add_tags([STATUS_TAG_URNS["BLOCK"]], [FRAUD_MODEL_URN])
            model = await CatalogReader(session).get_entity(FRAUD_MODEL_URN)
            assert model is not None and model.tags == [STATUS_TAG_URNS["BLOCK"]]  # same endpoint, seen by the reader
            assert [c.tool for c in session.calls if c.tool in WRITE_TOOLS] == []  # the reader recorded no write

    asyncio.run(scenario())
    lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(settings.lite_db), "read_only": True}})
    assert not [u for u in lite.list_ids() if u.startswith("urn:li:document:")]


def test_metadata_written_with_the_sdk_directly_is_visible_through_mcp(settings: ProvenanceSettings) -> None:
    new_model = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,amount_anomaly,PROD)"
    feature = "urn:li:mlFeature:(fraud_features.transaction_features,txn_amount)"

    async def scenario(expect_new_model: bool) -> set[str]:
        async with open_catalog(settings) as catalog:
            hits = await CatalogReader(catalog.session).get_lineage(feature, max_hops=1)
            return {h.urn for h in hits}

    before = asyncio.run(scenario(False))
    assert new_model not in before
    lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(settings.lite_db)}})
    lite.write(
        MetadataChangeProposalWrapper(
            entityUrn=new_model, aspect=m.MLModelPropertiesClass(mlFeatures=[feature], tags=["production"])
        )
    )
    lite.close()
    after = asyncio.run(scenario(True))
    assert after == before | {new_model}


def test_sdk_write_while_the_endpoint_is_running_is_picked_up(settings: ProvenanceSettings, tmp_path: Path) -> None:
    new_model = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,late_arrival,PROD)"
    feature = "urn:li:mlFeature:(fraud_features.transaction_features,txn_amount)"

    async def scenario() -> tuple[set[str], set[str]]:
        async with open_catalog(settings) as catalog:
            reader = CatalogReader(catalog.session)
            first = {h.urn for h in await reader.get_lineage(feature, max_hops=1)}
            lite = get_datahub_lite({"type": "sqlite", "config": {"file": str(settings.lite_db)}})
            lite.write(
                MetadataChangeProposalWrapper(
                    entityUrn=new_model, aspect=m.MLModelPropertiesClass(mlFeatures=[feature])
                )
            )
            lite.close()
            second = {h.urn for h in await reader.get_lineage(feature, max_hops=1)}
            return first, second

    first, second = asyncio.run(scenario())
    assert new_model not in first and new_model in second
