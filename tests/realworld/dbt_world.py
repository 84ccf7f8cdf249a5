"""A second test world, on the dbt stack, written by real tools only: PostgreSQL, the dbt CLI, MLflow and DataHub's
own ``postgres``, ``dbt`` and ``mlflow`` ingestion sources.

- PostgreSQL (the test server): database ``dbt_warehouse`` with the raw table ``raw.claims`` (seeded synthetic
  claims); the real ``dbt`` CLI (``dbt run``, ``dbt docs generate``) builds the project in ``dbt_project/`` (copied
  from tests/realworld/dbt_project) into schema ``analytics``: the view ``stg_claims`` (a rename and a cast) and the
  table ``claim_features`` (copies, a ratio, a log, a rounding, a CASE bucket, a COALESCE), and writes
  ``target/manifest.json`` and ``target/catalog.json``.
- ``mlflow.db`` + ``mlruns/``: a real MLflow tracking store and registry with four scikit-learn pipelines trained on
  ``claim_features``: ``claims_fraud`` (binary; production only by the alias ``champion``, no stage),
  ``claims_severity`` (3 classes; stage Production), ``claims_pricing`` (binary; alias ``production``) and
  ``claims_fraud_challenger`` (binary; stage Staging); ``train.csv`` / ``holdout.csv`` are the 70/30 split.
- Two DataHub Lite catalogs, each in a folder usable as a ``PROVENANCE_HOME`` (``<variant>/catalog.db``), filled by
  the same three sources with default recipes except the required fields: ``lite/`` through the ``datahub-lite``
  sink (the dbt source reads through a running ``provenance catalog serve`` of that same file), ``rest/`` through a
  ``datahub-rest`` sink pointed at a ``provenance catalog serve`` of its file. What each run reported is in
  :attr:`CatalogVariant.ingestions` and ``ingestion.json``.

The dbt CLI cannot be installed into .venv (see the ``dbt`` extra in pyproject.toml): :func:`dbt_executable`
installs it into its own venv ``.venv/dbt-cli`` from the exact pins of ``dbt_requirements.txt`` the first time
(with uv, a dev requirement: a few seconds, where pip took ≈40 s), or takes ``$PROVENANCE_DBT`` (the ``dbt``
executable of another venv: its ``python`` runs dbt).

``python -m tests.realworld.dbt_world DIR [POSTGRES_URL]`` builds it standalone, for looking at it (without a URL
it starts a throw-away PostgreSQL server and stops it at the end: the catalogs and MLflow store stay).
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, chdir, contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

os.environ.setdefault("DATAHUB_TELEMETRY_ENABLED", "false")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tests.realworld.tool_venv import tool_executable
from tests.realworld.world import (  # noqa: E402
    _lite_sink,
    _local_path,
    _mlflow_uris,
    _relocate_mlflow_store,
    dataset_urn,
    model_group_urn,
    model_urn,
    run_urn,
)
from tools.catalog.ingest import run_pipeline  # noqa: E402

if TYPE_CHECKING:
    from tests.postgres import Cluster

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROJECT_SOURCE = HERE / "dbt_project"
REQUIREMENTS = HERE / "dbt_requirements.txt"
DBT_VENV = REPO / ".venv" / "dbt-cli"
DBT_ENV_VAR = "PROVENANCE_DBT"

DATABASE = "dbt_warehouse"
RAW_SCHEMA = "raw"
RAW_TABLE = "claims"
DBT_SCHEMA = "analytics"  # the profile's schema: dbt builds every model there
STAGING = "stg_claims"
FEATURES = "claim_features"
PROFILE = "claims"
ROWS = 4000
SEED = 11
CATEGORIES = ("a", "b", "c", "d", "e", "f")
BUCKETS = {"a": "low", "b": "low", "c": "mid", "d": "high", "e": "high", "f": "high"}  # the CASE of claim_features
REGIONS = ("north", "south", "east", "west")
BINARY_LABEL = "is_fraud"
MULTICLASS_LABEL = "severity"
SEVERITIES = ("minor", "moderate", "severe")
EXPERIMENT = "claims"
HOLDOUT_DATASET_NAME = "claim_features_holdout"
VARIANTS = ("lite", "rest")
SERVE_TIMEOUT_SECONDS = 120.0

# The SQL of the raw table (the dbt models' SQL is in dbt_project/models).
RAW_DDL = (
    f"CREATE TABLE {RAW_SCHEMA}.{RAW_TABLE} (claim_id integer PRIMARY KEY, amount numeric(12, 2) NOT NULL, "
    "insured_value numeric(14, 2) NOT NULL, category text NOT NULL, region text, is_fraud integer NOT NULL, "
    "severity text NOT NULL)"
)
RAW_COLUMNS = ("claim_id", "amount", "insured_value", "category", "region", "is_fraud", "severity")
STAGING_COLUMNS = ("claim_id", "claim_amount", "insured_value", "category", "region", "is_fraud", "severity")
FEATURE_COLUMNS = (
    "claim_id",
    "claim_amount",
    "insured_value",
    "amount_ratio",
    "log_amount",
    "amount_rounded",
    "category",
    "category_bucket",
    "region",
    "is_fraud",
    "severity",
)
NUMERIC_FEATURES = ("claim_amount", "insured_value", "amount_ratio", "log_amount", "amount_rounded")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    task: str  # binary | multiclass
    label: str
    features: tuple[str, ...]
    stage: str | None  # None: no stage (MLflow's "None"; DataHub's tag mlflow_none)
    aliases: tuple[str, ...]


FRAUD = ModelSpec(
    "claims_fraud", "binary", BINARY_LABEL, ("claim_amount", "amount_ratio", "region"), None, ("champion",)
)
SEVERITY = ModelSpec(
    "claims_severity", "multiclass", MULTICLASS_LABEL, ("category_bucket", "log_amount", "region"), "Production", ()
)
PRICING = ModelSpec("claims_pricing", "binary", BINARY_LABEL, ("amount_rounded",), None, ("production",))
CHALLENGER = ModelSpec(
    "claims_fraud_challenger",
    "binary",
    BINARY_LABEL,
    ("claim_amount", "amount_ratio", "log_amount", "region"),
    "Staging",
    (),
)
MODEL_SPECS = (FRAUD, SEVERITY, PRICING, CHALLENGER)


def field_urn(dataset: str, column: str) -> str:
    return f"urn:li:schemaField:({dataset},{column})"


@dataclass(frozen=True)
class DbtModel:
    """One registered MLflow model version, as trained here and as the mlflow source names it in DataHub."""

    name: str
    version: str
    stage: str  # as MLflow reports it: "None" when no stage was set
    aliases: tuple[str, ...]
    task: str
    label: str
    features: tuple[str, ...]
    urn: str
    group_urn: str
    stage_tag_urn: str
    run_id: str
    run_urn: str
    artifact_uri: str
    artifact_path: Path  # <artifact_uri>/model/model.pkl
    mlmodel_path: Path
    holdout_metric: str  # roc_auc (binary) or roc_auc_ovr_macro (multiclass)
    holdout_score: float


@dataclass(frozen=True)
class Ingestion:
    """What one DataHub ingestion run reported (strings as the reports hold them)."""

    source: str
    sink: str
    records_written: int
    source_failures: tuple[str, ...]
    source_warnings: tuple[str, ...]
    sink_failures: tuple[str, ...]
    sink_warnings: tuple[str, ...]
    error: str | None  # an exception the pipeline raised, if any

    @property
    def clean(self) -> bool:
        return not (self.source_failures or self.sink_failures or self.sink_warnings or self.error)


@dataclass(frozen=True)
class CatalogVariant:
    name: str  # lite | rest
    home: Path  # a PROVENANCE_HOME: its catalog.db is the Lite file
    catalog_db: Path
    ingestions: tuple[Ingestion, ...]

    def ingestion(self, source: str) -> Ingestion:
        return next(i for i in self.ingestions if i.source == source)


@dataclass(frozen=True)
class DbtWorld:
    dir: Path
    postgres_url: str
    database: str
    project_dir: Path
    profiles_dir: Path
    manifest_path: Path
    catalog_path: Path  # dbt's catalog.json (not the DataHub catalog)
    dbt_version: str
    lite: CatalogVariant
    rest: CatalogVariant
    mlflow_db: Path
    mlflow_uri: str
    artifact_root: Path
    train_csv: Path
    holdout_csv: Path
    experiment_name: str
    # postgres platform (DataHub's postgres source)
    raw_table_urn: str
    staging_view_urn: str
    feature_table_urn: str
    # dbt platform (DataHub's dbt source): the source node and the two models
    dbt_source_urn: str
    dbt_staging_urn: str
    dbt_features_urn: str
    # mlflow platform: the datasets logged with mlflow.log_input
    mlflow_dataset_urn: str
    holdout_dataset_urn: str
    fraud: DbtModel  # alias champion, no stage
    severity: DbtModel  # stage Production
    pricing: DbtModel  # alias production, no stage
    challenger: DbtModel  # stage Staging
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def models(self) -> tuple[DbtModel, ...]:
        return (self.fraud, self.severity, self.pricing, self.challenger)

    @property
    def variants(self) -> tuple[CatalogVariant, CatalogVariant]:
        return (self.lite, self.rest)


# ---------------------------------------------------------------------------------------------------- the dbt CLI
def dbt_executable() -> Path:
    """The dbt CLI: ``$PROVENANCE_DBT``, else ``.venv/dbt-cli/bin/dbt``, installed first when missing or out of
    date (a file lock keeps parallel sessions from installing twice)."""
    return tool_executable(DBT_VENV, REQUIREMENTS, "dbt", DBT_ENV_VAR, "the dbt CLI")


def _dbt_env(profiles_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBT_")}
    env.update(
        {"DBT_PROFILES_DIR": str(profiles_dir), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_USE_COLORS": "false"}
    )
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"):
        env.pop(name, None)
    return env


# `dbt <command>` for each command, in one process of the dbt venv: dbtRunner is dbt's own entry to its CLI (the
# click commands `dbt` runs), and one process saves a second start of dbt (~5 s on a 2-core machine).
DBT_DRIVER = """
import json, sys
from dbt.cli.main import dbtRunner
runner = dbtRunner()
for args in json.loads(sys.argv[1]):
    result = runner.invoke(args)
    if not result.success:
        sys.exit(f"dbt {' '.join(args)} failed: {result.exception}")
