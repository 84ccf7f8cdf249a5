"""The Feast registry, read with Feast's own SDK: which table each feature view reads and which features each feature
service holds — what DataHub's feast source leaves out (feature_store.py says how it is used).

`PROVENANCE_FEAST_REPO` names the Feast repository (the folder of `feature_store.yaml`). Feast pins pandas < 3 and
cannot share Provenance's environment, so the registry is read by Feast's CLI, `feast registry-dump` (the
executable `PROVENANCE_FEAST` names, default `feast` on PATH), which prints the registry as JSON from
`feature_store.yaml` and the registry file, without importing the repository's Python definitions. The offline
store's `database` (and `db_schema`) from `feature_store.yaml` turn a feature view's table into the dataset URN
DataHub's warehouse source writes (`<database>.<schema>.<table>`).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from tools.errors import BadRequest

REPO_ENV = "PROVENANCE_FEAST_REPO"
FEAST_ENV = "PROVENANCE_FEAST"
DUMP_TIMEOUT_S = 120
# Feast offline store type -> the DataHub platform its tables are ingested under
PLATFORMS = {"postgres": "postgres", "redshift": "redshift", "trino": "trino", "mssql": "mssql", "athena": "athena"}


class FeastRegistryError(BadRequest):
    """PROVENANCE_FEAST_REPO cannot be read; the message says what to fix."""


@dataclass(frozen=True)
class FeastView:
    name: str
    source: str  # "table rides.public.driver_hourly_stats", "query …", "file …", for messages
    table_urn: str | None  # the catalog dataset it reads; None for a query or a source Provenance cannot tie
    features: tuple[str, ...]
    field_mapping: dict[str, str] = field(default_factory=dict)  # feature name -> source column, when renamed


@dataclass(frozen=True)
class FeastRegistry:
    where: str
    views: dict[str, FeastView]
    services: dict[str, tuple[tuple[str, str], ...]]  # service -> (feature view, feature) pairs

    def view(self, namespace: str) -> FeastView | None:
        """The view an mlFeature's namespace names (`<view>`, or `<project>.<view>`)."""
        return self.views.get(namespace) or self.views.get(namespace.rsplit(".", 1)[-1])

    def services_with(self, namespace: str, feature: str) -> set[str]:
        view = self.view(namespace)
        name = view.name if view is not None else namespace
        return {s for s, pairs in self.services.items() if (name, feature) in pairs}


def registry_from_environment() -> FeastRegistry | None:
    text = os.environ.get(REPO_ENV, "").strip()
    if not text:
        return None
    repo = Path(text).expanduser().resolve()
    registry_file = _registry_file(repo)
    stamp = registry_file.stat().st_mtime_ns if registry_file is not None and registry_file.is_file() else 0
    return _load(repo, os.environ.get(FEAST_ENV, "").strip() or "feast", stamp)


