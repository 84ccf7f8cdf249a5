"""Provenance's answer for each change of the style world (tests/realworld/dbt_style_world.py), column by column,
scored against the computed truth: what discovery derives for each feature column of the mart is applied to the
unchanged mart and compared with the changed one, row by row."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from tests.realworld.dbt_style_world import KEYS, MART_COLUMNS, Change, StyleWorld, classify, explains, mart_frames
from tools.catalog.conventions import load_conventions
from tools.catalog.datahub import CatalogReader
from tools.catalog.discovery import LineageStep
from tools.catalog.lineage_walk import Discoverer
from tools.catalog.sql_source import not_carried
from tools.experiment.carry import derive_link
from tools.experiment.rerun import Rerunner
from tools.experiment.verify import Verifier
from tools.mutations import Mutation

MUTATION: TypeAdapter[Mutation] = TypeAdapter(Mutation)


@dataclass(frozen=True)
class Answer:
    kind: str  # "mutation", "unchanged" (the SQL proves it), "unreached" (no lineage), "incomplete"
    mutation: dict[str, object] | None = None
    why: str = ""


@dataclass(frozen=True)
class Scored:
    change: str
    column: str
    truth: str
    answer: Answer
    verdict: str  # exact | unchanged | incomplete_derivable | incomplete_right | wrong
    detail: str = ""


Paths = dict[tuple[str, str], list[LineageStep]]


async def _all_paths(world: StyleWorld, changes: list[Change], home: Path) -> dict[str, Paths]:
    """Each change's column paths, read through one catalog session (one MCP server for all)."""
    from tools.catalog.connection import open_catalog
    from tools.settings import ProvenanceSettings

    settings = ProvenanceSettings(provenance_home=home, provenance_lite_db=world.catalog_db)
    async with open_catalog(settings) as catalog:
        out: dict[str, Paths] = {}
        for change in changes:
            discoverer = Discoverer(CatalogReader(catalog.session))
            out[change.id] = await discoverer.column_paths_to(world.table_urn(change.table), change.column)
        return out


def all_paths(world: StyleWorld, changes: list[Change], home: Path) -> dict[str, Paths]:
    return asyncio.run(_all_paths(world, changes, home))


def answers(change: Change, paths: Paths, world: StyleWorld) -> dict[str, Answer]:
    """Per mart column: what Provenance says the column undergoes."""
    try:
        mutation = MUTATION.validate_python(change.mutation())
    except ValidationError as exc:  # e.g. a category_remap of integer ids: a user is told so, nothing runs
        why = f"the operator allowlist refuses the change: {exc.errors()[0]['msg']}"
        return {column: Answer("incomplete", why=why) for column in MART_COLUMNS}
    conventions = load_conventions()
    verifier = Verifier.from_environment()
    rerunner = Rerunner(verifier.warehouse)
    found: dict[str, list[Answer]] = {}
    for (dataset, column), path in paths.items():
        if dataset not in world.mart_urns:
            continue
        # The product's own per-link derivation (tools/experiment/carry.py): read from the SQL, else re-run.
        outcome = derive_link(mutation, path, column, not_carried(path, conventions), verifier, rerunner)
        if outcome.refusal is not None:
            found.setdefault(column, []).append(Answer("incomplete", why=outcome.refusal))
        elif outcome.unchanged or outcome.mutation is None:
            found.setdefault(column, []).append(Answer("unchanged", why=outcome.explanation))
        else:
            found.setdefault(column, []).append(Answer("mutation", outcome.mutation.model_dump(), outcome.explanation))
    out: dict[str, Answer] = {}
    for column, candidates in found.items():
        kinds = {a.kind for a in candidates}
        mutations = {repr(a.mutation) for a in candidates if a.mutation is not None}
        if "incomplete" in kinds:
            out[column] = next(a for a in candidates if a.kind == "incomplete")
        elif len(mutations) > 1 or (mutations and "unchanged" in kinds):
            out[column] = Answer("incomplete", why=f"paths disagree: {sorted(mutations)}")
        else:
            out[column] = candidates[0]
    return out


def score(world: StyleWorld, change: Change, paths: Paths) -> list[Scored]:
    before, after = mart_frames(world, change)
    given = answers(change, paths, world)
    scored: list[Scored] = []
    for column in (c for c in before.columns if c not in KEYS):
        truth = classify(before[column], after[column])
        answer = given.get(column, Answer("unreached"))
        label = truth.op if truth.op != "none" else "none"
        if answer.kind == "mutation":
            assert answer.mutation is not None
            problem = explains(answer.mutation, before[column], after[column])
            verdict = "exact" if problem is None else "wrong"
            scored.append(Scored(change.id, column, label, answer, verdict, problem or ""))
        elif answer.kind in ("unchanged", "unreached"):
            verdict = "unchanged" if truth.op == "none" else "wrong"
            detail = "" if truth.op == "none" else f"truth {truth.op} on {truth.share:.3f} of rows, said {answer.kind}"
            scored.append(Scored(change.id, column, label, answer, verdict, detail))
        else:
            derivable = truth.op not in ("none", "row_dependent")
            verdict = "incomplete_derivable" if derivable else "incomplete_right"
            scored.append(Scored(change.id, column, label, answer, verdict, answer.why))
    return scored


def summary(rows: list[Scored]) -> dict[str, object]:
    by_change: dict[str, list[Scored]] = {}
    for row in rows:
        by_change.setdefault(row.change, []).append(row)
    derivable = [c for c, rs in by_change.items() if all(r.truth != "row_dependent" for r in rs)]
    exact = [c for c in derivable if all(r.verdict in ("exact", "unchanged") for r in by_change[c])]
    return {
        "columns": dict(Counter(r.verdict for r in rows)),
        "changes": len(by_change),
        "derivable_changes": len(derivable),
        "carried_exactly": len(exact),
        "wrong": sorted({r.change for r in rows if r.verdict == "wrong"}),
    }
