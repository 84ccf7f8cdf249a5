"""The embedded GMS over real HTTP on 127.0.0.1, driven by `requests` and by the DataHub SDK's own clients."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datahub.metadata.schema_classes as m
import pytest
import requests
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.rest_emitter import DatahubRestEmitter
from datahub.emitter.serialization_helper import pre_json_transform
from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph
from datahub.metadata.urns import DatasetUrn
from datahub.sdk.main_client import DataHubClient
from datahub.specific.dataset import DatasetPatchBuilder
from mcp_server_datahub import graphql_helpers
from mcp_server_datahub.openapi_client import VersionedAspectPair, VersionedOpenApiClient
from mcp_server_datahub.tools.aspect_history import get_aspect_history
from mcp_server_datahub.tools.entities import get_entities
from mcp_server_datahub.tools.lineage import get_lineage

from seed.catalog import (
    FEATURE_TABLE_DATASET_URN,
    FRAUD_MODEL_URN,
    KAFKA_TOPIC_URN,
    POSTGRES_TABLE_URN,
    STATUS_TAG_URNS,
)
from tools.embedded.server import RunningCatalog, embedded_catalog, start_embedded_catalog

NEW_URN = str(DatasetUrn("hive", "scratch.new_table", "PROD"))
MISSING_URN = str(DatasetUrn("postgres", "payments.public.nope", "PROD"))


@pytest.fixture
def catalog(catalog_db: Path) -> Iterator[RunningCatalog]:
    with embedded_catalog(catalog_db) as running:
        yield running


@pytest.fixture
def graph(catalog: RunningCatalog) -> Iterator[DataHubGraph]:
    g = DataHubGraph(DatahubClientConfig(server=catalog.url, token=catalog.token))
    yield g
    g.close()


def call(
    catalog: RunningCatalog,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = "valid",
    headers: dict[str, str] | None = None,
) -> requests.Response:
    sent = dict(headers or {})
    if token == "valid":
        sent["Authorization"] = f"Bearer {catalog.token}"
    elif token is not None:
        sent["Authorization"] = token
    data = None if body is None else json.dumps(body)
    return requests.request(method, catalog.url + path, data=data, headers=sent, timeout=10)


def aspect_path(urn: str, aspect: str, version: int = 0) -> str:
    return f"/aspects/{urllib.parse.quote(urn, safe='')}?aspect={aspect}&version={version}"


def proposal(urn: str, aspect: m._Aspect) -> dict[str, Any]:
    """The JSON the SDK's REST emitter posts for one MCP."""
    return pre_json_transform(MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect).make_mcp().to_obj())


def description_of(catalog: RunningCatalog, urn: str) -> str | None:
    return (catalog.gms.store.aspects(urn).get("datasetProperties") or {}).get("description")


# ------------------------------------------------------------------------------------------ transport & auth


def test_every_route_needs_the_bearer_token(catalog: RunningCatalog) -> None:
    requests_to_try = [
        ("GET", "/config", None),
        ("GET", aspect_path(POSTGRES_TABLE_URN, "datasetKey"), None),
        ("GET", f"/entitiesV2/{urllib.parse.quote(POSTGRES_TABLE_URN, safe='')}", None),
        ("GET", "/no/such/route", None),
        ("POST", "/aspects?action=ingestProposal", {"proposal": proposal(NEW_URN, m.StatusClass(removed=False))}),
        ("POST", "/api/graphql", {"query": "query getMe { me { corpUser { urn } } }", "operationName": "getMe"}),
        ("POST", "/openapi/v3/entity/dataset/batchGet", [{"urn": POSTGRES_TABLE_URN, "datasetProperties": {}}]),
    ]
    wrong = [
        None,
        "Bearer not-the-token",
        f"Bearer {catalog.token}x",
        f"Bearer {catalog.token[:-1]}",
        catalog.token,
        f"Basic {catalog.token}",
    ]
    for method, path, body in requests_to_try:
        for token in wrong:
            response = call(catalog, method, path, body, token=token)
            assert response.status_code == 401, (method, path, token)
            assert "bearer token" in response.json()["message"]
    assert not catalog.gms.store.exists(NEW_URN)  # the refused write did not land
    assert call(catalog, "GET", "/config").status_code == 200


