"""The answer to "what is the latest verdict for M?": the newest impact document first, not the catalog's order."""

from __future__ import annotations

from agent.nodes.catalog_qa import newest_first


def _doc(urn: str, title: str | None) -> dict[str, object]:
    return {"urn": urn, "info": None if title is None else {"title": title}}


def test_documents_are_newest_run_first_and_foreign_ones_last() -> None:
    documents = [
        _doc("urn:li:document:a", "Provenance BLOCK: scale on t.amount (run 20261101T080000Z-aaaaaa)"),
        _doc("urn:li:document:wiki", "Model card"),
        _doc("urn:li:document:c", "Provenance PASS: round on t.amount (run 20261203T090000Z-cccccc)"),
        _doc("urn:li:document:b", "Provenance WARNING: shift on t.amount (run 20261115T120000Z-bbbbbb)"),
        _doc("urn:li:document:none", None),
    ]
    assert [d["urn"] for d in newest_first(documents)] == [
        "urn:li:document:c",
        "urn:li:document:b",
        "urn:li:document:a",
        "urn:li:document:wiki",
        "urn:li:document:none",
    ]