"""


def start_dbt(dbt: Path, project_dir: Path, profiles_dir: Path, *commands: tuple[str, ...]) -> subprocess.Popen[str]:
    """Run the dbt commands (e.g. ``("run",), ("docs", "generate")``) in the project, in the background."""
    where = ("--project-dir", str(project_dir), "--profiles-dir", str(profiles_dir))
    return subprocess.Popen(
        [str(dbt.parent / "python"), "-c", DBT_DRIVER, json.dumps([[*c, *where] for c in commands])],
        cwd=project_dir,
        env=_dbt_env(profiles_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish_dbt(process: subprocess.Popen[str], timeout: float = 300) -> str:
    """The output of :func:`start_dbt`'s commands once they are done; raises when one failed."""
    output, _ = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise RuntimeError(f"dbt failed ({process.returncode}):\n{output[-5000:]}")
    return output


def run_dbt(dbt: Path, project_dir: Path, profiles_dir: Path, *commands: tuple[str, ...]) -> str:
    return finish_dbt(start_dbt(dbt, project_dir, profiles_dir, *commands))


def _warm_imports() -> None:
    """Import what training and ingestion need (~10 s on a 2-core machine) while dbt runs in its own process."""
    import mlflow.sklearn  # noqa: F401
    import sklearn.linear_model  # noqa: F401
    from datahub.ingestion.run.pipeline import Pipeline  # noqa: F401
    from mlflow.data.pandas_dataset import from_pandas  # noqa: F401
    from mlflow.models import infer_signature  # noqa: F401


