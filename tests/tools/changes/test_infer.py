"""infer-changes end to end below the CLI: a real git repository with two commits of SQL models (a dbt model with
Jinja, plain SQL, a file sqlglot cannot parse, a deleted model), the catalog replaced by an injected resolver."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.tools.changes.repo import GitRepo
from tools.changes.infer import WHOLE_FILE, Inference, analyse, build_change_set
from tools.changes.resolve import Resolution
from tools.changes.schema import ChangeSet, ProposedChange, StructuralChange, UnmappedChange, dump_change_set
from tools.changes.sqlmap import NullShare

TX_URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
FEES_URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.fees,PROD)"
OLD_URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.old_report,PROD)"

DBT_BASE = """{{ config(materialized='table') }}

with src as (
    select * from {{ source('payments', 'transactions') }}
)

select
    transaction_id,
    amount,
    fee_usd,
    case
        when country = 'US' then 'NA'
        when country in ('GB', 'FR') then 'EU'
        else 'OTHER'
    end as region,
    legacy_flag
from src
{% if is_incremental() %}
where ts > (select max(ts) from {{ this }})
{% endif %}
"""

DBT_HEAD = """{{ config(materialized='table') }}

with src as (
    select * from {{ source('payments', 'transactions') }}
)

select
    transaction_id,
    amount * 100 as amount,
    round(fee_usd, 2) as fee_usd,
    case
        when country = 'US' then 'AMER'
        when country in ('GB', 'FR') then 'EU'
        else 'OTHER'
    end as region
from src
{% if is_incremental() %}
where ts > (select max(ts) from {{ this }})
{% endif %}
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.create(tmp_path / "warehouse")
    repo.commit(
        "base",
        {
            "models/marts/transactions.sql": DBT_BASE,
            "sql/fees.sql": "CREATE TABLE payments.public.fees AS\nSELECT id, fee, rate FROM raw.fees",
            "sql/broken.sql": "SELECT id FROM t",
            "sql/old_report.sql": "SELECT id,\n  total\nFROM t",
            "sql/untouched.sql": "SELECT 1 AS one",
        },
    )
    repo.commit(
        "head",
        {
            "models/marts/transactions.sql": DBT_HEAD,
            "sql/fees.sql": "CREATE TABLE payments.public.fees AS\nSELECT id, fee + 1 AS fee, rate FROM raw.fees",
            "sql/broken.sql": "SELECT id,\n  FROM WHERE (",
            "sql/new_model.sql": "SELECT 1 AS n",
        },
        removed=("sql/old_report.sql",),
    )
    return repo


class Catalog:
    """An injected resolver: a fixed name -> (URN, fields) table; records what it was asked."""

    def __init__(self, datasets: dict[str, tuple[str, tuple[str, ...] | None]]) -> None:
        self.datasets = datasets
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, table: str, file: str) -> Resolution:
        self.asked.append((table, file))
        if table not in self.datasets:
            return Resolution(None, reason=f"no dataset named {table!r} in the catalog; pass --dataset NAME=URN")
        urn, fields = self.datasets[table]
        return Resolution(urn, fields)


TX_FIELDS = ("transaction_id", "amount", "fee_usd", "region", "legacy_flag")
CATALOG = {
    "transactions": (TX_URN, TX_FIELDS),
    "payments.public.fees": (FEES_URN, ("id", "fee", "rate")),
    "old_report": (OLD_URN, None),
}


def _infer(repo: GitRepo, catalog: Catalog, share: NullShare | None = None) -> Inference:
    models = analyse(repo.root, "HEAD~1", "HEAD", null_share=share)
    return asyncio.run(build_change_set(models, catalog))


def _change(change_set: ChangeSet, field: str) -> ProposedChange:
    (found,) = [c for c in change_set.changes if c.field == field]
    return found


def test_each_changed_column_becomes_its_operator_with_its_sql_line(repo: GitRepo) -> None:
    found = _infer(repo, Catalog(CATALOG)).change_set
    amount = _change(found, "amount")
    assert (amount.dataset, amount.op, amount.params, amount.confidence) == (TX_URN, "scale", {"factor": 100}, "high")
    assert amount.source is not None and (amount.source.file, amount.source.line) == (
        "models/marts/transactions.sql",
        9,
    )
    fee = _change(found, "fee_usd")
    assert (fee.op, fee.params, fee.source and fee.source.line) == ("round", {"decimals": 2}, 10)
    region = _change(found, "region")
    assert (region.op, region.params) == ("category_remap", {"mapping": {"NA": "AMER"}})
    assert region.source is not None and region.source.line == 11  # where the CASE starts
    shifted = _change(found, "fee")
    assert (shifted.dataset, shifted.op, shifted.params) == (FEES_URN, "shift", {"offset": 1})


