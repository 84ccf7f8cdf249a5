"""A GMS-compatible HTTP endpoint over the Lite store, on 127.0.0.1 with a bearer token.

Only the REST and GraphQL calls made by the pinned mcp-server-datahub and by the DataHub SDK's REST emitter
are implemented; any other route answers 501 with the route named.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datahub.emitter.aspect import ASPECT_MAP
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.emitter.serialization_helper import post_json_transform, pre_json_transform
from datahub.metadata.urns import Urn

from tools.embedded.graphql import GraphQLApi, GraphQLError, UnsupportedOperation
from tools.embedded.patch import PatchError, apply_patch, validated_aspect
from tools.embedded.store import LiteStore
from tools.errors import BadRequest
from tools.json_http import BoundedHTTPServer, JsonHandler

log = logging.getLogger(__name__)

# Claimed so that the MCP server enables its mutation and document tools (they require OSS >= 1.4.0).
GMS_VERSION = "v1.4.0"
SERVER_CONFIG = {
    "noCode": "true",
    "versions": {"acryldata/datahub": {"version": GMS_VERSION}},
    "datahub": {"serverType": "quickstart"},
    "patchCapable": True,
    "provenanceEmbedded": True,
}


class HttpError(BadRequest):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class EmbeddedGms:
    """The request logic, independent of the HTTP transport so tests can call it directly."""

    def __init__(self, store: LiteStore) -> None:
        self.store = store
        self.graphql = GraphQLApi(store)

    def get(self, path: str, query: dict[str, list[str]]) -> Any:
        if path == "/config":
            return SERVER_CONFIG
        if path.startswith("/aspects/"):
            return self._get_aspect(urllib.parse.unquote(path[len("/aspects/") :]), query)
        if path.startswith("/entitiesV2/"):
            return self._get_entity(urllib.parse.unquote(path[len("/entitiesV2/") :]), query)
        if path.rstrip("/") == "/openapi/relationships/v1":
            return self._relationships(query)
        raise HttpError(501, f"embedded DataHub does not implement GET {path}")

    def _relationships(self, query: dict[str, list[str]]) -> Any:
        """GMS's relationships API for the one relationship the embedded catalog indexes besides lineage: the
        assertions about an entity (`Asserts`, INCOMING)."""
        urn = (query.get("urn") or [""])[0]
        types = set(query.get("relationshipTypes") or [])
        direction = (query.get("direction") or [""])[0]
        if types != {"Asserts"} or direction != "INCOMING":
            raise HttpError(501, "embedded DataHub answers relationships only for Asserts, INCOMING")
        start = int((query.get("start") or ["0"])[0] or 0)
        found = sorted(self.store.index.assertions_about(urn))[start:]
        entities = [{"urn": assertion, "relationshipType": "Asserts"} for assertion in found]
        return {"start": start, "count": len(entities), "total": start + len(entities), "entities": entities}

    def post(self, path: str, query: dict[str, list[str]], body: Any) -> Any:
        action = (query.get("action") or [""])[0]
        if path == "/api/graphql":
            try:
                data = self.graphql.execute(body.get("query", ""), body.get("variables"), body.get("operationName"))
            except (UnsupportedOperation, GraphQLError) as exc:
                return {"data": None, "errors": [{"message": str(exc)}]}
            return {"data": data}
        if path == "/aspects" and action == "ingestProposal":
            self._ingest(body["proposal"])
            return {"value": body["proposal"]["entityUrn"]}
        if path == "/aspects" and action == "ingestProposalBatch":
            for proposal in body["proposals"]:
                self._ingest(proposal)
            return {"value": [p["entityUrn"] for p in body["proposals"]]}
        if path.startswith("/openapi/v3/entity/") and path.endswith("/batchGet"):
            return self._batch_get(body)
        raise HttpError(501, f"embedded DataHub does not implement POST {path}{'?action=' + action if action else ''}")

    def _get_aspect(self, urn: str, query: dict[str, list[str]]) -> Any:
        aspect_name = (query.get("aspect") or [""])[0]
        version = int((query.get("version") or ["0"])[0])
        parsed = Urn.from_string(urn)
        if aspect_name.endswith("Key"):
            # Lite stores no key aspects: an entity exists when it has any aspect.
            if not self.store.exists(urn):
                raise HttpError(404, f"{urn} not found")
            key = parsed.to_key_aspect()  # type: ignore[attr-defined]
            return {"version": 0, "aspect": {_fullname(key): pre_json_transform(key.to_obj())}}
        stored = self.store.aspect_version(urn, aspect_name, version)
        if stored is None or aspect_name not in ASPECT_MAP:
            raise HttpError(404, f"aspect {aspect_name} of {urn} not found")
        typed = ASPECT_MAP[aspect_name].from_obj(post_json_transform(stored[0]))
        return {"version": version, "aspect": {_fullname(typed): pre_json_transform(typed.to_obj())}}

    def _get_entity(self, urn: str, query: dict[str, list[str]]) -> Any:
        wanted = None
        if query.get("aspects"):
            wanted = set(query["aspects"][0].removeprefix("List(").removesuffix(")").split(","))
        aspects = {
            name: {"name": name, "version": 0, "value": pre_json_transform(value.to_obj())}
            for name, value in self.store.typed_aspects(urn).items()
            if wanted is None or name in wanted
        }
        if not aspects and not self.store.exists(urn):
            raise HttpError(404, f"{urn} not found")
        return {"urn": urn, "aspects": aspects}

    def _batch_get(self, body: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for request in body:
            urn = request["urn"]
            entity: dict[str, Any] = {"urn": urn}
            for aspect_name, spec in request.items():
                if aspect_name == "urn":
                    continue
                version = int(((spec or {}).get("headers") or {}).get("If-Version-Match", "0"))
                stored = self.store.aspect_version(urn, aspect_name, version)
                if stored is not None:
                    value, newest = stored
                    entity[aspect_name] = {
                        "value": value,
                        # GMS reports N with history rows 1..N-1; Lite's newest row N duplicates version 0.
                        "systemMetadata": {"version": str(newest)},
                    }
            out.append(entity)
        return out

    def _ingest(self, proposal: dict[str, Any]) -> None:
        change = proposal.get("changeType", "UPSERT")
        name = proposal["aspectName"]
        if change not in ("UPSERT", "PATCH"):
            raise HttpError(422, f"embedded DataHub only accepts UPSERT and PATCH proposals, got {change} for {name}")
        if change == "PATCH":
            self._patch(proposal["entityUrn"], name, proposal["aspect"]["value"])
            return
        if name.endswith("Key"):
            return
        if name not in ASPECT_MAP:
            raise HttpError(422, f"unknown aspect {name}")
        value = json.loads(proposal["aspect"]["value"])
        aspect = ASPECT_MAP[name].from_obj(post_json_transform(value))
        self.store.write(MetadataChangeProposalWrapper(entityUrn=proposal["entityUrn"], aspect=aspect))

    def _patch(self, urn: str, name: str, raw: str) -> None:
        """Read the current aspect, apply the patch with GMS's template semantics, write through the store."""
        if name not in ASPECT_MAP:
            raise HttpError(422, f"unknown aspect {name}")
        with self.store.locked():
            stored = self.store.aspect_version(urn, name, 0)
            try:
                aspect = validated_aspect(name, apply_patch(name, stored[0] if stored else None, raw))
            except PatchError as exc:
                raise HttpError(422, f"PATCH of {name} on {urn} refused: {exc}") from exc
            self.store.write(MetadataChangeProposalWrapper(entityUrn=urn, aspect=aspect))


