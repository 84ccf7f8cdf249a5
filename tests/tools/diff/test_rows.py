"""Pairing the two sides in the warehouse (a real DuckDB file): counts of rows gone and new computed here from the
frames, the sample stable under a seed and a subset of the paired keys, a repeated key refused with its count, and
only single SELECTs run."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from tools.catalog.branch_counts import WarehouseError
from tools.diff.rows import UnpairedKey, paired_rows
from tools.diff.warehouse import DiffWarehouse, WarehouseUrlError, dialect_of


@pytest.fixture
def warehouse(tmp_path: Path) -> DiffWarehouse:
    rng = np.random.default_rng(5)
    base = pd.DataFrame({"id": np.arange(2_000), "x": rng.normal(100, 20, 2_000).round(2),
                         "cat": rng.choice(["a", "b", "c"], 2_000)})  # fmt: skip
    head = base[base["id"] % 17 != 3].copy()
    head.loc[head["id"] % 5 == 0, "x"] *= 100
    new = pd.DataFrame({"id": np.arange(2_000, 2_040), "x": 1.0, "cat": "a"})
    head = pd.concat([head, new])
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as c:
        c.register("base_frame", base)
        c.register("head_frame", head)
        c.execute("CREATE SCHEMA prod; CREATE SCHEMA pr")
        c.execute("CREATE TABLE prod.t AS SELECT * FROM base_frame; CREATE TABLE pr.t AS SELECT * FROM head_frame")
        c.execute("CREATE TABLE prod.dup AS SELECT * FROM base_frame UNION ALL SELECT * FROM base_frame LIMIT 2010")
    return DiffWarehouse(f"duckdb:///{path}")


def test_counts_match_the_frames(warehouse: DiffWarehouse) -> None:
    rows = paired_rows(warehouse, "prod.t", "pr.t", ["id"], ["x", "cat"], limit=10_000)
    gone = sum(1 for i in range(2_000) if i % 17 == 3)
    c = rows.counts
    assert (c.base_rows, c.head_rows, c.only_base, c.only_head) == (2_000, 2_000 - gone + 40, gone, 40)
    assert len(rows.frame) == c.both == 2_000 - gone
    changed = rows.frame["base.x"] != rows.frame["head.x"]
    assert changed.sum() == (rows.frame["key.id"] % 5 == 0).sum() - (rows.frame["base.x"] == 0).sum()


def test_the_sample_is_stable_and_a_subset(warehouse: DiffWarehouse) -> None:
    first = paired_rows(warehouse, "prod.t", "pr.t", ["id"], ["x"], limit=300, seed=7)
    again = paired_rows(warehouse, "prod.t", "pr.t", ["id"], ["x"], limit=300, seed=7)
    other = paired_rows(warehouse, "prod.t", "pr.t", ["id"], ["x"], limit=300, seed=8)
    assert len(first.frame) == 300 and first.frame.equals(again.frame)
    assert set(first.frame["key.id"]) != set(other.frame["key.id"])
    assert set(first.frame["key.id"]) <= {i for i in range(2_000) if i % 17 != 3}


def test_a_repeated_key_is_refused_with_its_count(warehouse: DiffWarehouse) -> None:
    with pytest.raises(UnpairedKey, match="10 of 2010 rows repeat a key; pass --key"):
        paired_rows(warehouse, "prod.dup", "pr.t", ["id"], ["x"])


def test_only_a_single_select_runs(warehouse: DiffWarehouse) -> None:
    with pytest.raises(WarehouseError, match="not a single SELECT"):
        warehouse.table("DROP TABLE prod.t")
    assert warehouse.columns('"prod"."t"') == ["id", "x", "cat"]


def test_urls_name_their_dialect_and_a_missing_file_says_so(tmp_path: Path) -> None:
    assert dialect_of("postgresql+psycopg://u@h/db") == "postgres"
    assert dialect_of("duckdb:///x.duckdb") == "duckdb"
    with pytest.raises(WarehouseUrlError, match="not a warehouse URL"):
        dialect_of("analytics")
    with pytest.raises(WarehouseUrlError, match="no DuckDB file"):
        DiffWarehouse(f"duckdb:///{tmp_path}/missing.duckdb")


def test_a_relation_named_like_a_file_reads_no_file(warehouse: DiffWarehouse, tmp_path: Path) -> None:
    """DuckDB reads `FROM 'x.csv'` as a file; a diff's relations come from its caller, so external access is off."""
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    for relation in (f"'{secret}'", f'"{secret}"', f"read_csv('{secret}')"):
        with pytest.raises(WarehouseError):
            warehouse.table(f"SELECT * FROM {relation}")
