"""Checking that the dataset and field a caller named exist in the catalog, before any lineage is read. A name the
catalog does not have is a CatalogInputError whose message lists the closest matches."""

from __future__ import annotations

import difflib

from tools.catalog.datahub import CatalogReader, EntitySummary, SchemaField
from tools.errors import BadRequest


class CatalogInputError(BadRequest):
    """The caller named something the catalog does not have; the message lists the closest matches."""


def check_dataset_urn(urn: str) -> None:
    """Cheap shape check, before any catalog is opened."""
    if not urn.startswith("urn:li:dataset:"):
        raise CatalogInputError(f"'{urn}' is not a dataset URN; expected urn:li:dataset:(<platform>,<name>,<env>)")


def closest(name: str, candidates: list[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, candidates, n=n, cutoff=0.3) or candidates[:n]


async def require_dataset(reader: CatalogReader, urn: str) -> EntitySummary:
    """The dataset's catalog entry, or a CatalogInputError naming the closest datasets."""
    check_dataset_urn(urn)
    entity = await reader.get_entity(urn)
    if entity is not None:
        return entity
    name = urn.split(",")[1] if urn.count(",") >= 2 else urn
    hits = await reader.search(name.split(".")[-1], filter="entity_type = dataset", num_results=20)
    suggestions = closest(urn, [h.urn for h in hits])
    raise CatalogInputError(f"dataset {urn} is not in the catalog. Closest matches: {', '.join(suggestions) or 'none'}")


async def require_field(reader: CatalogReader, dataset_urn: str, field: str) -> SchemaField:
    """The field's schema entry, or a CatalogInputError naming the dataset's closest fields."""
    fields = await reader.list_schema_fields(dataset_urn)
    for candidate in fields:
        if candidate.field_path == field:
            return candidate
    names = [f.field_path for f in fields]
    raise CatalogInputError(
        f"field '{field}' is not in {dataset_urn}. Closest matches: {', '.join(closest(field, names)) or 'none'}"
    )