@lru_cache(maxsize=4)
def _load(repo: Path, feast: str, _stamp: int) -> FeastRegistry:
    """Cached per repository, executable and registry file version: the CLI takes seconds to start."""
    config = _config(repo)
    executable = shutil.which(feast)
    if executable is None:
        raise FeastRegistryError(
            f"{REPO_ENV}={repo} needs Feast's CLI to read its registry, and {feast!r} is not found; install Feast "
            f"(pip install feast) in another environment and set {FEAST_ENV} to its `feast` executable"
        )
    done = subprocess.run(
        [executable, "registry-dump"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=DUMP_TIMEOUT_S,
        env={**os.environ, "FEAST_USAGE": "False"},
        check=False,
    )
    if done.returncode != 0:
        tail = " ".join(done.stderr.split()[-40:])
        raise FeastRegistryError(f"`feast registry-dump` in {repo} failed (exit {done.returncode}): {tail}")
    try:
        dump = json.loads(done.stdout[done.stdout.index("{") :])
    except (ValueError, json.JSONDecodeError) as exc:
        raise FeastRegistryError(f"`feast registry-dump` in {repo} printed no registry JSON") from exc
    return parse_registry(dump, config, where=str(repo))


def _config(repo: Path) -> dict[str, Any]:
    path = repo / "feature_store.yaml"
    if not path.is_file():
        raise FeastRegistryError(f"{REPO_ENV}={repo} is not a Feast repository: it has no feature_store.yaml")
    try:
        loaded = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise FeastRegistryError(f"{path} is not valid YAML: {exc}") from exc
    return loaded if isinstance(loaded, dict) else {}


def _registry_file(repo: Path) -> Path | None:
    try:
        registry = _config(repo).get("registry")
    except FeastRegistryError:
        return None
    path = registry.get("path") if isinstance(registry, dict) else registry
    if not isinstance(path, str) or "://" in path:
        return None
    return (repo / path).resolve()


def parse_registry(dump: dict[str, Any], config: dict[str, Any], *, where: str) -> FeastRegistry:
    """The registry's feature views and services, from `feast registry-dump`'s JSON and the repository's config."""
    offline = config.get("offline_store") or {}
    offline = offline if isinstance(offline, dict) else {}
    views: dict[str, FeastView] = {}
    for item in dump.get("featureViews") or []:
        spec = item.get("spec") or {}
        name = str(spec.get("name") or "")
        source = spec.get("batchSource") or {}
        features = tuple(str(f.get("name")) for f in spec.get("features") or [] if f.get("name"))
        text, table_urn = _source(source, offline)
        views[name] = FeastView(name, text, table_urn, features, _field_mapping(source))
    services: dict[str, tuple[tuple[str, str], ...]] = {}
    for item in dump.get("featureServices") or []:
        spec = item.get("spec") or {}
        pairs = []
        for projection in spec.get("features") or []:
            view = str(projection.get("featureViewName") or "")
            pairs += [(view, str(c.get("name"))) for c in projection.get("featureColumns") or [] if c.get("name")]
        services[str(spec.get("name") or "")] = tuple(pairs)
    return FeastRegistry(where, views, services)


def _field_mapping(source: dict[str, Any]) -> dict[str, str]:
    mapping = source.get("fieldMapping") or {}
    return {str(v): str(k) for k, v in mapping.items()} if isinstance(mapping, dict) else {}


def _source(source: dict[str, Any], offline: dict[str, Any]) -> tuple[str, str | None]:
    """(a description, the catalog dataset URN) of a feature view's batch source."""
    options = _custom_options(source)
    table = str(options.get("table") or source.get("tableRef") or "").strip()
    query = str(options.get("query") or source.get("query") or "").strip()
    if not table and not query:
        file_options = source.get("fileOptions") or {}
        uri = file_options.get("uri") or file_options.get("fileUrl")
        return (f"file {uri}" if uri else f"a {source.get('type') or 'source'} of unknown shape"), None
    if not table:
        return f"query {' '.join(query.split())[:200]}", None
    platform = PLATFORMS.get(str(offline.get("type") or ""))
    database = str(offline.get("database") or "").strip()
    if platform is None or not database:
        return f"table {table} (offline store {offline.get('type') or 'unknown'})", None
    parts = table.split(".")
    if len(parts) == 1:
        parts = [str(offline.get("db_schema") or "public"), *parts]
    if len(parts) == 2:
        parts = [database, *parts]
    qualified = ".".join(p.strip('"').lower() for p in parts)
    return f"table {qualified}", f"urn:li:dataset:(urn:li:dataPlatform:{platform},{qualified},PROD)"


def _custom_options(source: dict[str, Any]) -> dict[str, Any]:
    """A contrib source's options (PostgreSQLSource: `{"name", "table", "query"}`), base64 JSON in the dump."""
    raw = (source.get("customOptions") or {}).get("configuration")
    if not raw:
        return {}
    try:
        decoded = json.loads(base64.b64decode(raw))
    except (binascii.Error, ValueError):
        return {}
    return decoded if isinstance(decoded, dict) else {}
