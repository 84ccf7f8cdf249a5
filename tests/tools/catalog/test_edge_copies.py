"""DataHub's column edge carried as a copy only where sqlglot's lineage confirms a pass-through
(tools/catalog/edge_copies.py); a computed column stays unknown, quoting both readers."""

from __future__ import annotations

from tools.catalog.conventions import load_conventions
from tools.catalog.discovery import LineageStep
from tools.catalog.edge_copies import confirmed_copy
from tools.catalog.sql_source import carries_as_is, not_carried

SQL = "with s as (select * exclude (b) from raw.t) select a, c + 1 as d from s"
SOURCE = "urn:li:dataset:(urn:li:dataPlatform:duckdb,shop.raw.t,PROD)"
VIEW = "urn:li:dataset:(urn:li:dataPlatform:duckdb,shop.analytics.v,PROD)"


def test_a_confirmed_pass_through_is_carried_as_a_copy_saying_who_confirmed_it() -> None:
    previous, step = LineageStep(dataset_urn=SOURCE, column="a"), LineageStep(dataset_urn=VIEW, column="a")
    problems = ["viewProperties.viewLogic of v: column a: column a comes from SELECT * with EXCEPT/REPLACE/RENAME"]
    copied = confirmed_copy(previous, step, [("viewLogic of v", SQL)], "duckdb", {"raw.t": ["a", "b", "c"]}, problems)
    assert copied is not None and carries_as_is(copied, load_conventions())
    assert "confirmed a pass-through by sqlglot's lineage" in (copied.note or "") and "EXCEPT" in (copied.note or "")
    assert not_carried([previous, copied], load_conventions()) == []


def test_a_computed_column_stays_unknown_quoting_what_sqlglot_reads() -> None:
    previous, step = LineageStep(dataset_urn=SOURCE, column="c"), LineageStep(dataset_urn=VIEW, column="d")
    problems = ["column d: column c comes from SELECT * with EXCEPT/REPLACE/RENAME"]
    assert (
        confirmed_copy(previous, step, [("viewLogic of v", SQL)], "duckdb", {"raw.t": ["a", "b", "c"]}, problems)
        is None
    )
    assert problems[-1] == "viewLogic of v: sqlglot's lineage reads d as s.c + 1 AS d"
