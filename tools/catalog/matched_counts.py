"""A LEFT JOIN's matched share, counted: a column read from the right side of a LEFT JOIN is NULL on the rows that
found no match, whatever the change, so a change that is not NULL-preserving (a constant, …) reaches only the
matched rows (joins.py, derive.py). With a warehouse configured, that share is counted: when the joined side's
column holds no NULL, an output row has the column exactly when its join found a match, so the share of the
dataset's rows where the column is not NULL is the matched share.

Only a step whose expression is the joined column itself is read this way (`COALESCE(c.x, 0)` is never NULL, so
its count proves nothing); the counts are of today's data, as a union's branch counts are (branch_counts.py).
"""

from __future__ import annotations

from collections.abc import Callable

import sqlglot

from tools.catalog.branch_counts import BranchCounter
from tools.catalog.discovery import LineageStep
from tools.transforms.nodes import is_source, peel

Key = tuple[str, str]


def _bare_column(step: LineageStep) -> bool:
    assert step.expression is not None and step.expression_input is not None
    parsed = sqlglot.parse_one(step.expression, read=step.dialect)
    return is_source(peel(parsed, "any"), step.expression_input)


def _share(
    counter: BranchCounter, before: LineageStep, step: LineageStep, relation_of: Callable[[str], str | None]
) -> tuple[float, str] | None:
    joined, output = relation_of(before.dataset_urn), relation_of(step.dataset_urn)
    if joined is None or output is None:
        return None
    side = counter.filled(joined, before.column, before.dialect or step.dialect)
    if side is None or side[0] != side[1]:
        return None  # the joined side has NULLs of its own: a NULL in the output does not mean "unmatched"
    counted = counter.filled(output, step.column, step.dialect)
    if counted is None or counted[0] == 0:
        return None
    share = counted[1] / counted[0]
    said = (
        f" (matched share {share:.4f}: {counted[1]:,} of the {counted[0]:,} rows of {output} have {step.column}, "
        f"which no row of {joined} leaves NULL, by the warehouse's count)"
    )
    return share, said


def with_matched_counts(
    paths: dict[Key, list[LineageStep]], counter: BranchCounter | None, relation_of: Callable[[str], str | None]
) -> dict[Key, list[LineageStep]]:
    """`paths` where each step through a LEFT JOIN's matched side carries the matched share the warehouse counts
    (`matched_share`, quoted in `expression_from`); unchanged where nothing can be counted."""
    if counter is None:
        return paths
    out = {key: list(steps) for key, steps in paths.items()}
    for steps in out.values():
        for i, step in enumerate(steps):
            if i == 0 or step.expression is None or not any(kind == "matched" for kind, _ in step.row_notes):
                continue
            if not _bare_column(step):
                continue
            found = _share(counter, steps[i - 1], step, relation_of)
            if found is not None:
                share, said = found
                steps[i] = step.model_copy(
                    update={"matched_share": share, "expression_from": (step.expression_from or "") + said}
                )
    return out
