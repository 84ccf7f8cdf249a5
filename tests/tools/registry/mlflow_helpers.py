"""Registering more model versions in a real-world copy's MLflow store, through MLflow's client only (no fluent
API, so no process-wide MLflow state changes)."""

from __future__ import annotations

import os
import pathlib
import tempfile
from pathlib import Path
from typing import Any

import joblib
import pandas as pd

from tests.realworld.world import RealWorld, mlflow_client
from tests.warm_start import cleared


class LeavesMarker:
    """Unpickling this object creates `path`: the proof that a file was unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def register(
    world: RealWorld,
    name: str,
    model: Any,
    *,
    inputs: tuple[tuple[str, str, Path], ...] = (),
    as_mlflow_model: bool = True,
    flavour: str = "sklearn",
) -> str:
    """Log `model` on a new run of the world's experiment (as an MLflow model of `flavour`: sklearn, xgboost or
    lightgbm; or as a bare joblib file), log `inputs` (context, dataset name, CSV path) and register it as `name`;
    returns the version."""
    import mlflow.data
    import mlflow.lightgbm
    import mlflow.sklearn
    import mlflow.xgboost
    from mlflow.entities import DatasetInput, InputTag

    client = mlflow_client(world)
    experiment = client.get_experiment_by_name(world.experiment_name)
    run = client.create_run(experiment.experiment_id, run_name=f"train-{name}")
    run_id = run.info.run_id
    if inputs:
        datasets = []
        for context, dataset_name, csv in inputs:
            entity = mlflow.data.from_pandas(pd.read_csv(csv), source=str(csv), name=dataset_name)._to_mlflow_entity()
            datasets.append(DatasetInput(dataset=entity, tags=[InputTag(key="mlflow.data.context", value=context)]))
        client.log_inputs(run_id, datasets=datasets)
    with tempfile.TemporaryDirectory() as scratch:
        if as_mlflow_model:
            local = Path(scratch) / "model"
            saver = {"sklearn": mlflow.sklearn, "xgboost": mlflow.xgboost, "lightgbm": mlflow.lightgbm}[flavour]
            saver.save_model(model, str(local), pip_requirements=[])
            client.log_artifacts(run_id, str(local), "model")
            source = f"{run.info.artifact_uri}/model"
        else:
            local = Path(scratch) / "model.joblib"
            joblib.dump(model, local)
            client.log_artifact(run_id, str(local))
            source = f"{run.info.artifact_uri}/model.joblib"
    client.set_terminated(run_id)
    client.create_registered_model(name)
    return str(client.create_model_version(name, source, run_id=run_id).version)


def version_tags(world: RealWorld, name: str, version: str) -> dict[str, str]:
    return dict(mlflow_client(world).get_model_version(name, version).tags)


def bind_env(world: RealWorld, home: Path, catalog: str = "embedded") -> dict[str, str]:
    """The environment `provenance` runs with against the world."""
    env = {k: v for k, v in os.environ.items() if not cleared(k, ("PROVENANCE_", "DATAHUB_GMS", "MLFLOW_"))}
    return env | {
        "MLFLOW_TRACKING_URI": world.mlflow_uri,
        "PROVENANCE_HOME": str(home),
        "PROVENANCE_LITE_DB": str(world.catalog_db),
        "PROVENANCE_CATALOG": catalog,
    }
