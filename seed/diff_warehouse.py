"""The demo's warehouse for `provenance diff`, in one DuckDB file: `public.transactions` as production builds it
today (the demo's transactions with both models' labels) and `pr_fx.transactions` as a pull request would build it.
The pull request is one no mutation operator expresses: an FX step that converts non-US amounts to minor units
(×100) — but only for card-present merchant categories — and a new filter that drops night-time transactions."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from seed.data import DEFAULT_ROWS, DEFAULT_SEED, generate_transactions, to_feature_frame
from seed.review import REVIEW_LABEL, review_minutes

HEAD_SCHEMA = "pr_fx"
PULL_REQUEST_SQL = """
SELECT * REPLACE (
    CASE WHEN country <> 'US' AND merchant_category IN ('grocery', 'restaurants', 'fuel')
         THEN round(amount * 100, 2) ELSE amount END AS amount
)
FROM public.transactions
WHERE hour >= 2
"""


def demo_transactions(rows: int = DEFAULT_ROWS) -> pd.DataFrame:
    """The demo's transactions (the first `rows` of the same generator) with both models' labels."""
    frame = generate_transactions(rows, DEFAULT_SEED)
    frame[REVIEW_LABEL] = review_minutes(to_feature_frame(frame), DEFAULT_SEED)
    return frame


def build_demo_warehouse(folder: Path, rows: int = DEFAULT_ROWS) -> Path:
    """Write (or rewrite) `warehouse.duckdb` in `folder`; the same bytes of data on every run."""
    import duckdb

    frame = demo_transactions(rows)
    path = folder / "warehouse.duckdb"
    folder.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with duckdb.connect(str(path)) as connection:
        connection.register("frame", frame)
        connection.execute("CREATE SCHEMA public")
        connection.execute("CREATE TABLE public.transactions AS SELECT * FROM frame")
        connection.execute(f"CREATE SCHEMA {HEAD_SCHEMA}")
        connection.execute(f"CREATE TABLE {HEAD_SCHEMA}.transactions AS {PULL_REQUEST_SQL}")
    return path