def test_binds_loopback_only_with_a_random_token(catalog_db: Path) -> None:
    first = start_embedded_catalog(catalog_db)
    try:
        assert urllib.parse.urlsplit(first.url).hostname == "127.0.0.1"
        assert first.server.server_address[0] == "127.0.0.1"
        assert urllib.parse.urlsplit(first.url).port == first.server.server_address[1] > 0
        assert len(first.token) >= 24
        assert first.db_path == catalog_db
    finally:
        first.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(first.url + "/config", timeout=2)

    with embedded_catalog(catalog_db) as second:
        assert second.token != first.token
        assert call(second, "GET", "/config").status_code == 200
    fixed = start_embedded_catalog(catalog_db, token="fixed-token")
    try:
        assert fixed.token == "fixed-token"
        ok = requests.get(fixed.url + "/config", headers={"Authorization": "Bearer fixed-token"}, timeout=5)
        assert ok.status_code == 200
    finally:
        fixed.stop()


def test_config(catalog: RunningCatalog) -> None:
    response = call(catalog, "GET", "/config")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    config = response.json()
    assert config["noCode"] == "true"
    assert config["versions"]["acryldata/datahub"]["version"].startswith("v1.")


# ------------------------------------------------------------------------------------------ REST reads


def test_key_aspect_answers_existence(catalog: RunningCatalog) -> None:
    found = call(catalog, "GET", aspect_path(POSTGRES_TABLE_URN, "datasetKey"))
    assert found.status_code == 200
    assert found.json()["aspect"]["com.linkedin.metadata.key.DatasetKey"] == {
        "platform": "urn:li:dataPlatform:postgres",
        "name": "payments.public.transactions",
        "origin": "PROD",
    }
    assert call(catalog, "GET", aspect_path(MISSING_URN, "datasetKey")).status_code == 404
    model_key = call(catalog, "GET", aspect_path(FRAUD_MODEL_URN, "mlModelKey"))
    assert model_key.status_code == 200
    assert model_key.json()["aspect"]["com.linkedin.metadata.key.MLModelKey"]["name"] == "fraud_detector"


def test_real_aspect_under_its_full_class_name(catalog: RunningCatalog) -> None:
    response = call(catalog, "GET", aspect_path(POSTGRES_TABLE_URN, "schemaMetadata"))
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 0
    schema = body["aspect"]["com.linkedin.schema.SchemaMetadata"]
    amount = next(f for f in schema["fields"] if f["fieldPath"] == "amount")
    assert amount["nativeDataType"] == "numeric(12,2)"
    assert amount["type"]["type"] == {"com.linkedin.schema.NumberType": {}}
    # An aspect the entity does not have, or no such aspect at all: 404.
    assert call(catalog, "GET", aspect_path(KAFKA_TOPIC_URN, "globalTags")).status_code == 404
    assert call(catalog, "GET", aspect_path(POSTGRES_TABLE_URN, "noSuchAspect")).status_code == 404


def test_entities_v2_all_or_selected_aspects(catalog: RunningCatalog) -> None:
    path = f"/entitiesV2/{urllib.parse.quote(POSTGRES_TABLE_URN, safe='')}"
    everything = call(catalog, "GET", path).json()
    assert everything["urn"] == POSTGRES_TABLE_URN
    assert set(everything["aspects"]) == {
        "datasetProperties",
        "schemaMetadata",
        "ownership",
        "globalTags",
        "subTypes",
        "upstreamLineage",
    }
    props = everything["aspects"]["datasetProperties"]
    assert props["name"] == "datasetProperties"
    assert props["value"]["qualifiedName"] == "payments.public.transactions"

    one = call(catalog, "GET", path + "?aspects=List(schemaMetadata)").json()
    assert list(one["aspects"]) == ["schemaMetadata"]
    assert len(one["aspects"]["schemaMetadata"]["value"]["fields"]) == 8
    two = call(catalog, "GET", path + "?aspects=List(schemaMetadata,globalTags)").json()
    assert set(two["aspects"]) == {"schemaMetadata", "globalTags"}

    missing = call(catalog, "GET", f"/entitiesV2/{urllib.parse.quote(MISSING_URN, safe='')}")
    assert missing.status_code == 404


