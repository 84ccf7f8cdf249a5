"""Raw tables for the ``dbt_style_project`` shop, as an EL tool would land them.

``RAW_DDL`` creates the ``raw`` schema; ``raw_frames(seed)`` returns one
deterministic DataFrame per raw table (column order matches the DDL).

Shape of the data:
* customers: 400 accounts (EU + US); about 30 of them never ordered.
* orders_eu: 1800 orders (EUR), orders_us: 1200 orders (USD); order ids come
  from one platform-wide sequence, so they are unique across both regions.
* ~4% of orders are guest checkouts: ``customer_id`` is NULL. Every non-NULL
  ``customer_id`` exists in raw.customers.
* order_items: 1-6 lines per order. About 1% of lines reference a SKU of a
  discontinued product that was deleted from raw.products (on purpose).
* payments: one or two successful payments per order (gift card splits), plus
  some failed attempts and a few still-pending payments.
Columns without a NOT NULL need are left nullable, like Fivetran/Airbyte do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

_ORDER_COLUMNS = """(
    id bigint primary key, customer_id integer, ordered_at timestamp, status text,
    currency_code text, channel text, subtotal_cents integer, shipping_cents integer,
    discount_cents integer
)"""

RAW_DDL: str = f"""
create schema raw;
create table raw.customers (
    id integer primary key, first_name text, last_name text, email text, country_code text,
    loyalty_tier text, marketing_opt_in boolean, created_at timestamp
);
create table raw.products (
    sku text primary key, product_name text, category text, price_cents integer,
    cost_cents integer, is_active boolean
);
create table raw.orders_eu {_ORDER_COLUMNS};
create table raw.orders_us {_ORDER_COLUMNS};
create table raw.order_items (
    id bigint primary key, order_id bigint, sku text, quantity integer, unit_price_cents integer
);
create table raw.payments (
    id bigint primary key, order_id bigint, payment_method text, status text,
    amount_cents integer, created_at timestamp
);
"""

N_CUSTOMERS_EU: int = 240
N_CUSTOMERS_US: int = 160
N_ORDERS_EU: int = 1800
N_ORDERS_US: int = 1200
N_PRODUCTS: int = 60
FIRST_NAMES = [
    "Ana",
    "Ben",
    "Chloe",
    "David",
    "Emma",
    "Felix",
    "Grace",
    "Hugo",
    "Ines",
    "Jonas",
    "Kira",
    "Liam",
    "Mia",
    "Noah",
    "Olga",
    "Paul",
    "Rosa",
    "Sam",
    "Tara",
    "Yuki",
]
LAST_NAMES = [
    "Smith",
    "Muller",
    "Garcia",
    "Rossi",
    "Dubois",
    "Jansen",
    "Kowalski",
    "Brown",
    "Lee",
    "Novak",
    "Silva",
    "Berg",
    "Khan",
    "Moreau",
    "Weber",
]
CATEGORIES = ["apparel", "footwear", "accessories", "home", "beauty"]
START = pd.Timestamp("2024-01-01")


def _customers(rng: np.random.Generator) -> pd.DataFrame:
    n = N_CUSTOMERS_EU + N_CUSTOMERS_US
    ids = np.arange(1, n + 1)
    first = rng.choice(FIRST_NAMES, n)
    last = rng.choice(LAST_NAMES, n)
    eu_countries = rng.choice(["DE", "FR", "GB", "NL", "ES", "IT"], N_CUSTOMERS_EU)
    us_countries = rng.choice(["US", "CA"], N_CUSTOMERS_US, p=[0.9, 0.1])
    tier = rng.choice(np.array(["bronze", "silver", "gold", None], dtype=object), n, p=[0.25, 0.15, 0.08, 0.52])
    opt_in = pd.array(rng.choice([True, False], n), dtype="boolean")
    opt_in[rng.random(n) < 0.1] = pd.NA
    return pd.DataFrame(
        {
            "id": ids,
            "first_name": first,
            "last_name": last,
            "email": [f"{f.lower()}.{s.lower()}{i}@example.com" for f, s, i in zip(first, last, ids, strict=False)],
            "country_code": np.concatenate([eu_countries, us_countries]),
            "loyalty_tier": tier,
            "marketing_opt_in": opt_in,
            "created_at": pd.NaT,  # filled in once orders exist
        }
    )


def _products(rng: np.random.Generator) -> pd.DataFrame:
    price = (rng.lognormal(mean=7.8, sigma=0.6, size=N_PRODUCTS) // 100 * 100 + 99).astype(int)
    cost = pd.array(np.round(price * rng.uniform(0.35, 0.7, N_PRODUCTS)).astype(int), dtype="Int64")
    cost[rng.random(N_PRODUCTS) < 0.05] = pd.NA  # cost not yet entered by merchandising
    category = rng.choice(CATEGORIES, N_PRODUCTS)
    return pd.DataFrame(
        {
            "sku": [f"SKU-{i:04d}" for i in range(1, N_PRODUCTS + 1)],
            "product_name": [f"{c.title()} item {i}" for i, c in enumerate(category, start=1)],
            "category": category,
            "price_cents": price,
            "cost_cents": cost,
            "is_active": rng.random(N_PRODUCTS) > 0.1,
        }
    )


def _orders(
    rng: np.random.Generator,
    n: int,
    customer_ids: np.ndarray,
    currency: str,
    free_shipping_over: int,
    shipping_fee: int,
) -> pd.DataFrame:
    customer = pd.array(rng.choice(customer_ids, n), dtype="Int64")
    customer[rng.random(n) < 0.04] = pd.NA  # guest checkout
    seconds = rng.integers(0, 366 * 86400, n)
    discount_pct = rng.choice([0.05, 0.10, 0.15, 0.20], n)
    return pd.DataFrame(
        {
            "customer_id": customer,
            "ordered_at": START + pd.to_timedelta(seconds, unit="s"),
            "status": rng.choice(["completed", "shipped", "returned", "cancelled"], n, p=[0.85, 0.08, 0.04, 0.03]),
            "currency_code": currency,
            "channel": rng.choice(["web", "app", "marketplace"], n, p=[0.6, 0.3, 0.1]),
            "_has_discount": rng.random(n) < 0.3,
            "_discount_pct": discount_pct,
            "_free_over": free_shipping_over,
            "_fee": shipping_fee,
        }
    )


def raw_frames(seed: int = 7) -> dict[str, pd.DataFrame]:
    """Generate every raw table; same seed, same data."""
    rng = np.random.default_rng(seed)
    customers = _customers(rng)
    products = _products(rng)
    eu_ids = customers["id"].to_numpy()[: N_CUSTOMERS_EU - 15]  # last 15 per region never order
    us_ids = customers["id"].to_numpy()[N_CUSTOMERS_EU:-15]
    eu = _orders(rng, N_ORDERS_EU, eu_ids, "EUR", 6000, 599)
    us = _orders(rng, N_ORDERS_US, us_ids, "USD", 5000, 499)
    orders = pd.concat([eu.assign(_region="eu"), us.assign(_region="us")], ignore_index=True)
    orders = orders.sort_values("ordered_at", kind="stable").reset_index(drop=True)
    orders.insert(0, "id", np.arange(100001, 100001 + len(orders)))

    # order lines; ~1% point at SKUs of deleted (discontinued) products
    lines_per_order = np.minimum(1 + rng.poisson(1.2, len(orders)), 6)
    item_order = np.repeat(orders["id"].to_numpy(), lines_per_order)
    n_items = len(item_order)
    pick = rng.integers(0, N_PRODUCTS, n_items)
    sku = products["sku"].to_numpy()[pick].astype(object)
    list_price = products["price_cents"].to_numpy()[pick].astype(float)
    gone = rng.random(n_items) < 0.01
    sku[gone] = [f"SKU-9{i:03d}" for i in rng.integers(0, 40, gone.sum())]
    list_price[gone] = rng.integers(10, 80, gone.sum()) * 100 + 99
    markdown = rng.choice([1.0, 0.9, 0.8], n_items, p=[0.7, 0.2, 0.1])
    items = pd.DataFrame(
        {
            "id": np.arange(1, n_items + 1),
            "order_id": item_order,
            "sku": sku,
            "quantity": 1 + rng.poisson(0.5, n_items),
            "unit_price_cents": np.round(list_price * markdown).astype(int),
        }
    )

    subtotal = (items["quantity"] * items["unit_price_cents"]).groupby(items["order_id"]).sum()
    orders["subtotal_cents"] = orders["id"].map(subtotal).astype(int)
    orders["shipping_cents"] = np.where(orders["subtotal_cents"] >= orders["_free_over"], 0, orders["_fee"])
    discount = np.round(orders["subtotal_cents"] * orders["_discount_pct"]).astype("Int64")
    orders["discount_cents"] = discount.where(orders["_has_discount"], pd.NA)  # NULL = no promo

    # signup happens before a customer's first order
    first_order = orders.groupby("customer_id")["ordered_at"].min()
    lead = pd.to_timedelta(rng.integers(1, 400 * 86400, len(customers)), unit="s")
    fallback = pd.Series(START + pd.to_timedelta(rng.integers(0, 366 * 86400, len(customers)), unit="s"))
    customers["created_at"] = (customers["id"].map(first_order).fillna(fallback) - lead).dt.floor("s")

    # payments: optional failed attempt, gift card split, a few pending
    totals = (
        (orders["subtotal_cents"] + orders["shipping_cents"] - orders["discount_cents"].fillna(0))
        .astype(int)
        .to_numpy()
    )
    rows: list[tuple[int, str, str, int, pd.Timestamp]] = []
    methods = ["credit_card", "paypal", "bank_transfer", "gift_card"]
    for oid, total, at in zip(orders["id"], totals, orders["ordered_at"], strict=False):
        final_status = "pending" if rng.random() < 0.02 else "success"
        method = str(rng.choice(methods, p=[0.6, 0.25, 0.1, 0.05]))
        if rng.random() < 0.04:
            rows.append((oid, method, "failed", total, at + pd.Timedelta(minutes=1)))
        if method != "gift_card" and rng.random() < 0.12:
            gift = int(min(total, rng.choice([1000, 2500, 5000])))
            rows.append((oid, "gift_card", final_status, gift, at + pd.Timedelta(minutes=2)))
            total -= gift
            if total == 0:
                continue
        rows.append((oid, method, final_status, total, at + pd.Timedelta(minutes=3)))
    payments = pd.DataFrame(rows, columns=["order_id", "payment_method", "status", "amount_cents", "created_at"])
    payments.insert(0, "id", np.arange(1, len(payments) + 1))

    order_cols = [
        "id",
        "customer_id",
        "ordered_at",
        "status",
        "currency_code",
        "channel",
        "subtotal_cents",
        "shipping_cents",
        "discount_cents",
    ]
    return {
        "raw.customers": customers,
        "raw.products": products,
        "raw.orders_eu": orders.loc[orders["_region"] == "eu", order_cols].reset_index(drop=True),
        "raw.orders_us": orders.loc[orders["_region"] == "us", order_cols].reset_index(drop=True),
        "raw.order_items": items,
        "raw.payments": payments,
    }
