"""Feature definitions over the PostgreSQL tables of tests/realworld/feast_world.py (``feast apply`` reads them)."""

import sys
from datetime import timedelta
from pathlib import Path

from feast import Entity, FeatureService, FeatureView, Field, ValueType
from feast.infra.offline_stores.contrib.postgres_offline_store.postgres_source import PostgreSQLSource
from feast.types import Float64, Int32, Int64

# Canary: every import of this file appends a line to data/imports.log. `feast apply` imports it; feast_world clears
# the log after applying, so a line there later means a tool executed the repository's code.
_data = Path(__file__).resolve().parent / "data"
_data.mkdir(exist_ok=True)
with open(_data / "imports.log", "a") as _log:
    _log.write(" ".join(sys.argv) + "\n")

driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64, description="A driver")

driver_hourly_stats_source = PostgreSQLSource(
    name="driver_hourly_stats_source",
    table="public.driver_hourly_stats",
    timestamp_field="event_timestamp",
    created_timestamp_column="created",
)

driver_profile_source = PostgreSQLSource(
    name="driver_profile_source",
    table="public.driver_profile",
    timestamp_field="event_timestamp",
    created_timestamp_column="created",
)

# A query-backed source: the SQL, not a table, is what the registry records. Not part of the feature service.
driver_trips_source = PostgreSQLSource(
    name="driver_trips_source",
    query="SELECT driver_id, event_timestamp, created, avg_daily_trips * 7 AS weekly_trips "
    "FROM public.driver_hourly_stats",
    timestamp_field="event_timestamp",
    created_timestamp_column="created",
)

driver_hourly_stats = FeatureView(
    name="driver_hourly_stats",
    entities=[driver],
    ttl=timedelta(days=1),
    schema=[
        Field(name="driver_id", dtype=Int64),
        Field(name="conv_rate", dtype=Float64, tags={"description": "Share of offers the driver converted"}),
        Field(name="acc_rate", dtype=Float64, tags={"description": "Share of offers the driver accepted"}),
        Field(name="avg_daily_trips", dtype=Int32),
    ],
    online=False,
    source=driver_hourly_stats_source,
)

driver_profile = FeatureView(
    name="driver_profile",
    entities=[driver],
    ttl=timedelta(days=2),
    schema=[
        Field(name="driver_id", dtype=Int64),
        Field(name="years_active", dtype=Int32),
        Field(name="rating", dtype=Float64),
    ],
    online=False,
    source=driver_profile_source,
)

driver_trips = FeatureView(
    name="driver_trips",
    entities=[driver],
    ttl=timedelta(days=2),
    schema=[Field(name="driver_id", dtype=Int64), Field(name="weekly_trips", dtype=Int32)],
    online=False,
    source=driver_trips_source,
)

driver_activity_v1 = FeatureService(
    name="driver_activity_v1",
    features=[
        driver_hourly_stats[["conv_rate", "acc_rate", "avg_daily_trips"]],
        driver_profile[["years_active", "rating"]],
    ],
    description="The features of the driver_churn models",
)