def write_profiles(profiles_dir: Path, postgres_url: str) -> None:
    url = urlparse(postgres_url)
    profiles_dir.mkdir(parents=True, exist_ok=True)
    profile = {
        PROFILE: {
            "target": "test",
            "outputs": {
                "test": {
                    "type": "postgres",
                    "host": url.hostname or "127.0.0.1",
                    "port": url.port or 5432,
                    "user": url.username or "postgres",
                    "password": url.password or "",
                    "dbname": url.path.lstrip("/"),
                    "schema": DBT_SCHEMA,
                    "threads": 1,
                }
            },
        }
    }
    (profiles_dir / "profiles.yml").write_text(json.dumps(profile, indent=2) + "\n")  # JSON is YAML


# ---------------------------------------------------------------------------------------------------- PostgreSQL
def claims_frame(rows: int = ROWS, seed: int = SEED) -> pd.DataFrame:
    """Synthetic claims: fraud driven by the claimed share of the insured value and the amount, severity by the
    category's bucket and the amount."""
    rng = np.random.default_rng(seed)
    insured = np.round(np.clip(rng.lognormal(np.log(20_000), 0.5, rows), 2_000, 300_000), 2)
    share = rng.beta(2, 6, rows)
    amount = np.round(np.clip(insured * share, 20, None), 2)
    category = rng.choice(np.array(CATEGORIES), rows, p=[0.2, 0.2, 0.15, 0.15, 0.15, 0.15])
    region = rng.choice(np.array(REGIONS, dtype=object), rows, p=[0.3, 0.3, 0.2, 0.2])
    region[rng.random(rows) < 0.03] = None
    region_effect = {"north": -0.3, "south": 0.4, "east": 0.0, "west": -0.2, None: 0.2}
    log_amount = np.log(amount)
    ratio = amount / insured
    fraud_logit = (
        8.0 * (ratio - 0.25) + 0.9 * (log_amount - np.log(5_000)) + np.array([region_effect[r] for r in region]) - 1.2
    )
    is_fraud = (rng.random(rows) < 1 / (1 + np.exp(-fraud_logit))).astype(int)
    bucket_effect = {"low": -1.3, "mid": 0.0, "high": 1.3}
    score = (
        np.array([bucket_effect[BUCKETS[c]] for c in category])
        + 1.1 * (log_amount - log_amount.mean())
        + rng.normal(0, 0.5, rows)
    )
    cuts = np.quantile(score, [1 / 3, 2 / 3])
    severity = np.array(SEVERITIES)[np.searchsorted(cuts, score)]
    return pd.DataFrame(
        {
            "claim_id": np.arange(1, rows + 1),
            "amount": amount,
            "insured_value": insured,
            "category": category,
            "region": region,
            "is_fraud": is_fraud,
            "severity": severity,
        }
    )


