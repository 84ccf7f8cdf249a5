"""PATCH proposals for tags, properties, owners, terms, schema fields and siblings, and the ones refused (422).

Sent by the SDK's DatasetPatchBuilder through DatahubRestEmitter, or as raw proposals for the malformed cases;
expected values follow GMS's templates (GlobalTagsTemplate, OwnershipTemplate, GenericPatchTemplate, ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datahub.metadata.schema_classes as m
import pytest
import requests
from datahub.configuration.common import OperationalError
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.rest_emitter import DatahubRestEmitter
from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph
from datahub.metadata.urns import DatasetUrn
from datahub.specific.dataset import DatasetPatchBuilder
from datahub.specific.status import StatusPatchBuilder

from seed.catalog import (
    ALICE_URN,
    FRAUD_MODEL_URN,
    PAYMENTS_DATA_ENG_URN,
    PAYMENTS_PLATFORM_GROUP_URN,
    PII_TAG_URN,
    POSTGRES_TABLE_URN,
    STATUS_TAG_URNS,
    TIER1_TAG_URN,
)
from tools.embedded.server import RunningCatalog, embedded_catalog

NEW_URN = str(DatasetUrn("hive", "scratch.patched", "PROD"))
DBT_URN = str(DatasetUrn("dbt", "payments.transactions", "PROD"))
BLOCK = STATUS_TAG_URNS["BLOCK"]
TERM = "urn:li:glossaryTerm:Payments.Amount"


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
    yield e
    e.close()


def read(graph: DataHubGraph, urn: str, cls: type[Any]) -> Any:
    aspect = graph.get_aspect(urn, cls)
    assert aspect is not None, cls.ASPECT_NAME
    return aspect


def post_patch(catalog: RunningCatalog, aspect: str, value: Any, urn: str = POSTGRES_TABLE_URN) -> requests.Response:
    proposal = {
        "entityType": "dataset",
        "entityUrn": urn,
        "changeType": "PATCH",
        "aspectName": aspect,
        "aspect": {
            "value": value if isinstance(value, str) else json.dumps(value),
            "contentType": "application/json-patch+json",
        },
    }
    return requests.post(
        f"{catalog.url}/aspects?action=ingestProposal",
        data=json.dumps({"proposal": proposal}),
        headers={"Authorization": f"Bearer {catalog.token}"},
        timeout=10,
    )


def test_tags_add_replace_remove(emitter: DatahubRestEmitter, graph: DataHubGraph) -> None:
    emitter.emit_mcps(DatasetPatchBuilder(POSTGRES_TABLE_URN).add_tag(m.TagAssociationClass(BLOCK)).build())
    assert [t.tag for t in read(graph, POSTGRES_TABLE_URN, m.GlobalTagsClass).tags] == [
        TIER1_TAG_URN,
        PII_TAG_URN,
        BLOCK,
    ]

    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN).add_tag(m.TagAssociationClass(TIER1_TAG_URN, context="reviewed"))
    emitter.emit_mcps(patch.remove_tag(PII_TAG_URN).build())
    assert read(graph, POSTGRES_TABLE_URN, m.GlobalTagsClass).tags == [
        m.TagAssociationClass(TIER1_TAG_URN, context="reviewed"),
        m.TagAssociationClass(BLOCK),
    ]


def test_custom_properties_leave_the_rest_of_dataset_properties(
    emitter: DatahubRestEmitter, graph: DataHubGraph
) -> None:
    before = read(graph, POSTGRES_TABLE_URN, m.DatasetPropertiesClass)
    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN).add_custom_property("team", "payments")
    emitter.emit_mcps(patch.add_custom_property("a/b~c", "escaped").build())
    after = read(graph, POSTGRES_TABLE_URN, m.DatasetPropertiesClass)
    assert after.customProperties == {"team": "payments", "a/b~c": "escaped"}
    assert (after.name, after.qualifiedName, after.description) == (
        before.name,
        before.qualifiedName,
        before.description,
    )

    emitter.emit_mcps(DatasetPatchBuilder(POSTGRES_TABLE_URN).remove_custom_property("a/b~c").build())
    assert read(graph, POSTGRES_TABLE_URN, m.DatasetPropertiesClass).customProperties == {"team": "payments"}
    emitter.emit_mcps(DatasetPatchBuilder(POSTGRES_TABLE_URN).set_custom_properties({"only": "this"}).build())
    assert read(graph, POSTGRES_TABLE_URN, m.DatasetPropertiesClass).customProperties == {"only": "this"}


def test_owners_keyed_by_owner_type_and_type_urn(emitter: DatahubRestEmitter, graph: DataHubGraph) -> None:
    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN).add_owner(m.OwnerClass(ALICE_URN, "DATA_STEWARD"))
    emitter.emit_mcps(patch.add_owner(m.OwnerClass(ALICE_URN, "CUSTOM", typeUrn="urn:li:ownershipType:x")).build())
    owners = read(graph, POSTGRES_TABLE_URN, m.OwnershipClass).owners
    assert [(o.owner, o.type, o.typeUrn) for o in owners] == [
        (PAYMENTS_DATA_ENG_URN, "DATAOWNER", None),
        (PAYMENTS_PLATFORM_GROUP_URN, "TECHNICAL_OWNER", None),
        (ALICE_URN, "DATA_STEWARD", None),
        (ALICE_URN, "CUSTOM", "urn:li:ownershipType:x"),
    ]
    emitter.emit_mcps(DatasetPatchBuilder(POSTGRES_TABLE_URN).remove_owner(ALICE_URN).build())
    owners = read(graph, POSTGRES_TABLE_URN, m.OwnershipClass).owners
    assert [o.owner for o in owners] == [PAYMENTS_DATA_ENG_URN, PAYMENTS_PLATFORM_GROUP_URN]


def test_terms_need_an_existing_aspect_for_the_audit_stamp(emitter: DatahubRestEmitter, graph: DataHubGraph) -> None:
    # GenericJsonPatch starts an absent aspect from an empty record, which lacks the required auditStamp.
    with pytest.raises(OperationalError, match="auditStamp"):
        emitter.emit_mcps(
            DatasetPatchBuilder(POSTGRES_TABLE_URN).add_term(m.GlossaryTermAssociationClass(TERM)).build()
        )
    assert graph.get_aspect(POSTGRES_TABLE_URN, m.GlossaryTermsClass) is None

    stamp = m.AuditStampClass(0, ALICE_URN)
    first = m.GlossaryTermAssociationClass("urn:li:glossaryTerm:Payments.Card")
    emitter.emit_mcp(
        MetadataChangeProposalWrapper(entityUrn=POSTGRES_TABLE_URN, aspect=m.GlossaryTermsClass([first], stamp))
    )
    emitter.emit_mcps(DatasetPatchBuilder(POSTGRES_TABLE_URN).add_term(m.GlossaryTermAssociationClass(TERM)).build())
    assert read(graph, POSTGRES_TABLE_URN, m.GlossaryTermsClass) == m.GlossaryTermsClass(
        [first, m.GlossaryTermAssociationClass(TERM)], stamp
    )
    emitter.emit_mcps(DatasetPatchBuilder(POSTGRES_TABLE_URN).remove_term(first.urn).build())
    assert read(graph, POSTGRES_TABLE_URN, m.GlossaryTermsClass).terms == [m.GlossaryTermAssociationClass(TERM)]


def test_field_tags_and_terms_create_editable_schema_metadata(emitter: DatahubRestEmitter, graph: DataHubGraph) -> None:
    assert graph.get_aspect(POSTGRES_TABLE_URN, m.EditableSchemaMetadataClass) is None
    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN)
    patch.for_field("amount").add_tag(m.TagAssociationClass(PII_TAG_URN))
    emitter.emit_mcps(patch.for_field("amount").add_term(m.GlossaryTermAssociationClass(TERM)).parent().build())
    emitter.emit_mcps(
        DatasetPatchBuilder(POSTGRES_TABLE_URN)
        .for_field("amount")
        .add_tag(m.TagAssociationClass(BLOCK))
        .parent()
        .build()
    )

    (info,) = read(graph, POSTGRES_TABLE_URN, m.EditableSchemaMetadataClass).editableSchemaFieldInfo
    assert info.fieldPath == "amount"
    assert info.globalTags == m.GlobalTagsClass([m.TagAssociationClass(PII_TAG_URN), m.TagAssociationClass(BLOCK)])
    assert info.glossaryTerms is not None and info.glossaryTerms.terms == [m.GlossaryTermAssociationClass(TERM)]
    assert info.glossaryTerms.auditStamp.actor == "urn:li:corpuser:__datahub_system"  # GlossaryTermsTemplate's

    patch = DatasetPatchBuilder(POSTGRES_TABLE_URN).for_field("amount").remove_term(TERM).remove_tag(PII_TAG_URN)
    emitter.emit_mcps(patch.parent().build())
    (info,) = read(graph, POSTGRES_TABLE_URN, m.EditableSchemaMetadataClass).editableSchemaFieldInfo
    assert (info.globalTags.tags, info.glossaryTerms.terms) == ([m.TagAssociationClass(BLOCK)], [])


def test_siblings_and_status_patches_create_absent_aspects(emitter: DatahubRestEmitter, graph: DataHubGraph) -> None:
    emitter.emit_mcps(DatasetPatchBuilder(NEW_URN).add_sibling(DBT_URN).build())  # what the dbt source sends
    emitter.emit_mcps(DatasetPatchBuilder(NEW_URN).add_sibling(POSTGRES_TABLE_URN, primary=True).build())
    emitter.emit_mcps(StatusPatchBuilder(NEW_URN).set_removed(False).build())
    assert read(graph, NEW_URN, m.SiblingsClass) == m.SiblingsClass([DBT_URN, POSTGRES_TABLE_URN], primary=True)
    assert read(graph, NEW_URN, m.StatusClass) == m.StatusClass(removed=False)
    emitter.emit_mcps(DatasetPatchBuilder(NEW_URN).remove_sibling(DBT_URN).build())
    assert read(graph, NEW_URN, m.SiblingsClass).siblings == [POSTGRES_TABLE_URN]


def test_refused_patches_name_the_problem_and_write_nothing(catalog: RunningCatalog) -> None:
    before = catalog.gms.store.aspects(POSTGRES_TABLE_URN)
    add = {"op": "add", "path": "/customProperties/k", "value": "v"}
    cases: list[tuple[str, Any, str]] = [
        ("noSuchAspect", [add], "unknown aspect noSuchAspect"),
        ("mlModelProperties", [add], "Aspect: mlModelProperties does not currently support patch operations"),
        ("schemaMetadata", [add], "Aspect: schemaMetadata does not currently support patch operations"),
        ("datasetKey", [add], "Aspect: datasetKey does not currently support patch"),
        ("datasetProperties", "not json", "Invalid JSON Patch"),
        ("datasetProperties", {"op": "add"}, "expected a list of operations"),
        ("datasetProperties", [{"op": "merge", "path": "/a"}], "Unsupported PATCH operation"),
        ("datasetProperties", [{"op": "add", "path": "/x~2", "value": 1}], "invalid JSON pointer"),
        ("datasetProperties", [{**add, "value": 5}], "not a valid aspect"),
        ("datasetProperties", [{"op": "add", "path": "/bogus", "value": "x"}], "/bogus"),
        ("datasetProperties", [{"op": "test", "path": "/name", "value": "other"}, add], "test failed at /name"),
        ("datasetProperties", [{"op": "replace", "path": "/externalUrl", "value": "x"}], "no value at /externalUrl"),
        ("upstreamLineage", [{"op": "add", "path": f"/upstreams/{NEW_URN}", "value": {"dataset": NEW_URN}}], "type"),
    ]
    for aspect, value, expected in cases:
        response = post_patch(catalog, aspect, value)
        assert response.status_code == 422, (aspect, value, response.text)
        assert expected in response.json()["message"], (aspect, response.json()["message"])
    assert catalog.gms.store.aspects(POSTGRES_TABLE_URN) == before


def test_an_upstream_field_with_many_downstreams_cannot_be_patched(
    catalog: RunningCatalog, graph: DataHubGraph
) -> None:
    wide = m.FineGrainedLineageClass("FIELD_SET", "FIELD_SET", [f"urn:li:schemaField:({NEW_URN},a)"], ["x", "y"])
    graph.emit_mcp(MetadataChangeProposalWrapper(entityUrn=NEW_URN, aspect=m.UpstreamLineageClass([], [wide])))
    response = post_patch(catalog, "upstreamLineage", [{"op": "add", "path": "/upstreams/u", "value": {}}], urn=NEW_URN)
    assert response.status_code == 422
    assert "exactly one downstream" in response.json()["message"]


def test_patches_in_a_batch_and_the_server_config(
    catalog: RunningCatalog, emitter: DatahubRestEmitter, graph: DataHubGraph
) -> None:
    assert emitter.get_server_config()["patchCapable"] is True
    mcps = [
        *DatasetPatchBuilder(NEW_URN).add_custom_property("k", "v").build(),
        *DatasetPatchBuilder(NEW_URN).set_description("patched into being").build(),
        *DatasetPatchBuilder(NEW_URN).add_tag(m.TagAssociationClass(BLOCK)).build(),
    ]
    emitter.emit_mcps(mcps)  # one ingestProposalBatch call
    props = read(graph, NEW_URN, m.DatasetPropertiesClass)
    assert (props.customProperties, props.description, props.tags) == ({"k": "v"}, "patched into being", [])
    assert read(graph, NEW_URN, m.GlobalTagsClass).tags == [m.TagAssociationClass(BLOCK)]
    assert graph.get_aspect(FRAUD_MODEL_URN, m.GlobalTagsClass) is None
