"""`provenance seed`: train the demo models and emit the demo catalog through the DataHub REST emitter.

The same emitter path fills the embedded catalog (started here when needed) or a real DataHub
(PROVENANCE_CATALOG=datahub + DATAHUB_GMS_URL), so the demo exercises the production write path.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from datahub.emitter.rest_emitter import DatahubRestEmitter
from pydantic import BaseModel

from seed.binding import ModelBinding
from seed.catalog import demo_catalog_mcps
from seed.model import DemoArtifacts, ModelArtifact, train_demo_models
from tools.embedded.server import start_embedded_catalog
from tools.settings import ProvenanceSettings


class SeedResult(BaseModel):
    catalog: str
    artifacts: DemoArtifacts
    mcps: int
    seconds: float


def _binding(
    artifact: ModelArtifact, eval_data: Path, base: Path | None, label: str, task: str | None = None
) -> ModelBinding:
    def where(path: Path) -> str:
        # Relative to the catalog file's folder when the catalog is a local file (docs/design.md §4), so the
        # folder can be moved or shared as a whole.
        return os.path.relpath(path, base) if base is not None else str(path.resolve())

    return ModelBinding(
        artifact_uri=where(artifact.artifact_path),
        artifact_sha256=artifact.artifact_sha256,
        eval_data_uri=where(eval_data),
        label_column=label,
        task=task,
    )


def seed_demo(settings: ProvenanceSettings) -> SeedResult:
    started = time.perf_counter()
    artifacts = train_demo_models(settings.home / "demo")
    embedded = settings.provenance_catalog == "embedded"
    base = settings.lite_db.parent if embedded else None
    fraud_eval, review_eval = artifacts.eval_data_path, artifacts.review_eval_path
    mcps = demo_catalog_mcps(
        fraud_detector=_binding(artifacts.fraud_detector, fraud_eval, base, artifacts.label_column),
        merchant_risk=_binding(artifacts.merchant_risk, fraud_eval, base, artifacts.label_column),
        # The binding names the task, as a team would for a model whose task should never be guessed.
        review_time=_binding(artifacts.review_time, review_eval, base, artifacts.review_label_column, "regression"),
    )
    if embedded:
        running = start_embedded_catalog(settings.lite_db)
        url, token, where = running.url, running.token, f"embedded catalog {settings.lite_db}"
    else:
        if not settings.datahub_gms_url:
            raise ValueError("PROVENANCE_CATALOG=datahub needs DATAHUB_GMS_URL")
        running, url, token = None, settings.datahub_gms_url, settings.datahub_gms_token or ""
        where = f"DataHub at {url}"
    try:
        emitter = DatahubRestEmitter(url, token=token, openapi_ingestion=False)
        emitter.test_connection()
        emitter.emit_mcps(mcps)
        emitter.close()
    finally:
        if running is not None:
            running.stop()
    return SeedResult(catalog=where, artifacts=artifacts, mcps=len(mcps), seconds=time.perf_counter() - started)
