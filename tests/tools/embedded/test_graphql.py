"""The GraphQL operations of mcp-server-datahub 0.8.0, answered from a copy of the seeded demo catalog.

Variables are built the way the MCP server builds them (its own filter compiler and degree filter), and the
query texts are the server's own `.gql` files.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datahub.metadata.schema_classes as m
import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.urns import DatasetUrn, DocumentUrn, SchemaFieldUrn
from datahub.sdk.search_client import compile_filters
from datahub.sdk.search_filters import FilterDsl
from mcp_server_datahub.graphql_helpers import parse_filter_input
from mcp_server_datahub.tools.documents import document_search_gql
from mcp_server_datahub.tools.entities import entity_details_fragment_gql, related_documents_gql
from mcp_server_datahub.tools.lineage import (
    _DEFAULT_LINEAGE_SEARCH_FLAGS,
    AssetLineageAPI,
    _extract_lineage_columns_from_paths,
)
from mcp_server_datahub.tools.search import search_gql

from seed.catalog import (
    CHALLENGER_MODEL_URN,
    CONTROL_MODEL_GROUP_URN,
    CONTROL_MODEL_URN,
    FEATURE_NAMES,
    FEATURE_TABLE_DATASET_URN,
    FEATURE_TABLE_URN,
    FRAUD_MODEL_URN,
    KAFKA_TOPIC_URN,
    MODEL_GROUP_URN,
    PII_TAG_URN,
    POSTGRES_TABLE_URN,
    PRODUCTION_TAG_URN,
    REVIEW_MODEL_GROUP_URN,
    REVIEW_MODEL_URN,
    STATUS_TAG_URNS,
    TIER1_TAG_URN,
    feature_urn,
)
from tools.embedded.graphql import GraphQLApi, GraphQLError, UnsupportedOperation
from tools.embedded.store import LiteStore

PASS, BLOCK = STATUS_TAG_URNS["PASS"], STATUS_TAG_URNS["BLOCK"]
FEATURES = sorted(feature_urn(name) for name in FEATURE_NAMES)
MODELS = sorted([FRAUD_MODEL_URN, CONTROL_MODEL_URN, CHALLENGER_MODEL_URN, REVIEW_MODEL_URN])
GROUPS = sorted([MODEL_GROUP_URN, CONTROL_MODEL_GROUP_URN, REVIEW_MODEL_GROUP_URN])

TAGS_MUTATION = {
    "add": "mutation batchAddTags($input: BatchAddTagsInput!) {\n    batchAddTags(input: $input)\n}",
    "remove": "mutation batchRemoveTags($input: BatchRemoveTagsInput!) {\n    batchRemoveTags(input: $input)\n}",
}
GET_TAGS = "query getTags($urns: [String!]!) { entities(urns: $urns) { urn type ... on Tag { properties { name } } } }"
# mcp_server_datahub/view_helpers.py sends these two without an operationName.
GLOBAL_VIEWS = (
    "\n    query getGlobalViewsSettings {\n        globalViewsSettings {\n            defaultView\n        }\n    }\n"
)
USER_VIEW = (
    "\n    query getUserDefaultView {\n        me {\n            corpUser {\n                settings {\n"
    "                    views {\n                        defaultView {\n                            urn\n"
    "                        }\n                    }\n                }\n            }\n        }\n    }\n"
)
GET_ME = "query getMe { me { corpUser { urn username info { displayName fullName } } } }"


# ------------------------------------------------------------------------------------------ fixtures & helpers


@pytest.fixture(scope="module")
def api(shared_catalog_db: Path) -> Iterator[GraphQLApi]:
    """Read-only tests share one store."""
    store = LiteStore(shared_catalog_db)
    yield GraphQLApi(store)
    store.close()


@pytest.fixture
def writable_api(catalog_db: Path) -> Iterator[GraphQLApi]:
    store = LiteStore(catalog_db)
    yield GraphQLApi(store)
    store.close()


def lineage_variables(
    urn: str,
    *,
    upstream: bool,
    max_hops: int,
    column: str | None = None,
    filter: str | None = None,
    max_results: int = 30,
) -> dict[str, Any]:
    """What `get_lineage` sends (tools/lineage.py: AssetLineageAPI.get_lineage)."""
    if column is not None:
        urn = str(SchemaFieldUrn(urn, column))
    degree = AssetLineageAPI(graph=None).get_degree_filter(max_hops)  # type: ignore[arg-type]
    extra = parse_filter_input(filter)
    types, or_filters = compile_filters(FilterDsl.and_(degree, extra) if extra else degree)
    return {
        "input": {
            "urn": urn,
            "query": "*",
            "start": 0,
            "count": max_results,
            "types": types,
            "orFilters": or_filters,
            "searchFlags": dict(_DEFAULT_LINEAGE_SEARCH_FLAGS),
            "direction": "UPSTREAM" if upstream else "DOWNSTREAM",
        }
    }


def lineage(api: GraphQLApi, urn: str, **kwargs: Any) -> dict[str, Any]:
    data = api.execute(entity_details_fragment_gql, lineage_variables(urn, **kwargs), "GetEntityLineage")
    return data["searchAcrossLineage"]


def hits(result: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(r["entity"]["urn"], r["entity"]["type"], r["degree"]) for r in result["searchResults"]]


def search_variables(query: str = "*", filter: str | None = None, num_results: int = 10, offset: int = 0) -> dict:
    """What `search` sends (tools/search.py: _search_implementation, keyword strategy, no view)."""
    types, or_filters = compile_filters(parse_filter_input(filter))
    return {
        "query": query,
        "types": types,
        "orFilters": or_filters,
        "count": max(num_results, 1),
        "start": offset,
        "viewUrn": None,
    }


def search(api: GraphQLApi, *args: Any, **kwargs: Any) -> dict[str, Any]:
    return api.execute(search_gql, search_variables(*args, **kwargs), "search")["searchAcrossEntities"]


def tag_variables(tags: list[str], entities: list[str], columns: list[str | None] | None = None) -> dict:
    """What `add_tags` / `remove_tags` send (tools/tags.py: _batch_modify_tags)."""
    resources = []
    for urn, column in zip(entities, columns or [None] * len(entities), strict=True):
        resource: dict[str, Any] = {"resourceUrn": urn}
        if column:
            resource["subResource"] = column
            resource["subResourceType"] = "DATASET_FIELD"
        resources.append(resource)
    return {"input": {"tagUrns": tags, "resources": resources}}


def tags_on(api: GraphQLApi, urn: str) -> list[str]:
    return [t["tag"] for t in (api.store.aspects(urn).get("globalTags") or {}).get("tags", [])]


# ------------------------------------------------------------------------------------------ GetEntity


def test_get_entity_dataset_with_schema(api: GraphQLApi) -> None:
    entity = api.execute(entity_details_fragment_gql, {"urn": POSTGRES_TABLE_URN}, "GetEntity")["entity"]
    assert entity["urn"] == POSTGRES_TABLE_URN
    assert entity["type"] == "DATASET"
    assert entity["name"] == "transactions"
    assert entity["platform"] == {"urn": "urn:li:dataPlatform:postgres", "name": "postgres"}
    assert entity["properties"]["qualifiedName"] == "payments.public.transactions"
    assert entity["subTypes"] == {"typeNames": ["Table"]}
    assert [t["tag"]["urn"] for t in entity["tags"]["tags"]] == [TIER1_TAG_URN, PII_TAG_URN]
    assert entity["tags"]["tags"][1]["tag"]["properties"] == {"name": "pii", "description": "Contains personal data"}
    owners = {o["owner"]["urn"]: o for o in entity["ownership"]["owners"]}
    assert owners["urn:li:corpuser:payments-data-eng"]["type"] == "DATAOWNER"
    assert owners["urn:li:corpuser:payments-data-eng"]["owner"]["properties"]["displayName"] == (
        "Payments Data Engineering"
    )

    schema = entity["schemaMetadata"]
    assert schema["name"] == "payments.public.transactions"
    fields = {f["fieldPath"]: f for f in schema["fields"]}
    assert list(fields) == [
        "transaction_id",
        "amount",
        "merchant_category",
        "country",
        "hour",
        "account_age_days",
        "txn_count_1h",
        "is_fraud",
    ]
    assert fields["amount"]["type"] == "NUMBER"
    assert fields["amount"]["nativeDataType"] == "numeric(12,2)"
    assert fields["amount"]["description"] == "Transaction amount in US dollars"
    assert fields["amount"]["nullable"] is False
    assert fields["country"]["type"] == "STRING"
    assert fields["is_fraud"]["type"] == "BOOLEAN"
    assert fields["transaction_id"]["isPartOfKey"] is True
    assert fields["amount"]["isPartOfKey"] is False


def test_get_entity_model_feature_and_missing(api: GraphQLApi) -> None:
    model = api.execute(entity_details_fragment_gql, {"urn": FRAUD_MODEL_URN}, "GetEntity")["entity"]
    assert model["type"] == "MLMODEL"
    assert model["name"] == "fraud_detector"
    assert model["origin"] == "PROD"
    assert model["platform"]["name"] == "mlflow"
    custom = {kv["key"]: kv["value"] for kv in model["properties"]["customProperties"]}
    assert custom["mlflow.stage"] == "Production"
    assert custom["provenance.label_column"] == "is_fraud"
    assert "schemaMetadata" not in model

    feature = api.execute(entity_details_fragment_gql, {"urn": feature_urn("txn_amount")}, "GetEntity")["entity"]
    assert (feature["type"], feature["name"]) == ("MLFEATURE", "txn_amount")
    assert feature["description"] == "Transaction amount in US dollars"

    table = api.execute(entity_details_fragment_gql, {"urn": FEATURE_TABLE_URN}, "GetEntity")["entity"]
    assert sorted(f["urn"] for f in table["featureTableProperties"]["mlFeatures"]) == FEATURES

    missing = str(DatasetUrn("postgres", "payments.public.nope", "PROD"))
    assert api.execute(entity_details_fragment_gql, {"urn": missing}, "GetEntity") == {"entity": None}


# ------------------------------------------------------------------------------------------ GetEntityLineage


def test_column_lineage_from_postgres_amount_lands_on_txn_amount(api: GraphQLApi) -> None:
    result = lineage(api, POSTGRES_TABLE_URN, column="amount", upstream=False, max_hops=3)
    assert result["total"] == 1
    assert hits(result) == [(FEATURE_TABLE_DATASET_URN, "DATASET", 1)]
    (hit,) = result["searchResults"]
    assert hit["paths"], "column-level results carry their schemaField paths"
    for path in hit["paths"]:
        first, last = path["path"][0], path["path"][-1]
        assert first["urn"] == str(SchemaFieldUrn(POSTGRES_TABLE_URN, "amount"))
        assert (last["type"], last["fieldPath"]) == ("SCHEMA_FIELD", "txn_amount")
        assert last["parent"] == {"urn": FEATURE_TABLE_DATASET_URN, "type": "DATASET"}
    # The MCP server's own post-processing turns the paths into lineageColumns.
    (processed,) = _extract_lineage_columns_from_paths(result["searchResults"])
    assert processed["lineageColumns"] == ["txn_amount"]


def test_column_lineage_degree_filter(api: GraphQLApi) -> None:
    one = lineage(api, KAFKA_TOPIC_URN, column="amount", upstream=False, max_hops=1)
    assert hits(one) == [(POSTGRES_TABLE_URN, "DATASET", 1)]
    for max_hops in (2, 3):
        both = lineage(api, KAFKA_TOPIC_URN, column="amount", upstream=False, max_hops=max_hops)
        assert hits(both) == [(POSTGRES_TABLE_URN, "DATASET", 1), (FEATURE_TABLE_DATASET_URN, "DATASET", 2)]
    # A column nothing reads has no downstream lineage; nor does a column that does not exist.
    assert lineage(api, POSTGRES_TABLE_URN, column="is_fraud", upstream=False, max_hops=3)["total"] == 0
    assert lineage(api, POSTGRES_TABLE_URN, column="nope", upstream=False, max_hops=3)["total"] == 0
    up = lineage(api, FEATURE_TABLE_DATASET_URN, column="txn_amount", upstream=True, max_hops=3)
    assert hits(up) == [(POSTGRES_TABLE_URN, "DATASET", 1), (KAFKA_TOPIC_URN, "DATASET", 2)]


def test_dataset_lineage_from_feature_dataset_reaches_features_then_models(api: GraphQLApi) -> None:
    two = lineage(api, FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=2)
    assert hits(two) == [(f, "MLFEATURE", 1) for f in FEATURES] + [(mm, "MLMODEL", 2) for mm in MODELS]
    assert two["total"] == 10
    assert two["facets"][0]["field"] == "_entityType"
    assert {a["value"]: a["count"] for a in two["facets"][0]["aggregations"]} == {"MLFEATURE": 6, "MLMODEL": 4}
    assert all(not r["paths"] for r in two["searchResults"])

    three = lineage(api, FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=3)
    assert hits(three) == hits(two) + [(g, "MLMODEL_GROUP", 3) for g in GROUPS]

    one = lineage(api, FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=1)
    assert hits(one) == [(f, "MLFEATURE", 1) for f in FEATURES]
    # Dataset-level lineage from Postgres goes through the feature dataset first.
    assert hits(lineage(api, POSTGRES_TABLE_URN, upstream=False, max_hops=1)) == [
        (FEATURE_TABLE_DATASET_URN, "DATASET", 1)
    ]


def test_upstream_lineage_of_a_model(api: GraphQLApi) -> None:
    result = lineage(api, FRAUD_MODEL_URN, upstream=True, max_hops=3)  # "3+" = unlimited
    assert hits(result) == [(f, "MLFEATURE", 1) for f in FEATURES] + [
        (FEATURE_TABLE_DATASET_URN, "DATASET", 2),
        (POSTGRES_TABLE_URN, "DATASET", 3),
        (KAFKA_TOPIC_URN, "DATASET", 4),
    ]
    control = lineage(api, CONTROL_MODEL_URN, upstream=True, max_hops=1)
    assert hits(control) == [
        (feature_urn(n), "MLFEATURE", 1) for n in sorted(["merchant_category", "country", "hour", "account_age_days"])
    ]
    assert feature_urn("txn_amount") not in {u for u, _, _ in hits(control)}
    # The group is downstream of its models, never upstream.
    assert hits(lineage(api, MODEL_GROUP_URN, upstream=True, max_hops=1)) == [
        (FRAUD_MODEL_URN, "MLMODEL", 1),
        (CHALLENGER_MODEL_URN, "MLMODEL", 1),
    ]
    assert lineage(api, MODEL_GROUP_URN, upstream=False, max_hops=3)["total"] == 0


def test_lineage_types_filter(api: GraphQLApi) -> None:
    variables = lineage_variables(FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=3)
    variables["input"]["types"] = ["MLMODEL"]
    result = api.execute(entity_details_fragment_gql, variables, "GetEntityLineage")["searchAcrossLineage"]
    assert hits(result) == [(mm, "MLMODEL", 2) for mm in MODELS]
    assert result["total"] == 4
    variables["input"]["types"] = ["MLMODEL_GROUP", "MLFEATURE"]
    result = api.execute(entity_details_fragment_gql, variables, "GetEntityLineage")["searchAcrossLineage"]
    assert {t for _, t, _ in hits(result)} == {"MLMODEL_GROUP", "MLFEATURE"}
    assert result["total"] == 9


def test_lineage_entity_type_filter_as_the_mcp_server_sends_it(api: GraphQLApi) -> None:
    result = lineage(api, FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=3, filter="entity_type = mlModel")
    assert hits(result) == [(mm, "MLMODEL", 2) for mm in MODELS]


def test_lineage_paging(api: GraphQLApi) -> None:
    everything = hits(lineage(api, FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=2))
    pages = []
    for start in (0, 4, 8, 12):
        variables = lineage_variables(FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=2, max_results=4)
        variables["input"]["start"] = start
        page = api.execute(entity_details_fragment_gql, variables, "GetEntityLineage")["searchAcrossLineage"]
        assert (page["start"], page["total"]) == (start, 10)
        assert page["count"] == len(page["searchResults"])
        pages.append(hits(page))
    assert [len(p) for p in pages] == [4, 4, 2, 0]
    assert [h for p in pages for h in p] == everything


def test_lineage_refuses_filters_it_cannot_apply(api: GraphQLApi) -> None:
    variables = lineage_variables(FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=3)
    variables["input"]["orFilters"][0]["and"].append(
        {"field": "platform.keyword", "condition": "EQUAL", "values": ["urn:li:dataPlatform:mlflow"]}
    )
    with pytest.raises(UnsupportedOperation, match="platform.keyword"):
        api.execute(entity_details_fragment_gql, variables, "GetEntityLineage")


# ------------------------------------------------------------------------------------------ getRelatedDocuments


def test_related_documents(writable_api: GraphQLApi) -> None:
    doc = str(DocumentUrn("shared-verdict-1"))
    stamp = m.AuditStampClass(time=0, actor="urn:li:corpuser:provenance")
    info = m.DocumentInfoClass(
        title="Provenance verdict: BLOCK",
        status=m.DocumentStatusClass(state=m.DocumentStateClass.PUBLISHED),
        contents=m.DocumentContentsClass(text="amount x100 breaks the model"),
        created=stamp,
        lastModified=stamp,
        relatedAssets=[m.RelatedAssetClass(asset=FRAUD_MODEL_URN), m.RelatedAssetClass(asset=POSTGRES_TABLE_URN)],
    )
    writable_api.store.write(MetadataChangeProposalWrapper(entityUrn=doc, aspect=info))

    variables = {"urn": FRAUD_MODEL_URN, "input": {"start": 0, "count": 10}}
    entity = writable_api.execute(related_documents_gql, variables, "getRelatedDocuments")["entity"]
    assert (entity["urn"], entity["type"]) == (FRAUD_MODEL_URN, "MLMODEL")
    related = entity["relatedDocuments"]
    assert (related["start"], related["count"], related["total"]) == (0, 1, 1)
    (document,) = related["documents"]
    assert document["urn"] == doc
    assert document["type"] == "DOCUMENT"
    assert document["info"] == {"title": "Provenance verdict: BLOCK"}

    other = writable_api.execute(related_documents_gql, {"urn": CONTROL_MODEL_URN, "input": {}}, "getRelatedDocuments")
    assert other["entity"]["relatedDocuments"]["total"] == 0
    assert other["entity"]["relatedDocuments"]["documents"] == []


def test_document_search_answers_in_the_shape_the_mcp_server_reads(writable_api: GraphQLApi) -> None:
    doc = str(DocumentUrn("shared-verdict-2"))
    stamp = m.AuditStampClass(time=0, actor="urn:li:corpuser:provenance")
    info = m.DocumentInfoClass(
        title="Provenance verdict",
        status=m.DocumentStatusClass(state=m.DocumentStateClass.PUBLISHED),
        contents=m.DocumentContentsClass(text="verdict"),
        created=stamp,
        lastModified=stamp,
    )
    writable_api.store.write(MetadataChangeProposalWrapper(entityUrn=doc, aspect=info))
    # The exact variables of DocumentToolsMiddleware's "are there any documents?" probe.
    variables = {"query": "*", "orFilters": [], "count": 1, "start": 0, "viewUrn": None}
    data = writable_api.execute(document_search_gql, variables, "documentSearch")
    assert data["searchAcrossEntities"]["total"] == 1
    assert data["searchAcrossEntities"]["searchResults"][0]["entity"]["urn"] == doc


# ------------------------------------------------------------------------------------------ search


def test_search_query_text(api: GraphQLApi) -> None:
    result = search(api, "fraud_detector")
    urns = [r["entity"]["urn"] for r in result["searchResults"]]
    assert {FRAUD_MODEL_URN, CHALLENGER_MODEL_URN, MODEL_GROUP_URN} <= set(urns)
    assert KAFKA_TOPIC_URN not in urns
    assert result["total"] == len(urns)

    amount = {r["entity"]["urn"] for r in search(api, "/q amount", num_results=50)["searchResults"]}
    assert {KAFKA_TOPIC_URN, POSTGRES_TABLE_URN, FEATURE_TABLE_DATASET_URN} <= amount
    assert PII_TAG_URN not in amount

    assert search(api, "no_such_thing_anywhere")["total"] == 0


def test_search_by_entity_type(api: GraphQLApi) -> None:
    result = search(api, "*", filter="entity_type = mlModel")
    assert sorted(r["entity"]["urn"] for r in result["searchResults"]) == MODELS
    assert {r["entity"]["type"] for r in result["searchResults"]} == {"MLMODEL"}
    assert result["total"] == 4
    assert result["facets"][0]["aggregations"] == [{"value": "MLMODEL", "count": 4}]

    both = search(api, "*", filter="entity_type IN (mlFeature, mlModelGroup)", num_results=50)
    assert sorted(r["entity"]["urn"] for r in both["searchResults"]) == sorted(FEATURES + GROUPS)

    types_only = api.execute(search_gql, {"query": "*", "types": ["DATASET"], "count": 10, "start": 0}, "search")
    assert sorted(r["entity"]["urn"] for r in types_only["searchAcrossEntities"]["searchResults"]) == sorted(
        [KAFKA_TOPIC_URN, POSTGRES_TABLE_URN, FEATURE_TABLE_DATASET_URN]
    )


def test_search_by_tag(api: GraphQLApi) -> None:
    result = search(api, "*", filter=f'tag = "{PII_TAG_URN}"')
    assert [r["entity"]["urn"] for r in result["searchResults"]] == [POSTGRES_TABLE_URN]
    (entity,) = [r["entity"] for r in result["searchResults"]]
    assert entity["name"] == "transactions"
    assert search(api, "*", filter=f'tag = "{BLOCK}"')["total"] == 0
    assert search(api, "feast", filter=f'tag = "{TIER1_TAG_URN}"')["total"] == 0


def test_search_everything_and_paging(api: GraphQLApi) -> None:
    # every entity but the io.provenance.tolerance property definition, which keyword search does not cover
    every = [u for u in api.store.urns() if not u.startswith("urn:li:structuredProperty:")]
    result = search(api, "*", num_results=50)
    assert result["total"] == len(every) == 29
    assert sorted(r["entity"]["urn"] for r in result["searchResults"]) == sorted(every)

    first = search(api, "*", num_results=10, offset=0)
    third = search(api, "*", num_results=10, offset=20)
    assert (first["start"], first["count"], first["total"]) == (0, 10, 29)
    assert (third["start"], third["count"], third["total"]) == (20, 9, 29)
    seen = [r["entity"]["urn"] for off in (0, 10, 20) for r in search(api, "*", offset=off)["searchResults"]]
    assert sorted(seen) == sorted(every)
    assert len(set(seen)) == 29


def test_search_by_platform_as_the_mcp_server_sends_it(api: GraphQLApi) -> None:
    result = search(api, "*", filter="platform = postgres")
    assert [r["entity"]["urn"] for r in result["searchResults"]] == [POSTGRES_TABLE_URN]


# ------------------------------------------------------------------------------------------ tags


def test_get_tags_existing_and_missing(api: GraphQLApi) -> None:
    missing = "urn:li:tag:provenance:NOPE"
    data = api.execute(GET_TAGS, {"urns": [PASS, missing, PII_TAG_URN]}, "getTags")
    assert data["entities"] == [
        {"urn": PASS, "type": "TAG", "properties": {"name": "provenance:PASS"}},
        None,
        {"urn": PII_TAG_URN, "type": "TAG", "properties": {"name": "pii"}},
    ]


def test_batch_add_and_remove_tags(writable_api: GraphQLApi) -> None:
    api = writable_api
    assert api.execute(TAGS_MUTATION["add"], tag_variables([PASS], [FRAUD_MODEL_URN, CONTROL_MODEL_URN]), None) == {
        "batchAddTags": True
    }
    assert tags_on(api, FRAUD_MODEL_URN) == [PASS]
    assert tags_on(api, CONTROL_MODEL_URN) == [PASS]

    # Adding it again neither duplicates the tag nor writes a new version.
    before = api.store.aspect_version(FRAUD_MODEL_URN, "globalTags", 0)
    api.execute(TAGS_MUTATION["add"], tag_variables([PASS], [FRAUD_MODEL_URN]), "batchAddTags")
    assert tags_on(api, FRAUD_MODEL_URN) == [PASS]
    assert api.store.aspect_version(FRAUD_MODEL_URN, "globalTags", 0) == before

    # The verdict write-back: remove the old status tag, add the new one.
    assert api.execute(TAGS_MUTATION["remove"], tag_variables([PASS], [FRAUD_MODEL_URN]), "batchRemoveTags") == {
        "batchRemoveTags": True
    }
    api.execute(TAGS_MUTATION["add"], tag_variables([BLOCK], [FRAUD_MODEL_URN]), "batchAddTags")
    assert tags_on(api, FRAUD_MODEL_URN) == [BLOCK]
    assert tags_on(api, CONTROL_MODEL_URN) == [PASS]

    # Existing tags on an asset are kept; removing a tag that is not there changes nothing.
    api.execute(TAGS_MUTATION["add"], tag_variables([BLOCK], [POSTGRES_TABLE_URN]), "batchAddTags")
    assert tags_on(api, POSTGRES_TABLE_URN) == [TIER1_TAG_URN, PII_TAG_URN, BLOCK]
    api.execute(TAGS_MUTATION["remove"], tag_variables([PII_TAG_URN, PASS], [POSTGRES_TABLE_URN]), "batchRemoveTags")
    assert tags_on(api, POSTGRES_TABLE_URN) == [TIER1_TAG_URN, BLOCK]

    # GetEntity shows the tag with its properties.
    entity = api.execute(entity_details_fragment_gql, {"urn": FRAUD_MODEL_URN}, "GetEntity")["entity"]
    (tag,) = entity["tags"]["tags"]
    assert tag["tag"]["urn"] == BLOCK
    assert tag["tag"]["properties"]["name"] == "provenance:BLOCK"
    assert "breaks this model" in tag["tag"]["properties"]["description"]
    # And a tag filter now finds the model.
    found = api.execute(search_gql, search_variables("*", filter=f'tag = "{BLOCK}"'), "search")
    assert sorted(r["entity"]["urn"] for r in found["searchAcrossEntities"]["searchResults"]) == sorted(
        [FRAUD_MODEL_URN, POSTGRES_TABLE_URN]
    )


def test_adding_a_tag_that_is_already_there_changes_nothing(writable_api: GraphQLApi) -> None:
    before = writable_api.store.aspect_version(POSTGRES_TABLE_URN, "globalTags", 0)
    writable_api.execute(TAGS_MUTATION["add"], tag_variables([TIER1_TAG_URN], [POSTGRES_TABLE_URN]), "batchAddTags")
    assert tags_on(writable_api, POSTGRES_TABLE_URN) == [TIER1_TAG_URN, PII_TAG_URN]
    assert writable_api.store.aspect_version(POSTGRES_TABLE_URN, "globalTags", 0) == before


def test_batch_tags_refuse_unknown_tags_entities_and_columns(writable_api: GraphQLApi) -> None:
    api = writable_api
    with pytest.raises(GraphQLError, match="provenance:NOPE"):
        api.execute(TAGS_MUTATION["add"], tag_variables(["urn:li:tag:provenance:NOPE"], [FRAUD_MODEL_URN]), None)
    with pytest.raises(GraphQLError, match="urn:li:tag:ghost"):
        api.execute(TAGS_MUTATION["remove"], tag_variables(["urn:li:tag:ghost"], [POSTGRES_TABLE_URN]), None)
    missing = str(DatasetUrn("postgres", "payments.public.nope", "PROD"))
    with pytest.raises(GraphQLError, match="does not exist"):
        api.execute(TAGS_MUTATION["add"], tag_variables([PASS], [missing]), None)
    with pytest.raises(UnsupportedOperation, match="subResource"):
        api.execute(TAGS_MUTATION["add"], tag_variables([PASS], [POSTGRES_TABLE_URN], ["amount"]), None)
    # Nothing was written by any of the refused calls.
    assert api.store.aspect_version(FRAUD_MODEL_URN, "globalTags", 0) is None
    assert api.store.aspect_version(missing, "globalTags", 0) is None
    assert tags_on(api, POSTGRES_TABLE_URN) == [TIER1_TAG_URN, PII_TAG_URN]


def test_concurrent_tag_additions_on_one_entity_are_all_kept(writable_api: GraphQLApi) -> None:
    tags = [*STATUS_TAG_URNS.values(), TIER1_TAG_URN, PII_TAG_URN, PRODUCTION_TAG_URN]
    for round_ in range(30):
        urn = str(DatasetUrn("hive", f"race.r{round_}", "PROD"))
        writable_api.store.write(MetadataChangeProposalWrapper(entityUrn=urn, aspect=m.StatusClass(removed=False)))
        barrier = threading.Barrier(len(tags))
        errors: list[Exception] = []

        def add(tag: str, urn: str = urn, barrier: threading.Barrier = barrier, errors: list = errors) -> None:
            barrier.wait()
            try:
                writable_api.execute(TAGS_MUTATION["add"], tag_variables([tag], [urn]), "batchAddTags")
            except Exception as exc:  # reported below, in the test thread
                errors.append(exc)

        threads = [threading.Thread(target=add, args=(tag,)) for tag in tags]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert errors == []
        assert sorted(tags_on(writable_api, urn)) == sorted(tags), f"round {round_}"


# ------------------------------------------------------------------------------------------ user & views


def test_get_me(api: GraphQLApi) -> None:
    user = api.execute(GET_ME, {}, "getMe")["me"]["corpUser"]
    assert user["urn"] == "urn:li:corpuser:provenance"
    assert user["username"] == "provenance"
    assert user["info"]["displayName"] == "Provenance"


def test_view_settings_are_parsed_from_the_query_text(api: GraphQLApi) -> None:
    counts_before = api.operation_counts.copy()
    assert api.execute(GLOBAL_VIEWS, None, None) == {"globalViewsSettings": {"defaultView": None}}
    user = api.execute(USER_VIEW, None, None)
    assert user == {"me": {"corpUser": {"settings": None}}}
    assert api.operation_counts["getGlobalViewsSettings"] == counts_before["getGlobalViewsSettings"] + 1
    assert api.operation_counts["getUserDefaultView"] == counts_before["getUserDefaultView"] + 1


# ------------------------------------------------------------------------------------------ refusals


def test_unsupported_operations_are_refused_by_name(api: GraphQLApi) -> None:
    update = "mutation updateDescription($input: DescriptionUpdateInput!) {\n  updateDescription(input: $input)\n}"
    with pytest.raises(UnsupportedOperation, match="'updateDescription'"):
        api.execute(update, {"input": {"description": "x", "resourceUrn": POSTGRES_TABLE_URN}}, None)
    with pytest.raises(UnsupportedOperation, match="'listQueries'"):
        api.execute("query listQueries($input: ListQueriesInput!) { listQueries(input: $input) { total } }", {}, None)
    # The declared operationName wins over the query text.
    with pytest.raises(UnsupportedOperation, match="'getDomain'"):
        api.execute(GET_ME, {}, "getDomain")
    with pytest.raises(UnsupportedOperation, match="anonymous"):
        api.execute("{ me { corpUser { urn } } }", None, None)
    # The refusal lists what is supported, so the message is actionable.
    with pytest.raises(UnsupportedOperation, match="GetEntityLineage"):
        api.execute(update, {}, None)
    assert "updateDescription" not in api.operation_counts
    assert "GetEntityLineage" in api.supported
