"""What a dataset URN looks like, and the words that say one does not: a leaf (no imports), so the CLI's first
check (agent/cli/precheck.py) and the catalog's resolver (tools/catalog/resolve.py) refuse a malformed URN in the
same words without the CLI loading the catalog's libraries."""

from __future__ import annotations

DATASET_PREFIX = "urn:li:dataset:"


def not_a_dataset_urn(urn: str) -> str | None:
    """Why `urn` is not a dataset URN, or None when it has a dataset URN's shape."""
    if urn.startswith(DATASET_PREFIX):
        return None
    return f"'{urn}' is not a dataset URN; expected urn:li:dataset:(<platform>,<name>,<env>)"
