"""The warehouse `provenance diff` reads, by URL: any SQLAlchemy URL (PostgreSQL tested with a real server; other
dialects through their SQLAlchemy drivers, untested), or `duckdb:///path/file.duckdb`, opened read-only with DuckDB's
own client (the zero-setup case: no server, no driver beyond duckdb). Every statement is one SELECT Provenance
built, checked before it runs; PostgreSQL runs it in a READ ONLY transaction (tools/catalog/branch_counts.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from tools.catalog.branch_counts import ReadOnlyWarehouse, WarehouseError, single_select
from tools.errors import BadRequest

_DIALECTS = {"postgresql": "postgres", "postgres": "postgres", "duckdb": "duckdb", "redshift": "redshift"}


class WarehouseUrlError(BadRequest, ValueError):
    """A warehouse URL Provenance cannot read from."""


def dialect_of(url: str) -> str:
    """The sqlglot dialect of a SQLAlchemy URL's scheme (`postgresql+psycopg://…` → postgres)."""
    scheme = urlparse(url).scheme.split("+", 1)[0].lower()
    if not scheme:
        raise WarehouseUrlError(
            f"{url!r} is not a warehouse URL; use a SQLAlchemy URL such as postgresql://reader@host/db, or "
            "duckdb:///path/to/file.duckdb"
        )
    return _DIALECTS.get(scheme, scheme)


@dataclass
class DiffWarehouse:
    """Read-only SELECTs on the warehouse `url` names."""

    url: str
    dialect: str = ""
    _sqlalchemy: ReadOnlyWarehouse | None = None
    _duckdb: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.dialect = dialect_of(self.url)
        if self.dialect == "duckdb":
            path = Path(urlparse(self.url).path)
            if not path.is_file():
                raise WarehouseUrlError(f"{self.url}: no DuckDB file at {path}; build the project into it first")
            self._path = path
        else:
            self._sqlalchemy = ReadOnlyWarehouse(self.url)

    def table(self, statement: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The statement's column names and rows."""
        if self._sqlalchemy is not None:
            return self._sqlalchemy.table(statement, self.dialect)
        sql = single_select(statement, self.dialect)
        import duckdb

        try:
            if self._duckdb is None:
                # No files beyond the database: a relation name such as "x.csv" must not become a file read.
                config: dict[str, str | bool | int | float | list[str]] = {"enable_external_access": False}
                self._duckdb = duckdb.connect(str(self._path), read_only=True, config=config)
            cursor = self._duckdb.execute(sql)
            names = [d[0] for d in cursor.description]
            return names, [tuple(row) for row in cursor.fetchall()]
        except duckdb.Error as exc:
            raise WarehouseError(f"the DuckDB warehouse refused a read: {str(exc).splitlines()[0]}") from exc

    def columns(self, relation: str) -> list[str]:
        """The relation's column names (an error naming it when it does not exist)."""
        return self.table(f"SELECT * FROM {relation} LIMIT 0")[0]

    def close(self) -> None:
        if self._duckdb is not None:
            self._duckdb.close()
            self._duckdb = None
