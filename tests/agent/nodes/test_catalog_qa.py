"""The answer to "what is the latest verdict for M?": the newest impact document first, not the catalog's order."""

from __future__ import annotations

import asyncio
import re

from agent.conversation import open_session
from agent.nodes.catalog_qa import newest_first
from tests.agent.helpers import DEMO_QUESTION
from tools.settings import ProvenanceSettings


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


def test_the_latest_verdict_says_which_it_is_published_or_latest_run(settings: ProvenanceSettings) -> None:
    """The chat answered with DataHub's tag (the latest *published* verdict) and MCP with the latest run: one
    answer now says both, each by its name, so an unpublished newer run is not mistaken for none."""

    async def go() -> str:
        async with open_session(settings) as session:
            await session.ask(DEMO_QUESTION, thread_id="a", mode="no_publish")
            turn = await session.ask("What is the latest verdict for fraud_detector?", thread_id="b")
            return turn.answer

    answer = asyncio.run(go())
    assert "latest published Provenance status (its tag in DataHub): none recorded" in answer, answer
    assert re.search(r"latest run here: BLOCK \(\S+, scale .*; publication not_requested\)", answer), answer
