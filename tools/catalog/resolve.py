"""Turning what a person wrote ("payments.transactions.amount", "fraud_detector") into catalog URNs, and checking
that a dataset and field a caller named exist before any lineage is read.

Search narrows the candidates; names decide. A subject that stays ambiguous, or a name the catalog does not have,
is a CatalogInputError listing the closest candidates, never a guess.
"""

from __future__ import annotations

import difflib
import re

from tools.catalog.conventions import Conventions, load_conventions
from tools.catalog.datahub import CatalogReader, SchemaField
from tools.catalog.entity import EntitySummary
from tools.catalog.siblings import without_dbt_twins
from tools.catalog.training_runs import dataset_parts
from tools.catalog.urn_shape import not_a_dataset_urn
from tools.errors import BadRequest

SCHEMA_FIELD = re.compile(r"^urn:li:schemaField:\((urn:li:dataset:\(.+\)),([^,()]+)\)$")
PLATFORM_PREFIX = re.compile(r"^(?P<platform>[A-Za-z][\w-]*):(?P<rest>[^:].*)$")  # sqlite:main.table.field


class CatalogInputError(BadRequest):
    """The caller named something the catalog does not have; the message lists the closest matches."""


def check_dataset_urn(urn: str) -> None:
    """Cheap shape check, before any catalog is opened."""
    if problem := not_a_dataset_urn(urn):
        raise CatalogInputError(problem)


def closest(name: str, candidates: list[str], n: int = 3) -> list[str]:
    """Up to `n` candidates close to `name` (difflib's ratio at least 0.6: a typo, not any name), closest first."""
    return difflib.get_close_matches(name, candidates, n=n, cutoff=0.6)


def near_or_listed(name: str, candidates: list[str], listed: int = 12) -> str:
    """The close candidates ("Closest matches: a, b"), else what there is ("No close match; it has: a, b, c, …")."""
    if near := closest(name, candidates):
        return f"Closest matches: {', '.join(near)}"
    shown = ", ".join(sorted(candidates)[:listed]) + (
        f", … ({len(candidates)} in all)" if len(candidates) > listed else ""
    )
    return f"No close match; it has: {shown or 'nothing'}"


SUGGESTION_POOL = 1000
"""How many of the catalog's datasets (or models) a misspelled name is compared with when search finds nothing:
search matches whole words, so a typo ("transactoins") finds no candidate to rank."""


async def similar_names(reader: CatalogReader, name: str, entity_type: str, n: int = 3) -> list[str]:
    """URNs of the catalog's entities whose names are closest to `name` by edit distance (difflib's ratio)."""
    hits = await reader.search("*", filter=f"entity_type = {entity_type}", num_results=SUGGESTION_POOL)
    by_name = {(dataset_name(h.urn) if entity_type == "dataset" else model_name(h.urn)): h.urn for h in hits}
    return [by_name[close] for close in difflib.get_close_matches(name, list(by_name), n=n, cutoff=0.6)]


async def require_dataset(reader: CatalogReader, urn: str) -> EntitySummary:
    """The dataset's catalog entry, or a CatalogInputError naming the closest datasets."""
    check_dataset_urn(urn)
    entity = await reader.get_entity(urn)
    if entity is not None:
        return entity
    name = dataset_name(urn)
    hits = await reader.search(name.split(".")[-1], filter="entity_type = dataset", num_results=20)
    suggestions = closest(urn, [h.urn for h in hits]) if hits else await similar_names(reader, name, "dataset")
    raise CatalogInputError(f"dataset {urn} is not in the catalog. Closest matches: {', '.join(suggestions) or 'none'}")


async def require_field(reader: CatalogReader, dataset_urn: str, field: str) -> SchemaField:
    """The field's schema entry, or a CatalogInputError naming the dataset's closest fields."""
    fields = await reader.list_schema_fields(dataset_urn)
    for candidate in fields:
        if candidate.field_path == field:
            return candidate
    names = [f.field_path for f in fields]
    raise CatalogInputError(f"field '{field}' is not in {dataset_urn}. {near_or_listed(field, names)}")


def one_column(subject: str, pairs: list[tuple[str, str]]) -> tuple[str, str]:
    """The one (dataset, field) a change names; a feature view or service reading several is an error listing them."""
    if len(pairs) == 1:
        return pairs[0]
    listed = "; ".join(f"{dataset_name(d)}.{f}" for d, f in pairs)
    raise CatalogInputError(f"{subject} reads {len(pairs)} columns; name one of them: {listed}")