def test_a_dropped_column_and_a_deleted_model_are_structural(repo: GitRepo) -> None:
    found = _infer(repo, Catalog(CATALOG)).change_set
    by_field = {(s.dataset, s.field): s for s in found.structural}
    assert set(by_field) == {(TX_URN, "legacy_flag"), (OLD_URN, "id"), (OLD_URN, "total")}
    legacy = by_field[(TX_URN, "legacy_flag")]
    assert legacy.change == "dropped" and legacy.source is not None and legacy.source.line == 16
    assert "base version" in legacy.note
    assert "deleted" in by_field[(OLD_URN, "total")].note


def test_an_unparseable_file_is_named_with_the_error_not_a_crash(repo: GitRepo) -> None:
    found = _infer(repo, Catalog(CATALOG)).change_set
    (broken,) = [u for u in found.unmapped if u.file == "sql/broken.sql"]
    assert broken.column == WHOLE_FILE and broken.line == 2
    assert "cannot parse the head version of sql/broken.sql" in broken.reason and "review by hand" in broken.reason


def test_only_models_with_findings_are_resolved_and_new_or_untouched_ones_are_not(repo: GitRepo) -> None:
    catalog = Catalog(CATALOG)
    inference = _infer(repo, catalog)
    asked = {table for table, _ in catalog.asked}
    assert asked == {"transactions", "payments.public.fees", "broken", "old_report"}  # CREATE TABLE's name for fees
    statuses = {model.file: model.status for model in inference.files}
    assert statuses["sql/new_model.sql"] == "added" and "sql/untouched.sql" not in statuses
    assert inference.unresolved == {"broken": "no dataset named 'broken' in the catalog; pass --dataset NAME=URN"}


def test_an_unknown_dataset_keeps_every_finding_as_unmapped_with_the_fix(repo: GitRepo) -> None:
    found = _infer(repo, Catalog({})).change_set
    assert found.changes == [] and found.structural == []
    tx = [u for u in found.unmapped if u.file == "models/marts/transactions.sql"]
    assert [u.column for u in tx] == ["amount", "fee_usd", "region", "legacy_flag"]
    assert all(u.dataset is None and "--dataset NAME=URN" in u.reason for u in tx)
    assert 'proposed scale {"factor": 100} on amount' in tx[0].reason


def test_a_column_the_catalog_does_not_know_is_for_review(repo: GitRepo) -> None:
    found = _infer(repo, Catalog({**CATALOG, "transactions": (TX_URN, ("transaction_id", "amount"))})).change_set
    (region,) = [u for u in found.unmapped if u.column == "region"]
    assert region.dataset == TX_URN and "has no field 'region'" in region.reason


def test_coalesce_fractions_come_from_the_null_share(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path / "r")
    repo.commit("base", {"m.sql": "SELECT COALESCE(score, 0) AS score, segment FROM t"})
    repo.commit("head", {"m.sql": "SELECT score, COALESCE(segment, 'none') AS segment FROM t"})
    found = _infer(repo, Catalog({"m": (TX_URN, None)}), NullShare(0.3, "the stated --null-share")).change_set
    assert [(c.field, c.op, c.params, c.fraction, c.confidence) for c in found.changes] == [
        ("score", "null_inject", {}, 0.3, "low"),
        ("segment", "constant", {"value": "none"}, 0.3, "medium"),
    ]


def test_the_written_file_round_trips_through_the_schema(repo: GitRepo, tmp_path: Path) -> None:
    from tools.changes.schema import load_change_set

    found = _infer(repo, Catalog(CATALOG)).change_set
    path = tmp_path / "CHANGES.yml"
    path.write_text(dump_change_set(found), encoding="utf-8")
    loaded = load_change_set(path)
    assert loaded == found
    assert all(isinstance(e, StructuralChange) for e in loaded.structural)
    assert all(isinstance(e, UnmappedChange) for e in loaded.unmapped)


def test_a_model_building_another_table_drops_the_old_ones_columns(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path / "r")
    repo.commit("base", {"m.sql": "CREATE VIEW reporting.daily AS SELECT day, total FROM t"})
    repo.commit("head", {"m.sql": "CREATE VIEW reporting.daily_v2 AS SELECT day, total FROM t", "new.sql": "SELEC ("})
    catalog = Catalog({"reporting.daily": (OLD_URN, None)})
    found = _infer(repo, catalog).change_set
    assert [(s.field, s.change) for s in found.structural] == [("day", "dropped"), ("total", "dropped")]
    assert "now builds reporting.daily_v2 instead of reporting.daily" in found.structural[0].note
    assert found.unmapped == []  # a new file, even unparseable, changes no column anything reads yet
    assert catalog.asked == [("reporting.daily", "m.sql")]
