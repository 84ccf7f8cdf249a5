"""DataHub's column edge carried as a copy where Provenance's resolver cannot follow the SQL but sqlglot's own
lineage confirms the column is the upstream one passed through (tools/transforms/passthrough.py).
The note says which reader confirmed it and where Provenance's reader stopped."""

from __future__ import annotations

from tools.catalog.discovery import LineageStep
from tools.catalog.training_runs import dataset_parts
from tools.transforms.passthrough import pass_through


def confirmed_copy(
    previous: LineageStep,
    step: LineageStep,
    readable: list[tuple[str, str]],
    dialect: str | None,
    schema: dict[str, list[str]],
    problems: list[str],
) -> LineageStep | None:
    """The edge carried as a copy when sqlglot's lineage confirms, in SQL the resolver could not follow, that the
    column is the previous one passed through (passthrough.py); its disagreement is added to `problems`."""
    if not problems:
        return None
    table = dataset_parts(previous.dataset_urn)[1]
    stopped = problems[-1]
    for where, sql in readable:
        said = pass_through(sql, dialect, schema, step.column, table, previous.column)
        if said is True:
            note = (
                f"a copy of {previous.column}: DataHub's column edge, confirmed a pass-through by sqlglot's lineage "
                f"of {where} (Provenance's reader stopped: {stopped})"
            )
            return step.model_copy(update={"transform": None, "note": note, "unknown": None})
        if isinstance(said, str):
            problems.append(f"{where}: {said}")
    return None
