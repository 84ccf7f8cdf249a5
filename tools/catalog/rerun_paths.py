"""Each path's last step gets the plan that re-runs its dataset in the warehouse with the change applied
(rerun_plan.py), when a warehouse is configured: one plan per downstream dataset, built from the SQL of every
dataset the paths to it go through. Without a warehouse nothing is read (no catalog call is added)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tools.catalog.discovery import LineageStep
from tools.catalog.rerun_plan import Unplannable, plan_rerun
from tools.catalog.siblings import DBT_PLATFORM
from tools.catalog.training_runs import dataset_parts

if TYPE_CHECKING:
    from tools.catalog.sql_source import SqlSource

Key = tuple[str, str]


def _sql(views: dict[str, dict[str, Any]], urns: list[str]) -> str | None:
    """dbt's compiled SQL first (formattedViewLogic), then a view's text; never dbt's raw Jinja."""
    for key in ("formattedViewLogic", "viewLogic"):
        for urn in urns:
            text = (views.get(urn) or {}).get(key)
            if text and not (key == "viewLogic" and dataset_parts(urn)[0] == DBT_PLATFORM):
                return str(text)
    return None


async def with_rerun_plans(paths: dict[Key, list[LineageStep]], source: SqlSource) -> dict[Key, list[LineageStep]]:
    """`paths` whose last steps carry a `rerun` plan where one can be built; the problems are kept in
    `source.rerun_problems` by dataset."""
    if source.counter is None or not paths:
        return paths
    first = next(iter(paths.values()))[0]
    by_target: dict[str, set[str]] = {}
    for (target, _), steps in paths.items():
        by_target.setdefault(target, set()).update(s.dataset_urn for s in steps)
    everything = sorted({u for urns in by_target.values() for u in urns})
    with_siblings = sorted({u for urn in everything for u in [urn, *(s.urn for s in source.siblings.get(urn, []))]})
    views = await source.views_of(with_siblings)
    await source.schemas.for_datasets(everything)
    columns = next(
        (cols for name, cols in source.schemas.schema.items() if name.lower() == dataset_parts(first.dataset_urn)[1]),
        [],
    )

    def sql_of(urn: str) -> tuple[str, str | None] | None:
        text = _sql(views, [urn, *(s.urn for s in source.siblings.get(urn, []))])
        return (text, source.dialect(urn)) if text is not None else None

    plans = {}
    for target, between in by_target.items():
        if target == first.dataset_urn or dataset_parts(target)[1] == dataset_parts(first.dataset_urn)[1]:
            continue
        try:
            key = await source.schemas.own_keys(target)
            plans[target] = plan_rerun(target, first.dataset_urn, columns, sorted(between), sql_of, key)
        except Unplannable as exc:
            source.rerun_problems[target] = str(exc)
    out = {key: list(steps) for key, steps in paths.items()}
    for (target, _), steps in out.items():
        if target in plans:
            steps[-1] = steps[-1].model_copy(update={"rerun": plans[target]})
    return out