def read_as(subject: str, dataset_urn: str, field: str) -> str | None:
    """'amount, read as payments.public.transactions.amount' when the name a person wrote was expanded (a short
    table name, a feature's column); None when they wrote it whole (or as a URN)."""
    written = subject.strip().strip("`'\"")
    full = f"{dataset_name(dataset_urn)}.{field}"
    if written.startswith("urn:li:") or written.split(":", 1)[-1].lower() == full.lower():
        return None
    return f"'{written}' read as {full}"


def dataset_name(urn: str) -> str:
    return urn.split(",")[1] if urn.count(",") >= 2 else urn


def model_name(urn: str) -> str:
    parts = urn.split(",")
    return parts[1] if len(parts) >= 3 else urn


DEFAULT_SCHEMAS = frozenset({"public", "dbo", "main"})
"""The schema a warehouse uses when none is named: `payments.transactions` is payments.public.transactions."""


def names_dataset(hint: str, name: str) -> bool:
    """The hint is the name, its last dotted parts, or database.table with the default schema left out
    (case-insensitive)."""
    wanted, parts = hint.lower().split("."), name.lower().split(".")
    if len(wanted) <= len(parts) and parts[-len(wanted) :] == wanted:
        return True
    return len(wanted) == 2 and len(parts) == 3 and parts[1] in DEFAULT_SCHEMAS and [parts[0], parts[2]] == wanted


def _score(hint: str, candidate: str) -> float:
    ratio = difflib.SequenceMatcher(None, hint.lower(), candidate.lower()).ratio()
    hint_parts, cand_parts = hint.lower().split("."), candidate.lower().split(".")
    # "payments.transactions" names the table `transactions`, not the topic `transactions.events`
    last = 0.2 if hint_parts[-1] == cand_parts[-1] else 0.0
    shared = len(set(hint_parts) & set(cand_parts)) / max(len(hint_parts), 1) * 0.2
    return ratio + last + shared


async def resolve_field(reader: CatalogReader, subject: str, conventions: Conventions | None = None) -> tuple[str, str]:
    """(dataset urn, field) for 'db.schema.table.field', 'platform:db.table.field', 'table.field', a schemaField URN
    or 'dataset URN.field'."""
    conventions = conventions or load_conventions()
    subject = subject.strip().strip("`'\"")
    match = SCHEMA_FIELD.match(subject)
    if match:
        return match.group(1), match.group(2)
    if subject.startswith("urn:li:dataset:"):
        urn, _, field = subject.rpartition(").")
        if urn and field:
            return urn + ")", field
        raise CatalogInputError(f"{subject} names a dataset but no field; say which field, e.g. '{subject}.amount'")
    platform = None
    prefixed = PLATFORM_PREFIX.match(subject)
    if prefixed and not subject.startswith("urn:"):
        platform, subject = prefixed["platform"].lower(), prefixed["rest"]
    hint, _, field = subject.rpartition(".")
    if not field:
        raise CatalogInputError("name the field, e.g. 'payments.transactions.amount'")
    query = hint.split(".")[-1] if hint else field
    only = "entity_type = dataset" + (f" AND platform = {platform}" if platform else "")
    candidates = [hit.urn for hit in await reader.search(query, filter=only, num_results=25)]
    if platform:
        candidates = [u for u in candidates if dataset_parts(u)[0] == platform]
    if not hint:
        holders = []
        for urn in candidates:
            if field in {f.field_path for f in await reader.list_schema_fields(urn)}:
                holders.append(urn)
        if len(holders) == 1:
            return holders[0], field
        if not holders:
            raise CatalogInputError(
                f"no dataset found for the field '{field}'; name its dataset too, e.g. 'schema.table.{field}'"
            )
        listed = ", ".join(f"{dataset_name(u)}.{field}" for u in holders)
        raise CatalogInputError(
            f"'{field}' alone is ambiguous: {len(holders)} datasets have it ({listed}). "
            f"Qualify it, e.g. '{dataset_name(holders[0])}.{field}'"
        )
    if not candidates:
        where = f" on platform {platform}" if platform else ""
        close = [dataset_name(u) for u in await similar_names(reader, hint, "dataset")]
        guess = f"; did you mean {', '.join(f'{name}.{field}' for name in close)}?" if close else ""
        raise CatalogInputError(f"no dataset in the catalog matches '{hint}'{where}{guess}")
    # A name resolves exactly or not at all: the whole name, or its last dotted parts (`public.transactions`,
    # `transactions`), case-insensitively. A close name (`billing.transactions` for payments.public.transactions,
    # a typo) is a question, never an answer about another table.
    named = [u for u in candidates if names_dataset(hint, dataset_name(u))]
    if not named:
        close = [dataset_name(u) for u in sorted(candidates, key=lambda u: _score(hint, dataset_name(u)), reverse=True)]
        close = list(dict.fromkeys(close))[:3] or [
            dataset_name(u) for u in await similar_names(reader, hint, "dataset")
        ]
        where = f" on platform {platform}" if platform else ""
        guess = f"; did you mean {', '.join(f'{name}.{field}' for name in close)}?" if close else ""
        raise CatalogInputError(f"no dataset named '{hint}'{where} in the catalog{guess}")
    ranked = sorted(named, key=lambda urn: _score(hint, dataset_name(urn)), reverse=True)
    top = _score(hint, dataset_name(ranked[0]))
    tied = [u for u in ranked if abs(_score(hint, dataset_name(u)) - top) < 1e-9]
    # A mirror (e.g. the mlflow dataset named after a table) stands for a table; the table carries the lineage.
    originals = [u for u in tied if not conventions.is_mirror(dataset_parts(u)[0])]
    tied = without_dbt_twins(originals or tied)
    if len(tied) > 1:
        listed = "; ".join(f"{dataset_name(u)} on {dataset_parts(u)[0]} ({u})" for u in tied[:5])
        raise CatalogInputError(
            f"'{hint}' matches several datasets equally: {listed}. "
            f"Name one as platform:name.field (e.g. '{dataset_parts(tied[0])[0]}:{dataset_name(tied[0])}.{field}') "
            "or give its URN"
        )
    return tied[0], field


