"""A third dbt world, written the way dbt Labs' style guide and jaffle-shop write projects, by a separate
reader who never saw Provenance's code: ``dbt_style_project/`` (import CTEs ending ``select * from renamed``, a
dispatched ``cents_to_dollars`` macro, an ephemeral model, a ``customers.*`` join, a ``union all`` of two regional
tables, a mart of chained CTEs ending ``select * from final``, window features), its raw data
(``dbt_style_data.py``) and 20 data changes (``dbt_style_project/changes.yaml``).

Built with real tools only: PostgreSQL, the dbt CLI (``dbt build``, ``dbt docs generate``) and DataHub's own
``postgres`` and ``dbt`` sources through a REST sink into ``provenance catalog serve`` (which keeps the dbt source's
patches).

**The truth is computed, not reasoned** (:func:`truth`): a change is applied to the raw table inside a transaction,
the mart's SQL as dbt compiled it (``target/manifest.json``) is run again over the views dbt built (staging and
intermediate models are views, ephemeral models are inlined in the compiled SQL: exactly what ``dbt run`` would
rebuild), the transaction is rolled back, and each feature column is compared row by row with the unchanged mart and
classified (:func:`classify`).
"""

from __future__ import annotations

import json
import math
import shutil
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import yaml

from tests.realworld.dbt_style_data import RAW_DDL, raw_frames
from tests.realworld.dbt_world import (
    _dbt_source,
    _postgres_source,
    catalog_serve,
    dbt_executable,
    run_dbt,
    run_recipe,
)

if TYPE_CHECKING:
    from tests.postgres import Cluster

HERE = Path(__file__).resolve().parent
PROJECT_SOURCE = HERE / "dbt_style_project"
DATABASE = "style_wh"
SCHEMA = "analytics"
MART = "order_features"
KEY = "order_id"
KEYS = ("order_id", "customer_id", "ordered_at")
MART_COLUMNS = (
    "region", "order_total_usd", "discount_rate", "has_discount", "order_size_bucket", "units", "avg_unit_price_usd",
    "gross_margin_rate", "paid_with_gift_card", "order_day_of_week", "is_weekend", "customer_order_number",
    "days_since_previous_order", "customer_tenure_days", "loyalty_tier",
)  # fmt: skip
"""The mart's feature columns (what models read): every column but its keys."""
PROFILE = "style"
PRIMARY_KEYS = {"customers": "id", "products": "sku", "orders_eu": "id", "orders_us": "id"} | {
    "order_items": "id",
    "payments": "id",
}


@dataclass(frozen=True)
class Change:
    id: str
    says: str
    table: str
    column: str
    op: str
    params: dict[str, Any]
    fraction: float

    def mutation(self, seed: int = 7) -> dict[str, Any]:
        return {"op": self.op, **self.params, "fraction": self.fraction, "seed": seed}


@dataclass(frozen=True)
class Truth:
    """What one feature column underwent: `op` none (identity), scale, shift, sign_flip, constant, null_inject,
    category_remap, or row_dependent; `params`; `share` of the mart's rows that changed."""

    op: str
    params: dict[str, Any] = field(default_factory=dict)
    share: float = 0.0


@dataclass
class StyleWorld:
    dir: Path
    postgres_url: str
    home: Path
    manifest_path: Path
    seconds: dict[str, float]

    @property
    def catalog_db(self) -> Path:
        return self.home / "catalog.db"

    def table_urn(self, table: str) -> str:
        return f"urn:li:dataset:(urn:li:dataPlatform:postgres,{DATABASE}.{table},PROD)"

    @property
    def mart_urns(self) -> tuple[str, str]:
        name = f"{DATABASE}.{SCHEMA}.{MART}"
        return (
            f"urn:li:dataset:(urn:li:dataPlatform:postgres,{name},PROD)",
            f"urn:li:dataset:(urn:li:dataPlatform:dbt,{name},PROD)",
        )

    def compiled_mart(self) -> str:
        manifest = json.loads(self.manifest_path.read_text())
        return str(manifest["nodes"][f"model.style_shop.{MART}"]["compiled_code"])


def changes() -> list[Change]:
    return [Change(**entry) for entry in yaml.safe_load((PROJECT_SOURCE / "changes.yaml").read_text())]


def _load_raw(url: str) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute(RAW_DDL.encode())
        for table, frame in raw_frames().items():
            name = table if "." in table else f"raw.{table}"
            columns = ", ".join(frame.columns)
            with conn.cursor() as cur, cur.copy(f"COPY {name} ({columns}) FROM STDIN".encode()) as copy:
                for row in frame.itertuples(index=False):
                    copy.write_row([None if _missing(v) else _plain(v) for v in row])
        conn.execute(b"ANALYZE")


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value))


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value