def test_sdk_graph_reads(graph: DataHubGraph) -> None:
    assert graph.exists(POSTGRES_TABLE_URN)
    assert graph.exists(FRAUD_MODEL_URN)
    assert not graph.exists(MISSING_URN)

    schema = graph.get_aspect(POSTGRES_TABLE_URN, m.SchemaMetadataClass)
    assert isinstance(schema, m.SchemaMetadataClass)
    assert [f.fieldPath for f in schema.fields][:2] == ["transaction_id", "amount"]
    assert isinstance(schema.fields[1].type.type, m.NumberTypeClass)
    assert graph.get_aspect(KAFKA_TOPIC_URN, m.GlobalTagsClass) is None

    bag = graph.get_entity_semityped(POSTGRES_TABLE_URN)
    assert isinstance(bag["datasetProperties"], m.DatasetPropertiesClass)
    assert bag["datasetProperties"].name == "transactions"
    assert [t.tag for t in bag["globalTags"].tags] == ["urn:li:tag:tier1", "urn:li:tag:pii"]
    assert bag["upstreamLineage"].upstreams[0].dataset == KAFKA_TOPIC_URN
    only = graph.get_entity_semityped(FRAUD_MODEL_URN, aspects=["mlModelProperties"])
    assert set(only) == {"mlModelProperties"}
    assert only["mlModelProperties"].groups == ["urn:li:mlModelGroup:(urn:li:dataPlatform:mlflow,fraud_detector,PROD)"]


# ------------------------------------------------------------------------------------------ REST writes


def test_ingest_proposal_and_batch(catalog: RunningCatalog) -> None:
    one = call(
        catalog,
        "POST",
        "/aspects?action=ingestProposal",
        {"proposal": proposal(NEW_URN, m.DatasetPropertiesClass(description="first")), "async": "false"},
    )
    assert one.status_code == 200
    assert one.json() == {"value": NEW_URN}
    read = call(catalog, "GET", aspect_path(NEW_URN, "datasetProperties")).json()
    assert read["aspect"]["com.linkedin.dataset.DatasetProperties"]["description"] == "first"

    other = str(DatasetUrn("hive", "scratch.other", "PROD"))
    batch = call(
        catalog,
        "POST",
        "/aspects?action=ingestProposalBatch",
        {
            "proposals": [
                proposal(NEW_URN, m.DatasetPropertiesClass(description="second")),
                proposal(other, m.UpstreamLineageClass(upstreams=[m.UpstreamClass(NEW_URN, "TRANSFORMED")])),
                proposal(other, DatasetUrn.from_string(other).to_key_aspect()),  # key aspects are accepted, not stored
            ]
        },
    )
    assert batch.status_code == 200
    assert batch.json() == {"value": [NEW_URN, other, other]}
    assert description_of(catalog, NEW_URN) == "second"
    assert catalog.gms.store.index.neighbours(NEW_URN, "DOWNSTREAM", "entity") == {other}
    assert set(catalog.gms.store.aspects(other)) == {"upstreamLineage"}


def test_sdk_emitter_writes_are_read_back(catalog: RunningCatalog, graph: DataHubGraph) -> None:
    emitter = DatahubRestEmitter(catalog.url, token=catalog.token, openapi_ingestion=False)
    try:
        emitter.test_connection()
        emitter.emit_mcp(MetadataChangeProposalWrapper(entityUrn=NEW_URN, aspect=m.DatasetPropertiesClass(name="n")))
        emitter.emit_mcps(
            [
                MetadataChangeProposalWrapper(
                    entityUrn=NEW_URN, aspect=m.GlobalTagsClass(tags=[m.TagAssociationClass(STATUS_TAG_URNS["PASS"])])
                ),
                MetadataChangeProposalWrapper(entityUrn=NEW_URN, aspect=m.SubTypesClass(typeNames=["Table"])),
            ]
        )
    finally:
        emitter.close()
    props = graph.get_aspect(NEW_URN, m.DatasetPropertiesClass)
    assert props is not None and props.name == "n"
    tags = graph.get_aspect(NEW_URN, m.GlobalTagsClass)
    assert tags is not None and [t.tag for t in tags.tags] == [STATUS_TAG_URNS["PASS"]]
    assert graph.get_entity_semityped(NEW_URN)["subTypes"].typeNames == ["Table"]