async def resolve_model(reader: CatalogReader, subject: str) -> str:
    subject = subject.strip().strip("`'\"")
    if subject.startswith("urn:li:mlModel:"):
        return subject
    hits = [h.urn for h in await reader.search(subject, filter="entity_type = mlModel", num_results=25)]
    exact = [u for u in hits if model_name(u) == subject]
    if len(exact) == 1:
        return exact[0]
    versions = [u for u in hits if is_version_of(model_name(u), subject)]
    if len(versions) == 1:
        return versions[0]
    if versions:
        listed = ", ".join(sorted(model_name(u) for u in versions))
        raise CatalogInputError(f"'{subject}' has several registered versions in the catalog: {listed}; name one")
    names = [model_name(u) for u in hits]
    close = difflib.get_close_matches(subject, names, n=3, cutoff=0.5)
    if not close:  # search matches whole words: a typo finds nothing to compare with
        close = [model_name(u) for u in await similar_names(reader, subject, "mlModel")]
    raise CatalogInputError(f"no model named '{subject}'" + (f"; did you mean {', '.join(close)}?" if close else ""))


def is_version_of(name: str, model: str) -> bool:
    """DataHub's mlflow source names one model per registered version: <name>_<version>."""
    return re.fullmatch(re.escape(model) + r"_\d+", name) is not None


async def knows_name(
    reader: CatalogReader, word: str, *, fields_only: bool = False, schemas: dict[str, set[str]] | None = None
) -> bool:
    """Whether the catalog has a field, dataset, feature or (unless `fields_only`) model named exactly `word`,
    case-insensitively (a model also as one of its versions). The router's guess at a subject is kept only if this
    holds: a word of the sentence ("land", "txns") never stands for a field it does not name. `schemas` caches each
    dataset's lowered field names across the words of one question."""
    lowered = word.lower()
    kinds = ("mlFeature", "mlFeatureTable") if fields_only else ("mlFeature", "mlFeatureTable", "mlModel")
    for kind in kinds:
        for hit in await reader.search(word, filter=f"entity_type = {kind}", num_results=10):
            name = model_name(hit.urn).lower() if kind == "mlModel" else (hit.name or hit.urn).lower()
            if lowered in (name, name.rsplit(".", 1)[-1]) or (kind == "mlModel" and is_version_of(name, lowered)):
                return True
    schemas = {} if schemas is None else schemas
    hint, _, field = word.rpartition(".")
    for hit in await reader.search(field, filter="entity_type = dataset", num_results=10):
        if names_dataset(word, dataset_name(hit.urn)):
            return True
        if hint and not names_dataset(hint, dataset_name(hit.urn)):
            continue
        if hit.urn not in schemas:
            schemas[hit.urn] = {f.field_path.lower() for f in await reader.list_schema_fields(hit.urn)}
        if field.lower() in schemas[hit.urn]:
            return True
    return False
