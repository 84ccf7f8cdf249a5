"""The same rows on both sides: the base and head relations joined on a unique key in the warehouse, counted (rows
only in base are gone, rows only in head are new) and sampled deterministically by a hash of the key, so the
warehouse does the heavy lifting and the same rows are read on every run. The key must be unique on both sides:
a key that is not would pair rows arbitrarily, so it is refused with the count of duplicates."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pandas as pd

from tools.diff.warehouse import DiffWarehouse
from tools.errors import BadRequest

DEFAULT_ROWS = 100_000


class UnpairedKey(BadRequest, ValueError):
    """The key cannot pair the two sides' rows."""


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def relation_sql(relation: str) -> str:
    """`schema.table` (or `db.schema.table`) quoted part by part."""
    return ".".join(ident(part) for part in relation.split("."))


def _key_text(alias: str, key: list[str]) -> str:
    parts = [f"CAST({alias}.{ident(k)} AS TEXT)" for k in key]
    return " || '|' || ".join(parts)


@dataclass(frozen=True)
class RowCounts:
    base_rows: int
    head_rows: int
    both: int
    only_base: int  # rows gone
    only_head: int  # rows new


@dataclass(frozen=True)
class PairedRows:
    counts: RowCounts
    frame: pd.DataFrame  # "base.<column>" and "head.<column>" for each column read, one row per sampled key
    limit: int
    seed: int

    def side(self, side: str, columns: list[str]) -> pd.DataFrame:
        """One side's columns under their own names."""
        return pd.DataFrame({c: self.frame[f"{side}.{c}"].to_numpy() for c in columns})


def _numbers_as_floats(frame: pd.DataFrame) -> pd.DataFrame:
    """NUMERIC columns arrive as Decimal objects (PostgreSQL's driver): the models were fitted on floats."""
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object and values.map(lambda v: v is None or isinstance(v, Decimal)).all():
            if values.notna().any():
                frame[column] = values.astype("float64")
    return frame


def _check_unique(warehouse: DiffWarehouse, relation: str, key: list[str], side: str) -> int:
    names, rows = warehouse.table(
        f"SELECT COUNT(*) AS n, COUNT(DISTINCT {_key_text('t', key)}) AS d FROM {relation_sql(relation)} AS t"
    )
    total, distinct = int(rows[0][0]), int(rows[0][1])
    if total != distinct:
        raise UnpairedKey(
            f"the key ({', '.join(key)}) is not unique on the {side} relation {relation}: {total - distinct} of "
            f"{total} rows repeat a key; pass --key with the columns that identify a row"
        )
    return total


def count_rows(warehouse: DiffWarehouse, base: str, head: str, key: list[str]) -> RowCounts:
    base_rows = _check_unique(warehouse, base, key, "base")
    head_rows = _check_unique(warehouse, head, key, "head")
    on = " AND ".join(f"b.{ident(k)} = h.{ident(k)}" for k in key)
    _, rows = warehouse.table(
        f"SELECT COUNT(*) AS both_sides FROM {relation_sql(base)} AS b INNER JOIN {relation_sql(head)} AS h ON {on}"
    )
    both = int(rows[0][0] or 0)
    return RowCounts(base_rows, head_rows, both, base_rows - both, head_rows - both)


def paired_rows(
    warehouse: DiffWarehouse,
    base: str,
    head: str,
    key: list[str],
    columns: list[str],
    *,
    limit: int = DEFAULT_ROWS,
    seed: int = 0,
) -> PairedRows:
    """Counts of the two sides, and up to `limit` rows present on both, chosen by md5 of the key and the seed."""
    counts = count_rows(warehouse, base, head, key)
    on = " AND ".join(f"b.{ident(k)} = h.{ident(k)}" for k in key)
    wanted = [c for c in dict.fromkeys(columns) if c not in key]
    select = [f"b.{ident(k)} AS {ident('key.' + k)}" for k in key]
    select += [
        f"{alias}.{ident(c)} AS {ident(f'{side}.{c}')}"
        for c in wanted
        for alias, side in (("b", "base"), ("h", "head"))
    ]
    names, rows = warehouse.table(
        f"SELECT {', '.join(select)} FROM {relation_sql(base)} AS b INNER JOIN {relation_sql(head)} AS h ON {on} "
        f"ORDER BY md5({_key_text('b', key)} || '|{int(seed)}') LIMIT {int(limit)}"
    )
    frame = _numbers_as_floats(pd.DataFrame.from_records(rows, columns=names))
    for k in key:  # a key column is the same on both sides by the join
        frame[f"base.{k}"] = frame[f"head.{k}"] = frame[f"key.{k}"]
    return PairedRows(counts=counts, frame=frame, limit=limit, seed=seed)