def _database_url(postgres: str | Cluster) -> str:
    """A URL as given, or on a cluster the database DATABASE, created afresh (the name is part of every URN)."""
    if isinstance(postgres, str):
        return postgres
    import psycopg

    with psycopg.connect(postgres.url(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)'.encode())
        conn.execute(f'CREATE DATABASE "{DATABASE}"'.encode())
    return postgres.url(DATABASE)


def make_raw_table(postgres_url: str, frame: pd.DataFrame) -> None:
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        conn.execute(f"CREATE SCHEMA {RAW_SCHEMA}".encode())
        conn.execute(RAW_DDL.encode())
        with conn.cursor() as cur:
            with cur.copy(f"COPY {RAW_SCHEMA}.{RAW_TABLE} ({', '.join(RAW_COLUMNS)}) FROM STDIN".encode()) as copy:
                for row in frame.itertuples(index=False):
                    copy.write_row(
                        (int(row.claim_id), f"{row.amount:.2f}", f"{row.insured_value:.2f}", row.category)
                        + (None if pd.isna(row.region) else row.region, int(row.is_fraud), row.severity)
                    )
        conn.execute(f"ANALYZE {RAW_SCHEMA}.{RAW_TABLE}".encode())


def read_features(postgres_url: str) -> pd.DataFrame:
    """``analytics.claim_features`` as dbt built it; PostgreSQL numerics as floats."""
    import psycopg

    with psycopg.connect(postgres_url) as conn, conn.cursor() as cur:
        cur.execute(f"SELECT * FROM {DBT_SCHEMA}.{FEATURES} ORDER BY claim_id".encode())
        columns = [c.name for c in cur.description or ()]
        frame = pd.DataFrame(cur.fetchall(), columns=columns)
    for column in NUMERIC_FEATURES:
        frame[column] = frame[column].astype(float)
    return frame


# ---------------------------------------------------------------------------------------------------- MLflow
def _pipeline(spec: ModelSpec) -> Any:
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric = [f for f in spec.features if f in NUMERIC_FEATURES]
    categorical = [f for f in spec.features if f not in NUMERIC_FEATURES]
    parts = [("num", StandardScaler(), numeric)]
    if categorical:
        parts.append(("cat", OneHotEncoder(handle_unknown="ignore"), categorical))
    return Pipeline([("prep", ColumnTransformer(parts)), ("clf", LogisticRegression(max_iter=1000))])


def _score(spec: ModelSpec, pipeline: Any, holdout: pd.DataFrame) -> tuple[str, float]:
    from sklearn.metrics import roc_auc_score

    proba = pipeline.predict_proba(holdout[list(spec.features)])
    if spec.task == "binary":
        return "roc_auc", float(roc_auc_score(holdout[spec.label], proba[:, 1]))
    score = roc_auc_score(holdout[spec.label], proba, multi_class="ovr", average="macro", labels=pipeline.classes_)
    return "roc_auc_ovr_macro", float(score)


def _train_one(
    spec: ModelSpec,
    experiment_id: str,
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    csvs: tuple[Path, Path],
    train_name: str,
) -> tuple[str, str, float]:
    import mlflow
    import mlflow.sklearn
    import sklearn
    from mlflow.data.pandas_dataset import from_pandas
    from mlflow.models import infer_signature

    pipeline = _pipeline(spec)
    x_train = train[list(spec.features)]
    pipeline.fit(x_train, train[spec.label])
    metric, score = _score(spec, pipeline, holdout)
    with mlflow.start_run(experiment_id=experiment_id, run_name=f"train-{spec.name}") as run:
        mlflow.log_input(from_pandas(train, source=str(csvs[0]), name=train_name), context="training")
        mlflow.log_input(from_pandas(holdout, source=str(csvs[1]), name=HOLDOUT_DATASET_NAME), context="eval")
        mlflow.log_params({"model": "LogisticRegression", "max_iter": 1000, "label": spec.label})
        mlflow.log_metric(f"holdout_{metric}", score)
        mlflow.sklearn.log_model(
            pipeline,
            "model",
            signature=infer_signature(x_train, pipeline.predict_proba(x_train)),
            registered_model_name=spec.name,
            pip_requirements=[f"scikit-learn=={sklearn.__version__}"],
        )
    return run.info.run_id, metric, score


def train_models(world_dir: Path, frame: pd.DataFrame, mlflow_uri: str, train_name: str) -> dict[str, Any]:
    """Train the four pipelines, log them to MLflow, register them and set stages and aliases."""
    import mlflow
    from mlflow import MlflowClient
    from sklearn.model_selection import train_test_split

    train, holdout = train_test_split(frame, test_size=0.3, random_state=SEED, stratify=frame[BINARY_LABEL])
    train = train.sort_values("claim_id").reset_index(drop=True)
    holdout = holdout.sort_values("claim_id").reset_index(drop=True)
    train_csv, holdout_csv = world_dir / "train.csv", world_dir / "holdout.csv"
    train.to_csv(train_csv, index=False)
    holdout.to_csv(holdout_csv, index=False)
    artifact_root = world_dir / "mlruns"
    artifact_root.mkdir(parents=True, exist_ok=True)
    trained: dict[str, Any] = {}
    with _mlflow_uris(mlflow_uri, world_dir):
        client = MlflowClient(tracking_uri=mlflow_uri, registry_uri=mlflow_uri)
        experiment_id = client.create_experiment(EXPERIMENT, artifact_location=artifact_root.as_uri())
        for spec in MODEL_SPECS:
            run_id, metric, score = _train_one(
                spec, experiment_id, train, holdout, (train_csv, holdout_csv), train_name
            )
            version = str(client.search_model_versions(f"name = '{spec.name}'")[0].version)
            if spec.stage:
                client.transition_model_version_stage(spec.name, version, spec.stage, archive_existing_versions=False)
            for alias in spec.aliases:
                client.set_registered_model_alias(spec.name, alias, version)
            registered = client.get_model_version(spec.name, version)
            trained[spec.name] = {
                "spec": spec,
                "version": version,
                "stage": str(registered.current_stage),
                "run_id": run_id,
                "artifact_uri": mlflow.get_run(run_id).info.artifact_uri,
                "metric": metric,
                "score": score,
            }
    return {"train_csv": train_csv, "holdout_csv": holdout_csv, "artifact_root": artifact_root, "models": trained}


def _model(trained: dict[str, Any]) -> DbtModel:
    spec: ModelSpec = trained["spec"]
    artifact_uri = str(trained["artifact_uri"])
    model_dir = _local_path(artifact_uri) / "model"
    return DbtModel(
        name=spec.name,
        version=trained["version"],
        stage=trained["stage"],
        aliases=spec.aliases,
        task=spec.task,
        label=spec.label,
        features=spec.features,
        urn=model_urn(spec.name, trained["version"]),
        group_urn=model_group_urn(spec.name),
        stage_tag_urn=f"urn:li:tag:mlflow_{trained['stage'].lower()}",
        run_id=trained["run_id"],
        run_urn=run_urn(trained["run_id"]),
        artifact_uri=artifact_uri,
        artifact_path=model_dir / "model.pkl",
        mlmodel_path=model_dir / "MLmodel",
        holdout_metric=trained["metric"],
        holdout_score=trained["score"],
    )


def mlflow_client(world: DbtWorld) -> Any:
    """An ``MlflowClient`` on the world's store, created inside the world's folder (see world.mlflow_client)."""
    from mlflow import MlflowClient

    with chdir(world.dir):
        return MlflowClient(tracking_uri=world.mlflow_uri, registry_uri=world.mlflow_uri)


# ---------------------------------------------------------------------------------------------------- catalog serve
class CatalogServe:
    """``provenance catalog serve`` as a subprocess for one PROVENANCE_HOME (its catalog.db is the Lite file).

    :meth:`start` returns at once (the command takes ~10-20 s to answer: the endpoint, the MCP server and the
    assessment service start); :meth:`ready` waits for the lines it prints once serving; :meth:`stop` sends
    SIGTERM, which it handles by stopping everything it started.
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self.catalog_db = home / "catalog.db"
        self.token = secrets.token_hex(16)
        self.output = home / "catalog-serve.out"
        self.process: subprocess.Popen[bytes] | None = None
        self.gms_url: str | None = None

    def start(self) -> CatalogServe:
        self.home.mkdir(parents=True, exist_ok=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PROVENANCE_CATALOG_URL", "DATAHUB_GMS_URL", "DATAHUB_GMS_TOKEN", "PROVENANCE_DATABASE_URL")
        }
        env.update(
            {
                "PROVENANCE_HOME": str(self.home),
                "PROVENANCE_LITE_DB": str(self.catalog_db),
                "PROVENANCE_CATALOG": "embedded",
            }
        )
        script = Path(sys.executable).parent / "provenance"
        command = [str(script)] if script.is_file() else [sys.executable, "-m", "agent.cli"]
        with open(self.output, "wb") as out:
            self.process = subprocess.Popen(
                [*command, "catalog", "serve", "--token", self.token],
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return self

    def ready(self, timeout: float = SERVE_TIMEOUT_SECONDS) -> str:
        """The endpoint's URL (DATAHUB_GMS_URL), once the command says it serves."""
        assert self.process is not None, "not started"
        if self.gms_url:
            return self.gms_url
        deadline = time.monotonic() + timeout
        while True:
            text = self.output.read_text(errors="replace")
            if "Stop with Ctrl-C." in text:
                line = next(x for x in text.splitlines() if x.strip().startswith("DATAHUB_GMS_URL="))
                self.gms_url = line.split("=", 1)[1].strip()
                return self.gms_url
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"`provenance catalog serve` for {self.home} did not start:\n{text[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def catalog_serve(home: Path) -> Iterator[CatalogServe]:
    served = CatalogServe(home).start()
    try:
        served.ready()
        yield served
    finally:
        served.stop()


# ---------------------------------------------------------------------------------------------------- ingestion
def run_recipe(recipe: dict[str, Any]) -> Ingestion:
    """Run one DataHub ingestion recipe and return what it reported (never raises for the sink's refusals)."""
    report = run_pipeline(recipe)
    return Ingestion(source=recipe["source"]["type"], sink=recipe["sink"]["type"], **dataclasses.asdict(report))


def _postgres_source(postgres_url: str) -> dict[str, Any]:
    url = urlparse(postgres_url)
    config: dict[str, Any] = {
        "host_port": f"{url.hostname}:{url.port or 5432}",
        "database": url.path.lstrip("/"),
        "username": url.username or "postgres",
    }
    if url.password:
        config["password"] = url.password
    return {"type": "postgres", "config": config}


def _dbt_source(manifest: Path, catalog: Path) -> dict[str, Any]:
    return {
        "type": "dbt",
        "config": {"manifest_path": str(manifest), "catalog_path": str(catalog), "target_platform": "postgres"},
    }


def _mlflow_source(mlflow_uri: str) -> dict[str, Any]:
    return {"type": "mlflow", "config": {"tracking_uri": mlflow_uri}}


def ingest_variant(
    variant: str,
    served: CatalogServe,
    postgres_url: str,
    manifest: Path,
    catalog: Path,
    mlflow_uri: str,
    world_dir: Path,
) -> CatalogVariant:
    """The postgres, dbt and mlflow sources into the variant's Lite file, in that order (the dbt source reads the
    postgres tables' schemas through the DataHub API)."""
    gms_url = served.ready()
    if variant == "lite":
        sink = _lite_sink(served.catalog_db)
        api: dict[str, Any] = {"datahub_api": {"server": gms_url, "token": served.token}}
    else:
        sink = {"type": "datahub-rest", "config": {"server": gms_url, "token": served.token}}
        api = {}
    sources = (_postgres_source(postgres_url), _dbt_source(manifest, catalog), _mlflow_source(mlflow_uri))
    ingestions = []
    with chdir(world_dir):  # the mlflow source's MlflowClient creates ./mlruns (see world._mlflow_uris)
        for source in sources:
            # the dbt source needs the API even with the Lite sink; the others get it only where the sink implies it
            extra = api if source["type"] == "dbt" else {}
            ingestions.append(run_recipe({"source": source, "sink": sink, **extra}))
    return CatalogVariant(variant, served.home, served.catalog_db, tuple(ingestions))


# ---------------------------------------------------------------------------------------------------- the world
def build_dbt_world(world_dir: Path, postgres: str | Cluster) -> DbtWorld:
    """Build the warehouse with dbt, train and register the models, and fill both catalog variants.

    ``postgres``: a test server (the database ``dbt_warehouse`` is created afresh on it) or the URL of an empty
    database to use as is (its name is then the database part of every URN).
    """
    seconds: dict[str, float] = {}
    started = clock = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[step] = round(now - clock, 2)
        clock = now

    world_dir = world_dir.resolve()
    world_dir.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        # Started first: each takes ~10-20 s to serve, and runs while dbt and the training do.
        serves = {name: CatalogServe(world_dir / name).start() for name in VARIANTS}
        for served in serves.values():
            stack.callback(served.stop)
        dbt = dbt_executable()
        lap("dbt_cli")
        postgres_url = _database_url(postgres)
        database = urlparse(postgres_url).path.lstrip("/")
        make_raw_table(postgres_url, claims_frame())
        lap("raw_table")
        project_dir = world_dir / "dbt_project"
        shutil.copytree(PROJECT_SOURCE, project_dir, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
        profiles_dir = world_dir / "dbt_profiles"
        write_profiles(profiles_dir, postgres_url)
        dbt_process = start_dbt(dbt, project_dir, profiles_dir, ("run",), ("docs", "generate"))
        try:
            _warm_imports()
        finally:
            finish_dbt(dbt_process)
        manifest, catalog = project_dir / "target" / "manifest.json", project_dir / "target" / "catalog.json"
        dbt_version = json.loads(manifest.read_text())["metadata"]["dbt_version"]
        lap("dbt_run_docs")
        mlflow_db = world_dir / "mlflow.db"
        mlflow_uri = f"sqlite:///{mlflow_db}"
        train_name = f"{database}.{DBT_SCHEMA}.{FEATURES}"
        trained = train_models(world_dir, read_features(postgres_url), mlflow_uri, train_name)
        lap("train")
        variants = {}
        for name in VARIANTS:
            variants[name] = ingest_variant(name, serves[name], postgres_url, manifest, catalog, mlflow_uri, world_dir)
            lap(f"ingest_{name}")
    lap("serve_stop")
    models = {name: _model(t) for name, t in trained["models"].items()}
    world = DbtWorld(
        dir=world_dir,
        postgres_url=postgres_url,
        database=database,
        project_dir=project_dir,
        profiles_dir=profiles_dir,
        manifest_path=manifest,
        catalog_path=catalog,
        dbt_version=dbt_version,
        lite=variants["lite"],
        rest=variants["rest"],
        mlflow_db=mlflow_db,
        mlflow_uri=mlflow_uri,
        artifact_root=trained["artifact_root"],
        train_csv=trained["train_csv"],
        holdout_csv=trained["holdout_csv"],
        experiment_name=EXPERIMENT,
        raw_table_urn=dataset_urn("postgres", f"{database}.{RAW_SCHEMA}.{RAW_TABLE}"),
        staging_view_urn=dataset_urn("postgres", f"{database}.{DBT_SCHEMA}.{STAGING}"),
        feature_table_urn=dataset_urn("postgres", f"{database}.{DBT_SCHEMA}.{FEATURES}"),
        dbt_source_urn=dataset_urn("dbt", f"{database}.{RAW_SCHEMA}.{RAW_TABLE}"),
        dbt_staging_urn=dataset_urn("dbt", f"{database}.{DBT_SCHEMA}.{STAGING}"),
        dbt_features_urn=dataset_urn("dbt", f"{database}.{DBT_SCHEMA}.{FEATURES}"),
        mlflow_dataset_urn=dataset_urn("mlflow", train_name),
        holdout_dataset_urn=dataset_urn("mlflow", HOLDOUT_DATASET_NAME),
        fraud=models[FRAUD.name],
        severity=models[SEVERITY.name],
        pricing=models[PRICING.name],
        challenger=models[CHALLENGER.name],
        seconds={**seconds, "total": round(time.perf_counter() - started, 2)},
    )
    (world_dir / "ingestion.json").write_text(
        json.dumps({v.name: [asdict(i) for i in v.ingestions] for v in world.variants}, indent=2) + "\n"
    )
    mlflow_client(world)
    return world


def copy_dbt_world(world: DbtWorld, target: Path) -> DbtWorld:
    """A private copy of the world's files in ``target`` (must not exist); the PostgreSQL database is shared.

    MLflow's absolute artifact locations are rewritten to the copy (the copied catalogs still name the original
    folder until the mlflow source runs again).
    """
    target = target.resolve()
    shutil.copytree(world.dir, target, ignore=shutil.ignore_patterns("catalog-serve.json", "*.lock"))
    _relocate_mlflow_store(target / world.mlflow_db.name, str(world.dir), str(target))

    def moved(path: Path) -> Path:
        return target / path.relative_to(world.dir)

    def moved_variant(variant: CatalogVariant) -> CatalogVariant:
        return replace(variant, home=moved(variant.home), catalog_db=moved(variant.catalog_db))

    def moved_model(model: DbtModel) -> DbtModel:
        return replace(
            model,
            artifact_uri=model.artifact_uri.replace(str(world.dir), str(target)),
            artifact_path=moved(model.artifact_path),
            mlmodel_path=moved(model.mlmodel_path),
        )

    copied = replace(
        world,
        dir=target,
        project_dir=moved(world.project_dir),
        profiles_dir=moved(world.profiles_dir),
        manifest_path=moved(world.manifest_path),
        catalog_path=moved(world.catalog_path),
        lite=moved_variant(world.lite),
        rest=moved_variant(world.rest),
        mlflow_db=moved(world.mlflow_db),
        mlflow_uri=f"sqlite:///{moved(world.mlflow_db)}",
        artifact_root=moved(world.artifact_root),
        train_csv=moved(world.train_csv),
        holdout_csv=moved(world.holdout_csv),
        fraud=moved_model(world.fraud),
        severity=moved_model(world.severity),
        pricing=moved_model(world.pricing),
        challenger=moved_model(world.challenger),
    )
    mlflow_client(copied)
    return copied


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: python -m tests.realworld.dbt_world DIR [POSTGRES_URL]", file=sys.stderr)
        return 2
    target = Path(argv[0])
    if target.exists() and any(target.iterdir()):
        print(f"{target} is not empty", file=sys.stderr)
        return 2
    cluster = None
    if len(argv) == 2:
        postgres: str | Cluster = argv[1]
    else:
        from tests.postgres import start_cluster

        postgres = cluster = start_cluster()
    try:
        world = build_dbt_world(target, postgres)
    finally:
        if cluster is not None:
            cluster.stop()
    print(f"built in {world.seconds['total']:.1f} s: {world.dir}")
    for name, value in vars(world).items():
        print(f"  {name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
