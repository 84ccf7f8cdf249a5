"""Row counts of a `UNION ALL`'s branches, from the warehouse, so a change to one branch is carried with that branch's
share of the rows (tools/transforms/unions.py).

`PROVENANCE_WAREHOUSE_URL` (a SQLAlchemy URL, e.g. `postgresql://reader@host/db`) names the warehouse. Only
statements Provenance built itself run there: `[WITH …] SELECT count(*) FROM (<one branch>)`, re-rendered by
sqlglot from the catalog's SQL and checked to be a single SELECT; on PostgreSQL inside a READ ONLY transaction
with a statement timeout, and always rolled back. Unset, nothing runs and a change to one branch is INCOMPLETE
saying to set it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from tools.errors import ServiceFailure

WAREHOUSE_ENV = "PROVENANCE_WAREHOUSE_URL"
TIMEOUT_SECONDS = 30

log = logging.getLogger(__name__)


class WarehouseError(ServiceFailure):
    """The warehouse could not answer; the message says which statement and why."""

    service = "the warehouse (PROVENANCE_WAREHOUSE_URL)"


def warehouse_from_environment() -> ReadOnlyWarehouse | None:
    """The warehouse `PROVENANCE_WAREHOUSE_URL` names, one per URL for the process (its engine pools connections);
    None when unset."""
    url = os.environ.get(WAREHOUSE_ENV, "").strip()
    return _warehouse(url) if url else None


def relation_name(qualified: str, dialect: str | None) -> str:
    """The name to read a dataset by on the warehouse connection: PostgreSQL (and Redshift) read one database per
    connection and refuse `db.schema.table` for any other, so the database part of a catalog name is dropped."""
    parts = qualified.split(".")
    return ".".join(parts[1:]) if dialect in ("postgres", "redshift") and len(parts) == 3 else qualified


def single_select(statement: str, dialect: str | None) -> str:
    """The statement in the dialect, once checked to be one SELECT that neither defines nor changes anything;
    WarehouseError otherwise (nothing is run)."""
    try:
        parsed = sqlglot.parse(statement, read=dialect)
    except (ParseError, TokenError) as exc:
        raise WarehouseError(f"a statement Provenance built is not SQL it can check: {exc}") from exc
    if len(parsed) != 1 or not isinstance(parsed[0], exp.Select) or parsed[0].find(exp.DDL, exp.DML):
        raise WarehouseError("a statement is not a single SELECT; not run")
    return parsed[0].sql(dialect=dialect)


@lru_cache(maxsize=4)
def _warehouse(url: str) -> ReadOnlyWarehouse:
    return ReadOnlyWarehouse(url)


class ReadOnlyWarehouse:
    """Runs single SELECTs Provenance built, read-only (PostgreSQL: a READ ONLY transaction with a statement
    timeout), always rolled back."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine: Any = None

    def rows(self, statement: str, dialect: str | None) -> list[tuple[Any, ...]]:
        return self.table(statement, dialect)[1]

    def table(self, statement: str, dialect: str | None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The statement's column names and rows."""
        checked = single_select(statement, dialect)
        from sqlalchemy import create_engine
        from sqlalchemy.exc import SQLAlchemyError

        try:
            if self._engine is None:
                self._engine = create_engine(self.url)
            with self._engine.connect() as conn:
                if conn.dialect.name == "postgresql":
                    conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {TIMEOUT_SECONDS * 1000}")
                    # Our statements read whole datasets through CTEs PostgreSQL has no statistics for; it joined
                    # them by nested loops (a dbt mart of 3,000 rows re-run in 4.9 s, 9 million rows filtered per
                    # join; quadratic, so the 200,000 rows a re-run may read would meet the timeout). Hash and merge
                    # joins read each side once: 0.02 s.
                    conn.exec_driver_sql("SET LOCAL enable_nestloop = off")
                result = conn.exec_driver_sql(checked)
                names, found = list(result.keys()), [tuple(row) for row in result.fetchall()]
                conn.rollback()
        except SQLAlchemyError as exc:
            raise WarehouseError(f"{WAREHOUSE_ENV}: the warehouse refused a read: {str(exc).splitlines()[0]}") from exc
        return names, found


@dataclass
class BranchCounter:
    warehouse: ReadOnlyWarehouse
    problems: list[str] = field(default_factory=list)
    _counts: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_environment(cls) -> BranchCounter | None:
        warehouse = warehouse_from_environment()
        return cls(warehouse) if warehouse is not None else None

    def counts(self, statements: list[str], dialect: str | None) -> dict[str, float]:
        for statement in dict.fromkeys(statements):
            if statement in self._counts:
                continue
            try:
                rows = self.warehouse.rows(statement, dialect)
                self._counts[statement] = float((rows[0][0] if rows else 0) or 0)
            except WarehouseError as exc:
                self.problems.append(str(exc))
        return {s: self._counts[s] for s in statements if s in self._counts}

    def filled(self, relation: str, column: str, dialect: str | None) -> tuple[int, int] | None:
        """(rows, rows where `column` is not NULL) of a table or view; None when the warehouse could not say (the
        reason is in `problems`)."""
        try:
            table = exp.to_table(relation_name(relation, dialect), dialect=dialect)
        except (ParseError, TokenError) as exc:
            self.problems.append(f"{relation} is not a table name the warehouse can read: {exc}")
            return None
        counted = exp.Count(this=exp.column(column, quoted=True))
        statement = exp.select(exp.Count(this=exp.Star()), counted).from_(table).sql(dialect=dialect)
        try:
            rows = self.warehouse.rows(statement, dialect)
        except WarehouseError as exc:
            self.problems.append(str(exc))
            return None
        total, filled = rows[0] if rows else (0, 0)
        return int(total or 0), int(filled or 0)
