"""A test world written by DataHub's real ingestion sources, never by hand-made aspects.

One directory holds everything:

- ``warehouse.db``: a SQLite warehouse with a raw table ``loan_applications`` and a feature table
  ``applicant_features`` filled by one ``INSERT … SELECT`` (plain column copies plus a computed ``debt_to_income``);
- ``catalog.db``: a DataHub Lite file (the embedded catalog's store) filled by three of DataHub's own sources:
  ``sqlalchemy`` over the warehouse, ``sql-queries`` over ``queries.jsonl`` (column lineage parsed by sqlglot; the
  source needs a DataHub API, so our embedded endpoint serves the same Lite file while it runs) and ``mlflow``;
- ``mlflow.db`` + ``mlruns/``: a real MLflow tracking store and model registry with two scikit-learn pipelines
  trained on ``applicant_features``: ``credit_default`` (stage Production, alias ``champion``) and
  ``credit_default_challenger`` (stage Staging);
- ``train.csv`` / ``holdout.csv``: the 70/30 split the models were trained and are evaluated on.

``python -m tests.realworld.world DIR`` builds it standalone, for looking at it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import chdir, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("DATAHUB_TELEMETRY_ENABLED", "false")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

PLATFORM = "sqlite"
ENV = "PROD"
SCHEMA = "main"  # a SQLite file has the one schema "main"; the sqlalchemy source names tables main.<table>
RAW_TABLE = "loan_applications"
FEATURE_TABLE = "applicant_features"
LABEL_COLUMN = "defaulted"
EXPERIMENT = "credit_risk"
TRAIN_DATASET_NAME = f"{SCHEMA}.{FEATURE_TABLE}"
HOLDOUT_DATASET_NAME = "applicant_features_holdout"
CHAMPION = "credit_default"
CHALLENGER = "credit_default_challenger"
CHAMPION_FEATURES = ("income", "loan_amount", "employment_years", "region")
CHALLENGER_FEATURES = ("income", "loan_amount", "debt_to_income", "employment_years", "region")
SEED = 7
ROWS = 6000

FEATURE_SQL = (
    f"INSERT INTO {FEATURE_TABLE} SELECT applicant_id, income, loan_amount, debt / income AS debt_to_income, "
    f"employment_years, region, defaulted FROM {RAW_TABLE}"
)
# Fixed so the parsed query (and its URN) is the same in every build.
FEATURE_SQL_TIMESTAMP = "2025-01-15T06:00:00Z"


def dataset_urn(platform: str, name: str) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:{platform},{name},{ENV})"


def model_urn(name: str, version: str) -> str:
    """The URN the mlflow source gives a registered model version: ``<name>_<version>``."""
    return f"urn:li:mlModel:(urn:li:dataPlatform:mlflow,{name}_{version},{ENV})"


def model_group_urn(name: str) -> str:
    return f"urn:li:mlModelGroup:(urn:li:dataPlatform:mlflow,{name},{ENV})"


def run_urn(run_id: str) -> str:
    """The dataProcessInstance URN the mlflow source gives an MLflow run (the same DataHub helper it uses)."""
    from datahub.api.entities.dataprocess.dataprocess_instance import DataProcessInstance

    return str(DataProcessInstance(id=run_id, orchestrator="mlflow").urn)


@dataclass(frozen=True)
class RealModel:
    """One registered MLflow model version, as trained here and as the mlflow source names it in DataHub."""

    name: str
    version: str
    stage: str
    urn: str
    group_urn: str
    stage_tag_urn: str
    run_id: str
    run_urn: str
    features: tuple[str, ...]
    artifact_uri: str  # the run's artifact root as MLflow records it (DataHub: mlTrainingRunProperties.outputUrls)
    artifact_path: Path  # the sklearn flavour's pickle: <artifact_uri>/model/model.pkl (cloudpickle format)
    mlmodel_path: Path  # <artifact_uri>/model/MLmodel: flavours and the signature (inputs = the model's columns)
    holdout_auc: float


@dataclass(frozen=True)
class RealWorld:
    dir: Path
    catalog_db: Path
    warehouse_db: Path
    query_file: Path
    mlflow_db: Path
    mlflow_uri: str
    artifact_root: Path
    train_csv: Path
    holdout_csv: Path
    label_column: str
    experiment_name: str
    raw_table_urn: str
    feature_table_urn: str
    mlflow_dataset_urn: str  # the training dataset logged with mlflow.log_input (platform mlflow)
    holdout_dataset_urn: str  # the held-out dataset logged with context "eval" (platform mlflow)
    champion: RealModel  # credit_default v1: stage Production, alias champion, tag team=risk
    challenger: RealModel  # credit_default_challenger v1: stage Staging

    @property
    def models(self) -> tuple[RealModel, RealModel]:
        return (self.champion, self.challenger)


# ---------------------------------------------------------------------------------------------------- warehouse
def make_warehouse(path: Path, rows: int = ROWS, seed: int = SEED) -> None:
    """The raw table with synthetic applicants, then the feature table filled by FEATURE_SQL."""
    rng = np.random.default_rng(seed)
    income = np.round(np.clip(rng.lognormal(np.log(60_000), 0.3, rows), 12_000, 400_000), 2)
    loan_amount = np.round(income * rng.uniform(0.05, 0.8, rows), 2)
    debt = np.round(income * rng.beta(2, 5, rows), 2)
    employment_years = np.round(np.clip(rng.gamma(2.0, 3.0, rows), 0, 40), 1)
    regions = np.array(["north", "south", "east", "west"])
    region = rng.choice(regions, rows, p=[0.3, 0.3, 0.2, 0.2])
    region_effect = {"north": -0.3, "south": 0.4, "east": 0.0, "west": -0.1}
    # Income is the strongest driver, directly and through the loan-to-income ratio: income in cents (x100)
    # must wreck a model that reads it.
    logit = (
        -(income - 60_000) / 15_000
        + 6.0 * (loan_amount / income - 0.4)
        + 1.5 * (debt / income - 0.28)
        + np.array([region_effect[r] for r in region])
        - 0.04 * (employment_years - 6)
        - 0.3
    )
    defaulted = (rng.random(rows) < 1 / (1 + np.exp(-logit))).astype(int)
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute(
            f"CREATE TABLE {RAW_TABLE} (applicant_id INTEGER PRIMARY KEY, income REAL NOT NULL, "
            "loan_amount REAL NOT NULL, debt REAL NOT NULL, employment_years REAL NOT NULL, region TEXT NOT NULL, "
            "defaulted INTEGER NOT NULL)"
        )
        conn.execute(
            f"CREATE TABLE {FEATURE_TABLE} (applicant_id INTEGER PRIMARY KEY, income REAL NOT NULL, "
            "loan_amount REAL NOT NULL, debt_to_income REAL NOT NULL, employment_years REAL NOT NULL, "
            "region TEXT NOT NULL, defaulted INTEGER NOT NULL)"
        )
        conn.executemany(
            f"INSERT INTO {RAW_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
            zip(
                range(1, rows + 1),
                income.tolist(),
                loan_amount.tolist(),
                debt.tolist(),
                employment_years.tolist(),
                region.tolist(),
                defaulted.tolist(),
                strict=True,
            ),
        )
        conn.execute(FEATURE_SQL)
    conn.close()


def write_query_file(path: Path) -> None:
    """The JSON-lines input of the sql-queries source: the one statement that fills the feature table."""
    path.write_text(json.dumps({"query": FEATURE_SQL, "timestamp": FEATURE_SQL_TIMESTAMP}) + "\n")


def read_features(warehouse_db: Path) -> pd.DataFrame:
    with sqlite3.connect(warehouse_db) as conn:
        frame = pd.read_sql_query(f"SELECT * FROM {FEATURE_TABLE} ORDER BY applicant_id", conn)
    conn.close()
    return frame


# ---------------------------------------------------------------------------------------------------- MLflow
@contextmanager
def _mlflow_uris(uri: str, world_dir: Path) -> Iterator[None]:
    """Point MLflow's fluent API at ``uri`` and restore the process-wide setting afterwards.

    Runs the block inside ``world_dir``: every MLflow client of a ``sqlite://`` store creates its default artifact
    root ``./mlruns`` in the current directory, which must be the world's, not the caller's.
    """
    import mlflow
    from mlflow.tracking._model_registry import utils as registry_utils
    from mlflow.tracking._tracking_service import utils as tracking_utils

    # set_*_uri also export MLFLOW_TRACKING_URI / MLFLOW_REGISTRY_URI, which every later client would follow.
    saved_env = {name: os.environ.get(name) for name in ("MLFLOW_TRACKING_URI", "MLFLOW_REGISTRY_URI")}
    saved = (tracking_utils._tracking_uri, registry_utils._registry_uri)
    mlflow.set_tracking_uri(uri)
    mlflow.set_registry_uri(uri)
    try:
        with chdir(world_dir):
            yield
    finally:
        tracking_utils._tracking_uri, registry_utils._registry_uri = saved
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _pipeline(numeric: list[str]) -> Any:
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    prep = ColumnTransformer(
        [
            ("num", StandardScaler(), numeric),
            ("cat", OneHotEncoder(handle_unknown="ignore"), ["region"]),
        ]
    )
    return Pipeline([("prep", prep), ("clf", LogisticRegression(max_iter=1000))])


def _train_one(
    name: str,
    features: tuple[str, ...],
    experiment_id: str,
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    train_csv: Path,
    holdout_csv: Path,
) -> tuple[str, float]:
    import mlflow
    import mlflow.sklearn
    import sklearn
    from mlflow.data.pandas_dataset import from_pandas
    from mlflow.models import infer_signature
    from sklearn.metrics import roc_auc_score

    pipeline = _pipeline([f for f in features if f != "region"])
    x_train = train[list(features)]
    pipeline.fit(x_train, train[LABEL_COLUMN])
    auc = float(roc_auc_score(holdout[LABEL_COLUMN], pipeline.predict_proba(holdout[list(features)])[:, 1]))
    with mlflow.start_run(experiment_id=experiment_id, run_name=f"train-{name}") as run:
        mlflow.log_input(from_pandas(train, source=str(train_csv), name=TRAIN_DATASET_NAME), context="training")
        mlflow.log_input(from_pandas(holdout, source=str(holdout_csv), name=HOLDOUT_DATASET_NAME), context="eval")
        mlflow.log_params({"model": "LogisticRegression", "max_iter": 1000})
        mlflow.log_metric("holdout_auc", auc)
        mlflow.sklearn.log_model(
            pipeline,
            "model",
            signature=infer_signature(x_train, pipeline.predict_proba(x_train)),
            registered_model_name=name,
            # Given, so MLflow does not infer them by loading the model in a subprocess.
            pip_requirements=[f"scikit-learn=={sklearn.__version__}"],
        )
    return run.info.run_id, auc


def train_models(world_dir: Path, warehouse_db: Path, mlflow_uri: str, artifact_root: Path) -> dict[str, Any]:
    """Train both pipelines, log them to MLflow, register them and set stages, alias and tag."""
    import mlflow
    from mlflow import MlflowClient
    from sklearn.model_selection import train_test_split

    frame = read_features(warehouse_db)
    train, holdout = train_test_split(frame, test_size=0.3, random_state=SEED, stratify=frame[LABEL_COLUMN])
    train = train.sort_values("applicant_id").reset_index(drop=True)
    holdout = holdout.sort_values("applicant_id").reset_index(drop=True)
    train_csv, holdout_csv = world_dir / "train.csv", world_dir / "holdout.csv"
    train.to_csv(train_csv, index=False)
    holdout.to_csv(holdout_csv, index=False)

    artifact_root.mkdir(parents=True, exist_ok=True)
    with _mlflow_uris(mlflow_uri, world_dir):
        client = MlflowClient(tracking_uri=mlflow_uri, registry_uri=mlflow_uri)
        experiment_id = client.create_experiment(EXPERIMENT, artifact_location=artifact_root.as_uri())
        trained: dict[str, Any] = {}
        for name, features, stage in (
            (CHAMPION, CHAMPION_FEATURES, "Production"),
            (CHALLENGER, CHALLENGER_FEATURES, "Staging"),
        ):
            run_id, auc = _train_one(name, features, experiment_id, train, holdout, train_csv, holdout_csv)
            version = client.search_model_versions(f"name = '{name}'")[0]
            client.transition_model_version_stage(name, version.version, stage, archive_existing_versions=False)
            run = mlflow.get_run(run_id)
            trained[name] = {
                "run_id": run_id,
                "version": str(version.version),
                "stage": stage,
                "auc": auc,
                "artifact_uri": run.info.artifact_uri,
                "features": features,
            }
        client.set_registered_model_alias(CHAMPION, "champion", trained[CHAMPION]["version"])
        client.set_model_version_tag(CHAMPION, trained[CHAMPION]["version"], "team", "risk")
    return {"train_csv": train_csv, "holdout_csv": holdout_csv, "models": trained}


def _local_path(file_uri: str) -> Path:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(file_uri)
    if parsed.scheme not in ("", "file"):
        raise ValueError(f"expected a local artifact URI, got {file_uri}")
    return Path(unquote(parsed.path))


def mlflow_client(world: RealWorld) -> Any:
    """An ``MlflowClient`` on the world's store, created inside the world's folder.

    MLflow caches one store per tracking URI and process; the first one creates ``./mlruns`` in the current
    directory (see :func:`_mlflow_uris`). Creating it here, as build and copy do, keeps that out of the caller's
    folder for every later ``MlflowClient(world.mlflow_uri)`` in this process.
    """
    from mlflow import MlflowClient

    with chdir(world.dir):
        return MlflowClient(tracking_uri=world.mlflow_uri, registry_uri=world.mlflow_uri)


# ---------------------------------------------------------------------------------------------------- reading
def read_aspect(catalog_db: Path, urn: str, aspect: str) -> dict[str, Any] | None:
    """The latest version of one aspect as stored in the Lite file (DataHub Lite keeps it as version 0)."""
    with sqlite3.connect(f"file:{catalog_db}?mode=ro", uri=True) as conn:
        row = conn.execute(
            "SELECT metadata FROM metadata_aspect_v2 WHERE urn = ? AND aspect_name = ? AND version = 0", (urn, aspect)
        ).fetchone()
    conn.close()
    return None if row is None else dict(json.loads(row[0]))


def catalog_contents(catalog_db: Path) -> dict[str, set[str]]:
    """Every entity URN in the Lite file with the names of its aspects."""
    with sqlite3.connect(f"file:{catalog_db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT urn, aspect_name FROM metadata_aspect_v2 WHERE version = 0").fetchall()
    conn.close()
    contents: dict[str, set[str]] = {}
    for urn, aspect in rows:
        contents.setdefault(urn, set()).add(aspect)
    return contents


# ---------------------------------------------------------------------------------------------------- ingestion
def _lite_sink(catalog_db: Path) -> dict[str, Any]:
    from tools.embedded.store import SQLITE_OPTIONS

    return {
        "type": "datahub-lite",
        "config": {"type": "sqlite", "config": {"file": str(catalog_db), "options": SQLITE_OPTIONS}},
    }


def run_recipe(recipe: dict[str, Any]) -> None:
    """Run one DataHub ingestion recipe and fail loudly: source or sink failures, and records the sink dropped."""
    from datahub.ingestion.run.pipeline import Pipeline

    # report_to=None: no ingestion-run summary entities written into the catalog by the default reporter.
    pipeline = Pipeline.create(recipe, report_to=None)
    pipeline.run()
    pipeline.raise_from_status()
    sink_warnings = list(pipeline.sink.get_report().warnings)
    if sink_warnings:
        raise RuntimeError(f"{recipe['source']['type']}: the sink dropped records: {sink_warnings[:5]}")


def ingest_warehouse(world: RealWorld) -> None:
    """DataHub's generic ``sqlalchemy`` source over the SQLite warehouse (schemas, containers, tables)."""
    run_recipe(
        {
            "source": {
                "type": "sqlalchemy",
                "config": {"platform": PLATFORM, "connect_uri": f"sqlite:///{world.warehouse_db}", "env": ENV},
            },
            "sink": _lite_sink(world.catalog_db),
        }
    )


