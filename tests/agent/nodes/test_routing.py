"""The route node checks the offline router's subject against the catalog: a word of the sentence the
catalog does not name never stands for a field; the one word it does name is taken instead, and the change is read
with that subject. Against the seeded demo catalog (a real DataHub Lite file)."""

from __future__ import annotations

import asyncio

import pytest

from agent.nodes.routing import known_subject
from agent.planning.router import route
from agent.schemas import Intent, RouteDecision
from tools.catalog.handle import CatalogHandle
from tools.catalog.resolve import knows_name
from tools.settings import ProvenanceSettings


def _checked(settings: ProvenanceSettings, question: str) -> RouteDecision:
    async def run() -> RouteDecision:
        async with CatalogHandle(settings) as handle:
            return await known_subject(await handle.reader(), question, route(question))

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("question", "guessed", "subject"),
    [
        ("heads up: amount is gonna land in cents instead of dollars from next week", "land", "amount"),
        ("fx bug multiplies amount by 1.1 on every fifth row. ok to ship?", "fifth", "amount"),
        ("null out country on weekends", "weekends", "country"),
    ],
)
def test_a_word_the_catalog_does_not_name_gives_way_to_the_one_it_does(
    settings: ProvenanceSettings, question: str, guessed: str, subject: str
) -> None:
    assert route(question).subject == guessed  # the sentence's shape alone reads the wrong word
    checked = _checked(settings, question)
    assert checked.intent is Intent.ASSESS and checked.subject == subject


def test_the_guess_stays_when_no_word_or_several_are_names(settings: ProvenanceSettings) -> None:
    # "weekends" names nothing and neither does any other word: resolving it then asks the person
    assert (
        _checked(settings, "null out the thing on weekends").subject == route("null out the thing on weekends").subject
    )
    # amount and country are both fields: the router's own reading decides, the plan then refuses the second field
    both = "amount doubled for country rows on weekends"
    assert _checked(settings, both).subject == route(both).subject


def test_names_are_known_exactly(settings: ProvenanceSettings) -> None:
    async def run() -> list[bool]:
        async with CatalogHandle(settings) as handle:
            reader = await handle.reader()
            words = ["amount", "AMOUNT", "transactions", "fraud_detector", "amount_usd", "land", "amounts"]
            known = [await knows_name(reader, w) for w in words]
            return [*known, await knows_name(reader, "fraud_detector", fields_only=True)]

    assert asyncio.run(run()) == [True, True, True, True, False, False, False, False]