def _fullname(aspect: Any) -> str:
    return str(aspect.RECORD_SCHEMA.fullname).replace(".pegasus2avro", "")


MAX_BODY_BYTES = 64 << 20  # an ingestion batch is a few MB; more is refused (413) before it is read
SOCKET_TIMEOUT_S = 60


# Anywhere, not only first: a document may hold several operations and name the mutation in operationName. A query
# that merely mentions the word is refused too: a reader never needs it.
_MUTATION = re.compile(r"\bmutation\b")


def is_read(method: str, path: str, body: Any) -> bool:
    """What a read-only token may do: GET, and GraphQL queries (not mutations); every other POST writes."""
    if method == "GET":
        return True
    if path == "/api/graphql" and isinstance(body, dict):
        return not _MUTATION.search(str(body.get("query") or ""))
    return False


def _handler(gms: EmbeddedGms, token: str, reader_token: str | None = None) -> type[JsonHandler]:
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"
        timeout = SOCKET_TIMEOUT_S  # a stalled connection is closed, and its thread ends

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s " + format, self.address_string(), *args)

        def _dispatch(self, method: str) -> None:
            writer = self.bearer_matches(token)
            if not writer and not (reader_token and self.bearer_matches(reader_token)):  # before reading the body
                self.close_connection = True
                self.reply(401, {"message": "missing or wrong bearer token for the embedded DataHub"})
                return
            raw = self.read_body(MAX_BODY_BYTES)
            if raw is None:
                return
            path, _, qs = self.path.partition("?")
            query = urllib.parse.parse_qs(qs)
            try:
                body = json.loads(raw or b"{}") if method != "GET" else None
                if not writer and not is_read(method, path, body):
                    raise HttpError(403, "this token reads only; writes need the writer token of `catalog serve`")
                if method == "GET":
                    payload = gms.get(path, query)
                else:
                    payload = gms.post(path, query, body)
                self.reply(200, payload)
            except HttpError as exc:
                self.reply(exc.status, {"message": str(exc), "status": exc.status})
            except Exception as exc:  # a bug must reach the client as a 500 with its message, and the log
                log.exception("embedded DataHub failed on %s %s", method, self.path)
                self.reply(500, {"message": f"{type(exc).__name__}: {exc}", "status": 500})

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            self._dispatch("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._dispatch("POST")

    return Handler


@dataclass
class RunningCatalog:
    url: str
    token: str  # reads and writes
    db_path: Path
    gms: EmbeddedGms
    server: BoundedHTTPServer
    thread: threading.Thread
    startup_seconds: float
    reader_token: str | None = None  # reads only (GET, GraphQL queries): the one `catalog serve` prints

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        self.gms.store.close()


def start_embedded_catalog(
    db_path: Path, *, port: int = 0, token: str | None = None, reader_token: str | None = None
) -> RunningCatalog:
    """Serve the Lite file on 127.0.0.1 (a free port unless given) in a background thread; `token` reads and writes,
    `reader_token` (when given) only reads."""
    started = time.perf_counter()
    token = token or secrets.token_urlsafe(24)
    gms = EmbeddedGms(LiteStore(db_path))
    server = BoundedHTTPServer(("127.0.0.1", port), _handler(gms, token, reader_token))
    thread = threading.Thread(target=server.serve_forever, name="embedded-datahub", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    return RunningCatalog(url, token, db_path, gms, server, thread, time.perf_counter() - started, reader_token)


@contextmanager
def embedded_catalog(db_path: Path) -> Iterator[RunningCatalog]:
    running = start_embedded_catalog(db_path)
    try:
        yield running
    finally:
        running.stop()