def test_other_change_types_are_refused_by_name(catalog: RunningCatalog) -> None:
    (patch,) = DatasetPatchBuilder(POSTGRES_TABLE_URN).add_tag(m.TagAssociationClass(STATUS_TAG_URNS["BLOCK"])).build()
    for change in ("DELETE", "CREATE", "RESTATE"):
        body = {"proposal": {**pre_json_transform(patch.to_obj()), "changeType": change}}
        response = call(catalog, "POST", "/aspects?action=ingestProposal", body)
        assert response.status_code == 422
        message = response.json()["message"]
        assert change in message and "globalTags" in message and "UPSERT and PATCH" in message
    tags = catalog.gms.store.aspects(POSTGRES_TABLE_URN)["globalTags"]["tags"]
    assert STATUS_TAG_URNS["BLOCK"] not in [t["tag"] for t in tags]
    # The same proposal as a PATCH is applied (tests/tools/embedded/test_patch_*.py cover the semantics).
    response = call(catalog, "POST", "/aspects?action=ingestProposal", {"proposal": pre_json_transform(patch.to_obj())})
    assert response.status_code == 200
    tags = catalog.gms.store.aspects(POSTGRES_TABLE_URN)["globalTags"]["tags"]
    assert [t["tag"] for t in tags] == ["urn:li:tag:tier1", "urn:li:tag:pii", STATUS_TAG_URNS["BLOCK"]]


def test_unknown_routes_answer_501_naming_the_route(catalog: RunningCatalog) -> None:
    cases = [
        ("GET", "/entities?action=search", "GET /entities"),
        ("POST", "/entities?action=search", "POST /entities?action=search"),
        ("POST", "/aspects?action=getCount", "POST /aspects?action=getCount"),
        ("POST", "/openapi/v3/entity/dataset", "POST /openapi/v3/entity/dataset"),
    ]
    for method, path, named in cases:
        response = call(catalog, method, path, {} if method == "POST" else None)
        assert response.status_code == 501, path
        assert named in response.json()["message"]


def test_handler_errors_become_500_with_the_exception(catalog: RunningCatalog) -> None:
    response = call(catalog, "POST", "/aspects?action=ingestProposal", {"not": "a proposal"})
    assert response.status_code == 500
    assert "KeyError" in response.json()["message"]
    # The server keeps serving afterwards.
    assert call(catalog, "GET", "/config").status_code == 200


# ------------------------------------------------------------------------------------------ GraphQL over HTTP


def test_graphql_over_http(catalog: RunningCatalog, graph: DataHubGraph) -> None:
    unsupported = call(
        catalog,
        "POST",
        "/api/graphql",
        {"query": "mutation updateDescription($input: DescriptionUpdateInput!) { updateDescription(input: $input) }"},
    )
    assert unsupported.status_code == 200
    body = unsupported.json()
    assert body["data"] is None
    assert "updateDescription" in body["errors"][0]["message"]

    listed = call(catalog, "POST", "/api/graphql", {"query": "query listQueries { x }", "operationName": "listQueries"})
    assert "listQueries" in listed.json()["errors"][0]["message"]

    with pytest.raises(Exception, match="updateDescription"):
        graph.execute_graphql("mutation updateDescription { updateDescription(input: {}) }")
    # GraphQLError (a bad request the catalog understood) travels the same way.
    with pytest.raises(Exception, match="do not exist"):
        graph.execute_graphql(
            "mutation batchAddTags($input: BatchAddTagsInput!) { batchAddTags(input: $input) }",
            variables={"input": {"tagUrns": ["urn:li:tag:ghost"], "resources": [{"resourceUrn": FRAUD_MODEL_URN}]}},
            operation_name="batchAddTags",
        )

    entity = graph.execute_graphql(
        "query GetEntity($urn: String!) { entity(urn: $urn) { urn } }",
        variables={"urn": POSTGRES_TABLE_URN},
        operation_name="GetEntity",
    )["entity"]
    assert entity["urn"] == POSTGRES_TABLE_URN
    views = graph.execute_graphql("query getGlobalViewsSettings { globalViewsSettings { defaultView } }")
    assert views == {"globalViewsSettings": {"defaultView": None}}


def test_real_mcp_tools_against_the_http_endpoint(graph: DataHubGraph) -> None:
    """The unmodified mcp-server-datahub tool functions, in process, over HTTP to the embedded catalog."""
    with graphql_helpers.with_datahub_client(DataHubClient(graph=graph)):
        entity = get_entities(POSTGRES_TABLE_URN)
        assert entity["urn"] == POSTGRES_TABLE_URN
        assert {f["fieldPath"] for f in entity["schemaMetadata"]["fields"]} >= {"amount", "country"}

        column = get_lineage(POSTGRES_TABLE_URN, column="amount", upstream=False, max_hops=3)
        (hit,) = column["downstreams"]["searchResults"]
        assert hit["entity"]["urn"] == FEATURE_TABLE_DATASET_URN
        assert hit["lineageColumns"] == ["txn_amount"]

        models = get_lineage(FEATURE_TABLE_DATASET_URN, upstream=False, max_hops=2)
        types = [r["entity"]["type"] for r in models["downstreams"]["searchResults"]]
        assert types == ["MLFEATURE"] * 6 + ["MLMODEL"] * 4


