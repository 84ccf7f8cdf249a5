"""A feature, a feature view or a feature service as the subject of a question, and a dataset the catalog knows only
as the source of features: each tied to the column it reads, as feature_store.py ties them (the feature's source in
the catalog, else the Feast registry), or an error saying why it cannot be."""

from __future__ import annotations

from dataclasses import dataclass

from tools.catalog.datahub import CatalogReader, SchemaField
from tools.catalog.entity import EntitySummary
from tools.catalog.feast_registry import FeastRegistry
from tools.catalog.feature_store import FEAST_REPO_ENV, SEARCH_LIMIT, UNKNOWN_DATASET, feature_parts
from tools.errors import BadRequest

# --- a feature, a feature view or a feature service as the subject -------------------------------------------------


@dataclass(frozen=True)
class FeatureSubject:
    """A feature a person named, and the column it reads."""

    feature_urn: str
    dataset_urn: str
    column: str
    how: str  # "its source in the catalog", "the Feast registry (…)"


async def resolve_features(reader: CatalogReader, text: str, registry: FeastRegistry | None) -> list[FeatureSubject]:
    """The features `text` names — an mlFeature URN or name (`conv_rate`, `driver_hourly_stats.conv_rate`), an
    mlFeatureTable URN or feature view name, or a feature service of the registry — each with the column it reads.
    A name the catalog does not have, or a feature whose column cannot be learned, is an error saying so."""
    text = text.strip().strip("`'\"")
    features = await _named_features(reader, text, registry)
    props = await reader.sdk_aspects(features, ["mlFeatureProperties"])
    subjects, untied = [], []
    for urn in features:
        namespace, name = feature_parts(urn)
        sources = [
            s
            for s in ((props.get(urn) or {}).get("mlFeatureProperties") or {}).get("sources") or []
            if s != UNKNOWN_DATASET
        ]
        view = registry.view(namespace) if registry is not None else None
        if sources:
            subjects += [FeatureSubject(urn, s, name, "its source in the catalog") for s in sources]
        elif registry is not None and view is not None and view.table_urn is not None:
            column = view.field_mapping.get(name, name)
            subjects.append(FeatureSubject(urn, view.table_urn, column, f"the Feast registry ({registry.where})"))
        else:
            untied.append(urn)
    if untied:
        why = (
            f"set {FEAST_REPO_ENV} to the Feast repository"
            if registry is None
            else f"the Feast registry ({registry.where}) does not tie them to a table"
        )
        raise FeatureSubjectError(
            f"{', '.join(untied)}: the catalog records no source for {'it' if len(untied) == 1 else 'them'} "
            f"(DataHub's feast source writes `unknown` for PostgreSQL and most offline stores); {why}"
        )
    return subjects


class FeatureSubjectError(BadRequest):
    """A feature subject the catalog does not have, or whose column cannot be learned."""


async def _named_features(reader: CatalogReader, text: str, registry: FeastRegistry | None) -> list[str]:
    if text.startswith("urn:li:mlFeature:"):
        return [text]
    if text.startswith("urn:li:mlFeatureTable:"):
        return await _table_features(reader, text)
    name = text.rsplit(".", 1)[-1]
    hits = await reader.search(name, filter="entity_type = mlFeature", num_results=SEARCH_LIMIT)
    named = sorted(
        h.urn
        for h in hits
        if text.lower() in {feature_parts(h.urn)[1].lower(), ".".join(feature_parts(h.urn)).lower()}
        or ".".join(feature_parts(h.urn)).lower().endswith("." + text.lower())
    )
    if named:
        return named
    tables = await reader.search(text, filter="entity_type = mlFeatureTable", num_results=SEARCH_LIMIT)
    matching = [t.urn for t in tables if t.urn.rstrip(")").rsplit(",", 1)[-1].lower().endswith(text.lower())]
    if len(matching) == 1:
        return await _table_features(reader, matching[0])
    if len(matching) > 1:
        raise FeatureSubjectError(f"{text!r} names more than one feature view: {', '.join(matching)}; give its URN")
    if registry is not None and text in registry.services:
        urns = [f"urn:li:mlFeature:({_namespace(hits, view)},{feature})" for view, feature in registry.services[text]]
        return urns
    close = sorted({".".join(feature_parts(h.urn)) for h in hits})[:5]
    raise FeatureSubjectError(
        f"no mlFeature, feature view or feature service named {text!r} in the catalog"
        + (f"; features with similar names: {', '.join(close)}" if close else "")
        + ("" if registry is not None else f" (feature services are read from {FEAST_REPO_ENV}, which is not set)")
    )


def _namespace(hits: list[EntitySummary], view: str) -> str:
    for hit in hits:
        namespace = feature_parts(hit.urn)[0]
        if namespace == view or namespace.endswith("." + view):
            return namespace
    return view


async def _table_features(reader: CatalogReader, table_urn: str) -> list[str]:
    props = await reader.sdk_aspects([table_urn], ["mlFeatureTableProperties"])
    features = ((props.get(table_urn) or {}).get("mlFeatureTableProperties") or {}).get("mlFeatures") or []
    if not features:
        raise FeatureSubjectError(f"{table_urn} is not in the catalog, or lists no features")
    return [str(f) for f in features]


# --- a dataset the catalog knows only as the source of features ---------------------------------------------------

# mlFeatureProperties.dataType -> the schema field type the mutation operators check
FEATURE_TYPES = {"CONTINUOUS": "NUMBER", "ORDINAL": "NUMBER", "COUNT": "NUMBER", "BINARY": "BOOLEAN"}


async def source_only_fields(reader: CatalogReader, dataset_urn: str) -> dict[str, SchemaField]:
    """The fields of a dataset no source ingested but mlFeatures name as their source (the feast source writes a
    File view's parquet this way): its columns are the features' names, typed by their dataType. Empty when no
    feature reads it."""
    hits = await reader.get_lineage(dataset_urn, max_hops=1)
    features = sorted({h.urn for h in hits if h.type == "MLFEATURE"})
    if not features:
        return {}
    props = await reader.sdk_aspects(features, ["mlFeatureProperties"])
    fields: dict[str, SchemaField] = {}
    for urn in features:
        value = (props.get(urn) or {}).get("mlFeatureProperties") or {}
        if dataset_urn not in (value.get("sources") or []):
            continue
        data_type = str(value.get("dataType") or "")
        fields[feature_parts(urn)[1]] = SchemaField(
            fieldPath=feature_parts(urn)[1],
            type=FEATURE_TYPES.get(data_type, "STRING"),
            nativeDataType=f"mlFeature {data_type or 'of unknown type'}",
            description=f"read by {urn}: the catalog has no schema for this dataset",
        )
    return fields
