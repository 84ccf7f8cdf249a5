"""A second reader for the columns Provenance's own resolver cannot follow: where DataHub records a
column edge and the resolver stops (a `* EXCLUDE`, a NATURAL JOIN, a LATERAL…), sqlglot's own lineage is asked
whether the output column is that upstream column passed through unchanged — every step a bare column or a
rename, one source. Confirmed, the edge is carried as a copy, saying which reader confirmed it; computed, the step
stays unknown quoting what sqlglot reads (the two readers disagree with the edge's silence: never a guess).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlglot.lineage
from sqlglot import exp
from sqlglot.errors import SqlglotError

from tools.transforms.nodes import names_match, unparen


def _nested(schema: Mapping[str, list[str]]) -> dict[str, Any]:
    """{"db.schema.table": [columns]} as sqlglot's nested mapping (the types are not needed here)."""
    out: dict[str, Any] = {}
    for name, columns in schema.items():
        *prefix, table = name.lower().split(".")
        level = out
        for part in prefix:
            level = level.setdefault(part, {})
        level[table] = {c.lower(): "text" for c in columns}
    depths = {len(name.split(".")) for name in schema}
    return out if len(depths) <= 1 else {}  # sqlglot needs one depth for every table


def _same_table(table: exp.Table, name: str) -> bool:
    written = ".".join(part.name for part in table.parts)
    return names_match(written, name) or names_match(name, written)


def pass_through(
    sql: str, dialect: str | None, schema: Mapping[str, list[str]], output: str, table: str, column: str
) -> bool | str | None:
    """True when `output` is `table.column` passed through unchanged; a sentence saying what sqlglot reads instead
    when it is computed; None when sqlglot cannot read it either."""
    try:
        root = sqlglot.lineage.lineage(output.lower(), sql, schema=_nested(schema) or None, dialect=dialect)
    except (SqlglotError, ValueError, KeyError, AttributeError):  # what sqlglot's lineage raises on SQL it cannot read
        return None
    leaves = [node for node in root.walk() if not node.downstream]
    inner = [node for node in root.walk() if node.downstream]
    computed = [
        node.expression.sql(dialect=dialect)
        for node in inner
        if not isinstance(unparen(node.expression.this if isinstance(node.expression, exp.Alias) else node.expression),
                          exp.Column)
    ]  # fmt: skip
    sources = [leaf for leaf in leaves if isinstance(leaf.expression, exp.Table)]
    if computed:
        return f"sqlglot's lineage reads {output} as {computed[0]}"
    if len(sources) != 1 or len(leaves) != 1:
        return f"sqlglot's lineage finds {output} read from {len(sources)} sources"
    leaf = sources[0]
    name = leaf.name.rsplit(".", 1)[-1].lower()
    assert isinstance(leaf.expression, exp.Table)
    if not _same_table(leaf.expression, table) or name != column.lower():
        return f"sqlglot's lineage reads {output} from {leaf.name}, not {table}.{column}"
    return True
