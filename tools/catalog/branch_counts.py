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


@dataclass
class BranchCounter:
    url: str
    problems: list[str] = field(default_factory=list)
    _counts: dict[str, float] = field(default_factory=dict)
    _engine: Any = None

    @classmethod
    def from_environment(cls) -> BranchCounter | None:
        url = os.environ.get(WAREHOUSE_ENV, "").strip()
        return cls(url) if url else None

    def counts(self, statements: list[str], dialect: str | None) -> dict[str, float]:
        for statement in dict.fromkeys(statements):
            if statement in self._counts:
                continue
            try:
                self._counts[statement] = self._count(statement, dialect)
            except WarehouseError as exc:
                self.problems.append(str(exc))
        return {s: self._counts[s] for s in statements if s in self._counts}

    def _count(self, statement: str, dialect: str | None) -> float:
        try:
            parsed = sqlglot.parse(statement, read=dialect)
        except (ParseError, TokenError) as exc:
            raise WarehouseError(f"a branch count is not SQL Provenance can check: {exc}") from exc
        if len(parsed) != 1 or not isinstance(parsed[0], exp.Select) or parsed[0].find(exp.DDL, exp.DML):
            raise WarehouseError("a branch count is not a single SELECT; not run")
        from sqlalchemy import create_engine, text
        from sqlalchemy.exc import SQLAlchemyError

        try:
            if self._engine is None:
                self._engine = create_engine(self.url)
            with self._engine.connect() as conn:
                if conn.dialect.name == "postgresql":
                    conn.execute(text("SET TRANSACTION READ ONLY"))
                    conn.execute(text(f"SET LOCAL statement_timeout = {TIMEOUT_SECONDS * 1000}"))
                value = conn.exec_driver_sql(parsed[0].sql(dialect=dialect)).scalar()
                conn.rollback()
        except SQLAlchemyError as exc:
            raise WarehouseError(
                f"{WAREHOUSE_ENV}: counting a UNION ALL branch failed: {str(exc).splitlines()[0]}"
            ) from exc
        return float(value or 0)
