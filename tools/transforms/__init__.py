"""Carrying a proposed data change through the SQL that derives downstream columns (docs/design.md §3.2).

`column_expressions` reads one SQL statement (dbt compiled code, a view, CREATE TABLE ... AS, INSERT ... SELECT)
into each output column's expression over base-table columns (expressions.py, resolve.py); `find_upstream` matches
a DataHub dataset column to one of them; `derive` / `compose` tell what mutation the output column undergoes on the
same rows, exactly, or refuse with the expression quoted (derive.py, readers.py and the rule modules affine.py,
evaluate.py, categories.py). The package imports only sqlglot, pydantic, the standard library and tools.mutations.
"""

from tools.transforms.derive import NON_IDENTITY, Derivation, compose, derive
from tools.transforms.expressions import (
    ALL_COLUMNS,
    ColumnExpression,
    SqlColumns,
    SqlUnreadable,
    column_expressions,
    find_upstream,
)

__all__ = [
    "ALL_COLUMNS",
    "NON_IDENTITY",
    "ColumnExpression",
    "Derivation",
    "SqlColumns",
    "SqlUnreadable",
    "column_expressions",
    "compose",
    "derive",
    "find_upstream",
]
