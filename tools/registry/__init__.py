"""Model registries that bind models for Provenance: MLflow today (`provenance bind`).

`mlflow_registry` reads and tags registered model versions through MLflow's own client; `binder` works out a
binding (artifact, hash, held-out data, label) and checks one; `catalog_sync` puts the keys into the DataHub
model's custom properties where Provenance can write them at once (the embedded catalog).
"""
