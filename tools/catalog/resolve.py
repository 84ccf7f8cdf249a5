"""Turning what a person wrote ("payments.transactions.amount", "fraud_detector") into catalog URNs.

Search narrows the candidates; names decide. A subject that stays ambiguous is an error listing the
candidates, never a guess.
"""

from __future__ import annotations

import difflib
import re

from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import CatalogInputError

SCHEMA_FIELD = re.compile(r"^urn:li:schemaField:\((urn:li:dataset:\(.+\)),([^,()]+)\)$")


def dataset_name(urn: str) -> str:
    return urn.split(",")[1] if urn.count(",") >= 2 else urn


def model_name(urn: str) -> str:
    parts = urn.split(",")
    return parts[1] if len(parts) >= 3 else urn


def _score(hint: str, candidate: str) -> float:
    ratio = difflib.SequenceMatcher(None, hint.lower(), candidate.lower()).ratio()
    hint_parts, cand_parts = hint.lower().split("."), candidate.lower().split(".")
    # "payments.transactions" names the table `transactions`, not the topic `transactions.events`
    last = 0.2 if hint_parts[-1] == cand_parts[-1] else 0.0
    shared = len(set(hint_parts) & set(cand_parts)) / max(len(hint_parts), 1) * 0.2
    return ratio + last + shared


async def resolve_field(reader: CatalogReader, subject: str) -> tuple[str, str]:
    """(dataset urn, field) for 'db.schema.table.field', 'table.field', a schemaField URN or 'dataset URN.field'."""
    subject = subject.strip().strip("`'\"")
    match = SCHEMA_FIELD.match(subject)
    if match:
        return match.group(1), match.group(2)
    if subject.startswith("urn:li:dataset:"):
        urn, _, field = subject.rpartition(").")
        if urn and field:
            return urn + ")", field
        raise CatalogInputError(f"{subject} names a dataset but no field; say which field, e.g. '{subject}.amount'")
    hint, _, field = subject.rpartition(".")
    if not field:
        raise CatalogInputError("name the field, e.g. 'payments.transactions.amount'")
    query = hint.split(".")[-1] if hint else field
    candidates = [hit.urn for hit in await reader.search(query, filter="entity_type = dataset", num_results=25)]
    if not hint:
        holders = []
        for urn in candidates:
            if field in {f.field_path for f in await reader.list_schema_fields(urn)}:
                holders.append(urn)
        if len(holders) == 1:
            return holders[0], field
        listed = ", ".join(f"{dataset_name(u)}.{field}" for u in holders) or "none"
        raise CatalogInputError(
            f"'{field}' alone is ambiguous or unknown; datasets with that field: {listed}. "
            "Qualify it, e.g. 'payments.public.transactions.amount'"
        )
    if not candidates:
        raise CatalogInputError(f"no dataset in the catalog matches '{hint}'")
    ranked = sorted(candidates, key=lambda urn: _score(hint, dataset_name(urn)), reverse=True)
    best = ranked[0]
    if len(ranked) > 1 and abs(_score(hint, dataset_name(ranked[1])) - _score(hint, dataset_name(best))) < 1e-9:
        raise CatalogInputError(
            f"'{hint}' matches several datasets equally: "
            f"{', '.join(dataset_name(u) for u in ranked[:3])}; use the full name"
        )
    return best, field


async def resolve_model(reader: CatalogReader, subject: str) -> str:
    subject = subject.strip().strip("`'\"")
    if subject.startswith("urn:li:mlModel:"):
        return subject
    hits = [h.urn for h in await reader.search(subject, filter="entity_type = mlModel", num_results=25)]
    exact = [u for u in hits if model_name(u) == subject]
    if len(exact) == 1:
        return exact[0]
    names = [model_name(u) for u in hits]
    close = difflib.get_close_matches(subject, names, n=3, cutoff=0.5)
    raise CatalogInputError(f"no model named '{subject}'" + (f"; did you mean {', '.join(close)}?" if close else ""))