# ------------------------------------------------------------------------------------------ OpenAPI batchGet


def test_openapi_batch_get_with_versions(catalog: RunningCatalog, graph: DataHubGraph) -> None:
    for description in ("one", "two", "three"):
        graph.emit_mcp(
            MetadataChangeProposalWrapper(entityUrn=NEW_URN, aspect=m.DatasetPropertiesClass(description=description))
        )

    def batch_get(version: str) -> list[dict[str, Any]]:
        body = [{"urn": NEW_URN, "datasetProperties": {"headers": {"If-Version-Match": version}}}]
        response = call(catalog, "POST", "/openapi/v3/entity/dataset/batchGet?systemMetadata=true", body)
        assert response.status_code == 200
        return response.json()

    (current,) = batch_get("0")
    assert current["urn"] == NEW_URN
    assert current["datasetProperties"]["value"]["description"] == "three"
    assert int(current["datasetProperties"]["systemMetadata"]["version"]) >= 3
    assert [batch_get(v)[0]["datasetProperties"]["value"]["description"] for v in ("1", "2")] == ["one", "two"]
    assert "datasetProperties" not in batch_get("99")[0]  # no such version: the aspect is left out

    # The MCP server's own versioned client reads the same envelopes.
    client = VersionedOpenApiClient(graph)
    pairs = [VersionedAspectPair(NEW_URN, "dataset", "datasetProperties", v) for v in (0, 1)]
    raw = client.get_entities(pairs[:1])
    assert raw.errors == {}
    assert raw.aspects[(NEW_URN, "datasetProperties")]["value"]["description"] == "three"
    assert client.get_entities(pairs[1:]).aspects[(NEW_URN, "datasetProperties")]["value"]["description"] == "one"


def test_aspect_history_does_not_repeat_the_current_value(catalog: RunningCatalog, graph: DataHubGraph) -> None:
    for description in ("one", "two", "three"):
        graph.emit_mcp(
            MetadataChangeProposalWrapper(entityUrn=NEW_URN, aspect=m.DatasetPropertiesClass(description=description))
        )
    body = [{"urn": NEW_URN, "datasetProperties": {"headers": {"If-Version-Match": "0"}}}]
    (current,) = call(catalog, "POST", "/openapi/v3/entity/dataset/batchGet", body).json()
    with graphql_helpers.with_datahub_client(DataHubClient(graph=graph)):
        (result,) = get_aspect_history([NEW_URN], ["datasetProperties"])["results"]
    assert result["current"]["value"]["description"] == "three"
    assert [h["value"]["description"] for h in result["history"]] == ["two", "one"]
    assert current["datasetProperties"]["systemMetadata"]["version"] == "3"


# ------------------------------------------------------------------------------------------ concurrency


def test_concurrent_writes_are_all_kept(catalog: RunningCatalog, catalog_db: Path) -> None:
    threads, per_thread = 8, 25
    statuses: list[int] = []
    lock = threading.Lock()

    def urn(t: int, i: int) -> str:
        return str(DatasetUrn("hive", f"load.t{t}_{i}", "PROD"))

    def worker(t: int) -> None:
        with requests.Session() as session:
            session.headers["Authorization"] = f"Bearer {catalog.token}"
            for i in range(per_thread):
                body = {"proposal": proposal(urn(t, i), m.DatasetPropertiesClass(description=f"{t}/{i}"))}
                response = session.post(
                    catalog.url + "/aspects?action=ingestProposal", data=json.dumps(body), timeout=30
                )
                with lock:
                    statuses.append(response.status_code)

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=60)
    assert statuses == [200] * (threads * per_thread)

    for t in range(threads):
        for i in range(per_thread):
            assert description_of(catalog, urn(t, i)) == f"{t}/{i}"
    # Also from a separate connection: every write was committed to the file.
    with sqlite3.connect(catalog_db) as other:
        (count,) = other.execute(
            "SELECT count(*) FROM metadata_aspect_v2 WHERE version = 0 AND aspect_name = 'datasetProperties' "
            "AND urn LIKE 'urn:li:dataset:(urn:li:dataPlatform:hive,load.t%'"
        ).fetchone()
    assert count == threads * per_thread
    assert catalog.gms.store.index_rebuilds == 1  # writes through the server never force a rebuild