def _profiles(profiles_dir: Path, url: str) -> None:
    from urllib.parse import urlparse

    parsed = urlparse(url)
    output = {
        "type": "postgres",
        "host": parsed.hostname,
        "port": parsed.port,
        "user": parsed.username,
        "password": parsed.password or "",
        "dbname": parsed.path.lstrip("/"),
        "schema": SCHEMA,
        "threads": 1,
    }
    profiles_dir.mkdir(parents=True, exist_ok=True)
    profile = {PROFILE: {"target": "test", "outputs": {"test": output}}}
    (profiles_dir / "profiles.yml").write_text(json.dumps(profile, indent=2) + "\n")


def build_style_world(world_dir: Path, cluster: Cluster) -> StyleWorld:
    import psycopg

    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    world_dir = world_dir.resolve()
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)'.encode())
        conn.execute(f'CREATE DATABASE "{DATABASE}"'.encode())
    url = cluster.url(DATABASE)
    _load_raw(url)
    project = world_dir / "project"
    shutil.copytree(
        PROJECT_SOURCE, project, ignore=shutil.ignore_patterns("target", "logs", "code_changes", "dbt_packages")
    )
    _profiles(world_dir / "profiles", url)
    seconds["warehouse"] = round(time.perf_counter() - clock, 2)
    run_dbt(dbt_executable(), project, world_dir / "profiles", ("build",), ("docs", "generate"))
    seconds["dbt"] = round(time.perf_counter() - clock - sum(seconds.values()), 2)
    home = world_dir / "home"
    target = project / "target"
    with catalog_serve(home) as served:
        sink = {"type": "datahub-rest", "config": {"server": served.ready(), "token": served.token}}
        for source in (_postgres_source(url), _dbt_source(target / "manifest.json", target / "catalog.json")):
            report = run_recipe({"source": source, "sink": sink})
            assert not (report.source_failures or report.sink_failures or report.error), report
    seconds["ingestion"] = round(time.perf_counter() - clock - sum(seconds.values()), 2)
    return StyleWorld(world_dir, url, home, target / "manifest.json", seconds)


# ---------------------------------------------------------------------------------------------------- the truth
def _update(change: Change) -> tuple[str, list[Any]]:
    """The UPDATE that applies the change to the raw table (its rows picked by primary key when fraction < 1)."""
    column = change.column
    params: list[Any] = []
    if change.op == "scale":
        value, params = f"{column} * %s", [change.params["factor"]]
    elif change.op == "shift":
        value, params = f"{column} + %s", [change.params["offset"]]
    elif change.op == "sign_flip":
        value = f"-{column}"
    elif change.op == "null_inject":
        value = "NULL"
    elif change.op == "constant":
        value, params = "%s", [change.params["value"]]
    elif change.op == "category_remap":
        cases = " ".join("WHEN %s THEN %s" for _ in change.params["mapping"])
        value = f"CASE {column} {cases} ELSE {column} END"
        params = [v for pair in change.params["mapping"].items() for v in pair]
    else:
        raise ValueError(f"no UPDATE for {change.op}")
    return f"UPDATE {change.table} SET {column} = {value}", params


def _rows(conn: Any, change: Change) -> list[Any] | None:
    if change.fraction >= 1.0:
        return None
    key = PRIMARY_KEYS[change.table.split(".")[-1]]
    keys = [r[0] for r in conn.execute(f"SELECT {key} FROM {change.table} ORDER BY {key}".encode()).fetchall()]
    rng = np.random.default_rng(zlib.crc32(change.id.encode()))
    picked = rng.choice(len(keys), size=round(change.fraction * len(keys)), replace=False)
    return [keys[i] for i in sorted(picked)]