def ingest_queries(world: RealWorld) -> None:
    """DataHub's ``sql-queries`` source: column lineage of FEATURE_SQL. It reads table schemas through a DataHub
    API, so our embedded endpoint serves the same Lite file for the duration of the run."""
    from tools.embedded.server import embedded_catalog

    with embedded_catalog(world.catalog_db) as running:
        run_recipe(
            {
                "source": {
                    "type": "sql-queries",
                    "config": {
                        "platform": PLATFORM,
                        "query_file": str(world.query_file),
                        "default_schema": SCHEMA,
                        "env": ENV,
                    },
                },
                "sink": _lite_sink(world.catalog_db),
                "datahub_api": {"server": running.url, "token": running.token},
            }
        )


def ingest_mlflow(world: RealWorld) -> None:
    """DataHub's ``mlflow`` source over the tracking store and registry (re-run it after changing MLflow)."""
    with chdir(world.dir):  # its MlflowClient creates ./mlruns (see _mlflow_uris)
        run_recipe(
            {
                "source": {"type": "mlflow", "config": {"tracking_uri": world.mlflow_uri, "env": ENV}},
                "sink": _lite_sink(world.catalog_db),
            }
        )


def ingest_all(world: RealWorld) -> None:
    ingest_warehouse(world)
    ingest_queries(world)
    ingest_mlflow(world)


