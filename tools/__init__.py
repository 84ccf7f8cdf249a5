"""Provenance's tools: catalog access, the embedded DataHub, the experiment and the evidence."""

import os

# acryl-datahub pings its telemetry service on import unless told not to; we run offline.
os.environ.setdefault("DATAHUB_TELEMETRY_ENABLED", "false")