def mart_frames(world: StyleWorld, change: Change) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The mart as dbt builds it, before and after the change (rolled back), indexed by its key."""
    import psycopg

    sql = world.compiled_mart()
    with psycopg.connect(world.postgres_url) as conn:
        before = _frame(conn, sql)
        statement, params = _update(change)
        rows = _rows(conn, change)
        if rows is not None:
            key = PRIMARY_KEYS[change.table.split(".")[-1]]
            statement += f" WHERE {key} = ANY(%s)"
            params = [*params, rows]
        conn.execute(statement.encode(), params)
        after = _frame(conn, sql)
        conn.rollback()
    return before, after


def _frame(conn: Any, sql: str) -> pd.DataFrame:
    cursor = conn.execute(sql.encode())
    names = [d.name for d in cursor.description]
    return pd.DataFrame(cursor.fetchall(), columns=names).set_index(KEY).sort_index()


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool | str):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _null(value: Any) -> bool:
    return value is None or (not isinstance(value, str | bool) and bool(pd.isna(value)))


def _equal(x: Any, y: Any) -> bool:
    if _null(x) or _null(y):
        return _null(x) and _null(y)
    nx, ny = _number(x), _number(y)
    if nx is not None and ny is not None and not isinstance(x, bool) and not isinstance(y, bool):
        return math.isclose(nx, ny, rel_tol=1e-6, abs_tol=1e-9)
    return bool(x == y)


def classify(before: pd.Series, after: pd.Series) -> Truth:
    """What the column underwent, row by row: the simplest operator that maps every changed row's old value to its
    new one (`row_dependent` when none does); `share` is the share of rows that changed."""
    if not before.index.equals(after.index):
        return Truth("row_dependent", {"why": "rows appeared or disappeared"}, 1.0)
    pairs = list(zip(before, after, strict=True))
    changed = [(x, y) for x, y in pairs if not _equal(x, y)]
    if not changed:
        return Truth("none")
    share = len(changed) / len(pairs)
    old, new = [x for x, _ in changed], [y for _, y in changed]
    if all(_null(v) for v in new):
        return Truth("null_inject", {}, share)
    if any(_null(v) for v in new):
        return Truth("row_dependent", {"why": "some changed rows became NULL"}, share)
    numeric = all(_number(v) is not None and not isinstance(v, bool) for v in old + new)
    if numeric:
        xs = np.array([_number(v) for v in old], dtype=float)
        ys = np.array([_number(v) for v in new], dtype=float)
        if np.allclose(ys, -xs, rtol=1e-9, atol=1e-12):
            return Truth("sign_flip", {}, share)
        if (np.abs(xs) > 1e-12).all() and np.allclose(ys / xs, (ys / xs)[0], rtol=1e-4, atol=0):
            return Truth("scale", {"factor": float(np.median(ys / xs))}, share)
        if np.allclose(ys - xs, (ys - xs)[0], rtol=1e-4, atol=1e-9):
            return Truth("shift", {"offset": float(np.median(ys - xs))}, share)
    if len({repr(v) for v in new}) == 1:
        return Truth("constant", {"value": new[0]}, share)
    if numeric:
        return Truth("row_dependent", {}, share)
    mapping: dict[str, str] = {}
    for x, y in changed:
        if mapping.setdefault(str(x), str(y)) != str(y):
            return Truth("row_dependent", {"why": f"{x} became several values"}, share)
    kept = {str(x) for x, y in pairs if _equal(x, y) and not _null(x)}
    if kept & set(mapping):
        return Truth("row_dependent", {"why": "a value changed on some rows only"}, share)
    return Truth("category_remap", {"mapping": mapping}, share)


def _applied(mutation: dict[str, Any], value: Any) -> Any:
    """One row's value under the operator, as the experiment applies it (None: NULL)."""
    op = mutation["op"]
    if _null(value):
        return None if op not in ("constant", "unseen_category") else mutation["value"]
    if op == "null_inject":
        return None
    if op in ("constant", "unseen_category"):
        return mutation["value"]
    if op == "category_remap":
        return mutation["mapping"].get(str(value), value)
    number = _number(value)
    if number is None:
        raise ValueError(f"{op} of a non-number {value!r}")
    if op == "scale":
        return number * mutation["factor"]
    if op == "shift":
        return number + mutation["offset"]
    if op == "sign_flip":
        return -number
    raise ValueError(f"no row rule for {op}")


def explains(mutation: dict[str, Any], before: pd.Series, after: pd.Series) -> str | None:
    """None when the mutation, applied to the unchanged column, gives the changed column: every changed row equals
    the operator applied to its old value, and the share of the rows the operator would alter that did change is
    the mutation's fraction (within 0.02); else what differs."""
    pairs = list(zip(before, after, strict=True))
    try:
        would = [not _equal(x, _applied(mutation, x)) for x, _ in pairs]
        wrong = [(x, y) for (x, y) in pairs if not _equal(x, y) and not _equal(_applied(mutation, x), y)]
    except (ValueError, TypeError) as exc:
        return str(exc)
    if wrong:
        x, y = wrong[0]
        return f"{len(wrong)} changed rows differ from the operator's value (e.g. {x!r} -> {y!r})"
    alterable = sum(would)
    changed = sum(1 for x, y in pairs if not _equal(x, y))
    if alterable == 0:
        return None if changed == 0 else "rows changed that the operator leaves alone"
    share = changed / alterable
    if abs(share - float(mutation["fraction"])) > 0.02:
        return f"the change reached {share:.3f} of the rows the operator alters, not {mutation['fraction']}"
    return None


def truth(world: StyleWorld, change: Change) -> dict[str, Truth]:
    before, after = mart_frames(world, change)
    return {column: classify(before[column], after[column]) for column in before.columns if column not in KEYS}