# ---------------------------------------------------------------------------------------------------- the world
def _model(name: str, trained: dict[str, Any]) -> RealModel:
    artifact_uri = str(trained["artifact_uri"])
    model_dir = _local_path(artifact_uri) / "model"
    return RealModel(
        name=name,
        version=str(trained["version"]),
        stage=str(trained["stage"]),
        urn=model_urn(name, str(trained["version"])),
        group_urn=model_group_urn(name),
        stage_tag_urn=f"urn:li:tag:mlflow_{str(trained['stage']).lower()}",
        run_id=str(trained["run_id"]),
        run_urn=run_urn(str(trained["run_id"])),
        features=tuple(trained["features"]),
        artifact_uri=artifact_uri,
        artifact_path=model_dir / "model.pkl",
        mlmodel_path=model_dir / "MLmodel",
        holdout_auc=float(trained["auc"]),
    )


def build_world(world_dir: Path) -> RealWorld:
    """Build the warehouse and the MLflow store, then fill the Lite catalog with DataHub's three sources."""
    world_dir = world_dir.resolve()
    world_dir.mkdir(parents=True, exist_ok=True)
    warehouse_db, mlflow_db, artifact_root = world_dir / "warehouse.db", world_dir / "mlflow.db", world_dir / "mlruns"
    make_warehouse(warehouse_db)
    query_file = world_dir / "queries.jsonl"
    write_query_file(query_file)
    mlflow_uri = f"sqlite:///{mlflow_db}"
    trained = train_models(world_dir, warehouse_db, mlflow_uri, artifact_root)
    models = trained["models"]
    world = RealWorld(
        dir=world_dir,
        catalog_db=world_dir / "catalog.db",
        warehouse_db=warehouse_db,
        query_file=query_file,
        mlflow_db=mlflow_db,
        mlflow_uri=mlflow_uri,
        artifact_root=artifact_root,
        train_csv=trained["train_csv"],
        holdout_csv=trained["holdout_csv"],
        label_column=LABEL_COLUMN,
        experiment_name=EXPERIMENT,
        raw_table_urn=dataset_urn(PLATFORM, f"{SCHEMA}.{RAW_TABLE}"),
        feature_table_urn=dataset_urn(PLATFORM, f"{SCHEMA}.{FEATURE_TABLE}"),
        mlflow_dataset_urn=dataset_urn("mlflow", TRAIN_DATASET_NAME),
        holdout_dataset_urn=dataset_urn("mlflow", HOLDOUT_DATASET_NAME),
        champion=_model(CHAMPION, models[CHAMPION]),
        challenger=_model(CHALLENGER, models[CHALLENGER]),
    )
    ingest_all(world)
    mlflow_client(world)
    return world


