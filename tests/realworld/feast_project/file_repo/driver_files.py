"""A feature view over a parquet file (tests/realworld/feast_world.py writes it and runs ``feast apply``)."""

import sys
from datetime import timedelta
from pathlib import Path

from feast import Entity, FeatureService, FeatureView, Field, FileSource, ValueType
from feast.types import Float64, Int32, Int64

# Canary: every import of this file appends a line to data/imports.log (see postgres_repo/driver_features.py).
_data = Path(__file__).resolve().parent / "data"
_data.mkdir(exist_ok=True)
with open(_data / "imports.log", "a") as _log:
    _log.write(" ".join(sys.argv) + "\n")

driver = Entity(name="driver", join_keys=["driver_id"], value_type=ValueType.INT64, description="A driver")

driver_hourly_stats_file = FileSource(
    name="driver_hourly_stats_file",
    path="data/driver_hourly_stats.parquet",
    timestamp_field="event_timestamp",
    created_timestamp_column="created",
)

driver_hourly_stats = FeatureView(
    name="driver_hourly_stats",
    entities=[driver],
    ttl=timedelta(days=1),
    schema=[
        Field(name="driver_id", dtype=Int64),
        Field(name="conv_rate", dtype=Float64),
        Field(name="acc_rate", dtype=Float64),
        Field(name="avg_daily_trips", dtype=Int32),
    ],
    online=False,
    source=driver_hourly_stats_file,
)

driver_activity_file = FeatureService(name="driver_activity_file", features=[driver_hourly_stats])