def _raw(catalog: RunningCatalog, headers: str, body: bytes = b"") -> bytes:
    """One request written by hand on a socket (headers a client library would never send), and the reply."""
    import socket
    from urllib.parse import urlparse

    url = urlparse(catalog.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as conn:
        conn.sendall(f"POST /aspects?action=ingestProposal HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode() + body)
        return conn.recv(65536)


def test_the_token_is_checked_before_the_body_is_read(catalog: RunningCatalog) -> None:
    """An unauthenticated 400 MB POST is refused at its headers: nothing of the body is read (it is never sent)."""
    reply = _raw(catalog, "Content-Length: 400000000\r\n")
    assert reply.startswith(b"HTTP/1.1 401")


def test_a_bad_or_huge_content_length_is_refused_not_waited_on(catalog: RunningCatalog) -> None:
    auth = f"Authorization: Bearer {catalog.token}\r\n"
    assert _raw(catalog, auth + "Content-Length: -1\r\n").startswith(b"HTTP/1.1 400")
    assert _raw(catalog, auth + "Content-Length: nope\r\n").startswith(b"HTTP/1.1 400")
    assert _raw(catalog, auth + "Content-Length: 400000000\r\n").startswith(b"HTTP/1.1 413")


def test_stalled_connections_hold_a_bounded_number_of_threads(catalog: RunningCatalog) -> None:
    """200 connections that never send a byte made 208 threads; now at most MAX_CONNECTIONS are served at once,
    the rest get 503 at once, and the endpoint answers again as soon as the stalled ones close."""
    import socket
    from urllib.parse import urlparse

    from tools.json_http import MAX_CONNECTIONS

    url = urlparse(catalog.url)
    before = threading.active_count()
    stalled = [socket.create_connection((url.hostname, url.port), timeout=10) for _ in range(200)]
    try:
        busy = stalled[-1].recv(1024)  # the last ones were turned away, not given a thread
        assert busy.startswith(b"HTTP/1.1 503"), busy
        assert threading.active_count() <= before + MAX_CONNECTIONS
    finally:
        for conn in stalled:
            conn.close()
    auth = f"Authorization: Bearer {catalog.token}\r\n"
    for _ in range(50):  # the served ones notice their client closed and end
        if _raw(catalog, auth + "Content-Length: -1\r\n").startswith(b"HTTP/1.1 400"):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the endpoint did not answer after the stalled connections closed")


def test_a_reader_token_reads_and_never_writes(catalog_db: Path) -> None:
    """The token `catalog serve` prints: GETs and GraphQL queries, never a proposal or a mutation (a REST
    ingestProposal with it set provenance:PASS on a model once)."""
    running = start_embedded_catalog(catalog_db, token="writer", reader_token="reader")
    try:

        def post(path: str, body: dict[str, Any], token: str) -> int:
            request = urllib.request.Request(
                running.url + path,
                data=json.dumps(body).encode(),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as reply:
                    return int(reply.status)
            except urllib.error.HTTPError as exc:
                return exc.code

        query = {"query": "query { __typename }"}
        mutation = {"query": 'mutation { addTag(input: {tagUrn: "urn:li:tag:x", resourceUrn: "urn:li:x"}) }'}
        proposal = {"proposal": {"entityType": "dataset", "entityUrn": "urn:li:dataset:(a,b,PROD)"}}
        assert post("/api/graphql", query, "reader") == 200
        assert post("/api/graphql", mutation, "reader") == 403
        assert post("/api/graphql", {"query": "# a comment\nmutation { x }"}, "reader") == 403
        two = {"query": "query A { __typename } mutation B { x }", "operationName": "B"}
        assert post("/api/graphql", two, "reader") == 403
        assert post("/aspects?action=ingestProposal", proposal, "reader") == 403
        assert post("/aspects?action=ingestProposal", proposal, "writer") != 403  # the writer reaches the handler
        assert post("/api/graphql", query, "nobody") == 401
    finally:
        running.stop()