def _relocate_mlflow_store(mlflow_db: Path, old_root: str, new_root: str) -> None:
    """Rewrite the absolute artifact locations MLflow stored, after the store was copied to another folder."""
    columns = {
        "experiments": ["artifact_location"],
        "runs": ["artifact_uri"],
        "model_versions": ["source", "storage_location"],
        "datasets": ["dataset_source"],
    }
    with sqlite3.connect(mlflow_db) as conn:
        for table, names in columns.items():
            for column in names:
                conn.execute(f"UPDATE {table} SET {column} = replace({column}, ?, ?)", (old_root + "/", new_root + "/"))
    conn.close()


def copy_world(world: RealWorld, target: Path) -> RealWorld:
    """A private copy of the world in ``target`` (must not exist): every file, and a RealWorld pointing at it.

    MLflow stores absolute artifact locations, so the copied ``mlflow.db`` is rewritten to point at the copied
    ``mlruns/`` (re-run :func:`ingest_mlflow` on the copy to refresh what DataHub says about them: until then the
    copied catalog still names the original folder in ``outputUrls`` and dataset properties).
    """
    target = target.resolve()
    shutil.copytree(world.dir, target)
    _relocate_mlflow_store(target / world.mlflow_db.name, str(world.dir), str(target))

    def moved(path: Path) -> Path:
        return target / path.relative_to(world.dir)

    def moved_model(model: RealModel) -> RealModel:
        return replace(
            model,
            artifact_uri=model.artifact_uri.replace(str(world.dir), str(target)),
            artifact_path=moved(model.artifact_path),
            mlmodel_path=moved(model.mlmodel_path),
        )

    copied = replace(
        world,
        dir=target,
        catalog_db=moved(world.catalog_db),
        warehouse_db=moved(world.warehouse_db),
        query_file=moved(world.query_file),
        mlflow_db=moved(world.mlflow_db),
        mlflow_uri=f"sqlite:///{moved(world.mlflow_db)}",
        artifact_root=moved(world.artifact_root),
        train_csv=moved(world.train_csv),
        holdout_csv=moved(world.holdout_csv),
        champion=moved_model(world.champion),
        challenger=moved_model(world.challenger),
    )
    mlflow_client(copied)
    return copied


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.realworld.world DIR", file=sys.stderr)
        return 2
    target = Path(argv[0])
    if target.exists() and any(target.iterdir()):
        print(f"{target} is not empty", file=sys.stderr)
        return 2
    started = time.perf_counter()
    world = build_world(target)
    print(f"built in {time.perf_counter() - started:.1f} s: {world.dir}")
    for field, value in vars(world).items():
        print(f"  {field}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
