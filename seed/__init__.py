"""Reproducible demo data, demo models and the demo catalog."""

import os

# acryl-datahub pings its telemetry service on import unless told not to; we run offline.
os.environ.setdefault("DATAHUB_TELEMETRY_ENABLED", "false")
