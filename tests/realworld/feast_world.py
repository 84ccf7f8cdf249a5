"""A third test world, on the Feast stack, written by real tools only: PostgreSQL, the Feast CLI and SDK, MLflow and
DataHub's own ``feast`` ingestion source.

- PostgreSQL (the database given): ``public.driver_hourly_stats`` (conv_rate, acc_rate, avg_daily_trips),
  ``public.driver_profile`` (years_active, rating) and the entity/label table ``public.driver_labels`` (churned),
  seeded synthetic drivers whose churn depends strongly on conv_rate.
- ``postgres_repo/`` (copied from tests/realworld/feast_project/postgres_repo, its ``feature_store.yaml`` filled in
  with the server's connection): a Feast repository with the PostgreSQL offline store, entity ``driver``, the
  feature views ``driver_hourly_stats`` and ``driver_profile`` (``PostgreSQLSource(table=...)``), ``driver_trips``
  (``PostgreSQLSource(query=...)``) and the feature service ``driver_activity_v1`` (conv_rate, acc_rate,
  avg_daily_trips, years_active, rating); ``file_repo/``: one feature view over ``data/driver_hourly_stats.parquet``
  (a ``FileSource``) and the feature service ``driver_activity_file``. Both applied with ``feast apply``
  (registry ``data/registry.db``); ``registry-dump.json`` in each is ``feast registry-dump``'s output, and
  ``feast-mcps.json`` what DataHub's ``feast`` source wrote through a ``file`` sink (``feast-report.json``: its
  report, the join's row count and the Feast process's timings).

What DataHub's ``feast`` source (acryl-datahub 1.7.0.17) writes, per feature view ``<project>.<view>``: an
mlPrimaryKey per entity, an mlFeature per feature (mlFeatureProperties.sources = the batch source's dataset URN)
and an mlFeatureTable (mlFeatureTableProperties, browsePaths; plus a browsePathsV2 MCP); nothing for feature
services or data sources. It knows File, BigQuery, Snowflake, Kafka, Kinesis and Request sources only: every
PostgreSQLSource, table or query, becomes ``urn:li:dataset:(urn:li:dataPlatform:unknown,unknown,PROD)``; the
FileSource ``data/driver_hourly_stats.parquet`` becomes ``urn:li:dataset:(urn:li:dataPlatform:file,
data.driver_hourly_stats.parquet,PROD)``. The PostgreSQL table or query is in the registry only (registry-dump:
``batchSource.customOptions.configuration``, base64 of ``{"name", "query", "table"}``; see
:func:`read_registry_dump`).
- ``train.csv`` / ``holdout.csv``: Feast's point-in-time join (``get_historical_features`` of the feature service
  over ``driver_labels``), split 70/30, columns the five features and ``churned``.
- ``file_train.csv`` / ``file_holdout.csv``: the same for the file repo: the join of ``driver_activity_file``
  (conv_rate, acc_rate, avg_daily_trips) by Feast's file offline store over the same labels, given as a pandas
  DataFrame (``file_entity_df.parquet``, read back in the Feast process), split with the same seed (the same rows).
- ``mlflow.db`` + ``mlruns/``: an MLflow tracking store and registry with four scikit-learn pipelines, in the
  experiment ``driver_churn``: ``driver_churn`` v1 (stage Production) and ``driver_churn_challenger`` v1 (stage
  Staging) trained on train.csv, each logging its training input (``driver_activity_v1``, context training) and the
  holdout (``driver_activity_v1_holdout``, context eval); ``driver_churn_files`` v1 (stage Production) and
  ``driver_churn_files_challenger`` v1 (stage Staging, C=0.05) trained on file_train.csv, each logging
  ``driver_activity_file`` (training) and ``driver_activity_file_holdout`` (eval). For the champion and for
  driver_churn_files the world holds the flip rate of conv_rate x 100 on its holdout, by hand.

Feast cannot be installed into .venv (feast 0.67 pins pandas<3): :func:`feast_executable` installs it, with
acryl-datahub (whose ``feast`` source needs Feast), into its own venv ``.venv/feast-cli`` from the exact pins of
``feast_requirements.txt`` the first time (with uv: a few seconds), or takes ``$PROVENANCE_FEAST`` (the ``feast``
executable of another venv with both installed: its ``python`` runs the steps).

Each repository's definitions file appends a line to ``data/imports.log`` whenever it is imported: ``feast apply``
does, and the log is emptied afterwards, so a line there later means some tool executed the repository's code
(``feast registry-dump`` and DataHub's ``feast`` source do not: the build checks it).

``python -m tests.realworld.feast_world DIR [POSTGRES_URL]`` builds it standalone, for looking at it (without a URL
it starts a throw-away PostgreSQL server and stops it at the end).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, chdir, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

os.environ.setdefault("DATAHUB_TELEMETRY_ENABLED", "false")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tests.realworld.tool_venv import tool_executable
from tests.realworld.world import _local_path, _mlflow_uris, dataset_urn, model_group_urn, model_urn  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROJECT_SOURCE = HERE / "feast_project"
REQUIREMENTS = HERE / "feast_requirements.txt"
FEAST_VENV = REPO / ".venv" / "feast-cli"
FEAST_ENV_VAR = "PROVENANCE_FEAST"

POSTGRES_REPO = "postgres_repo"
FILE_REPO = "file_repo"
POSTGRES_PROJECT = "driver_features"  # the `project:` of each feature_store.yaml: part of every feast URN
FILE_PROJECT = "driver_files"
FEATURE_SERVICE = "driver_activity_v1"
FILE_FEATURE_SERVICE = "driver_activity_file"
STATS_TABLE = "driver_hourly_stats"
PROFILE_TABLE = "driver_profile"
LABEL_TABLE = "driver_labels"
PG_SCHEMA = "public"
STATS_FEATURES = ("conv_rate", "acc_rate", "avg_daily_trips")
PROFILE_FEATURES = ("years_active", "rating")
FEATURES = STATS_FEATURES + PROFILE_FEATURES  # the feature service's order
FILE_FEATURES = STATS_FEATURES  # driver_activity_file's order: the file view's features
LABEL_COLUMN = "churned"
PARQUET = "data/driver_hourly_stats.parquet"  # the file repo's FileSource path, relative to the repository
IMPORT_LOG = "data/imports.log"
UNKNOWN_SOURCE_URN = "urn:li:dataset:(urn:li:dataPlatform:unknown,unknown,PROD)"

# Kept small: Feast's PostgreSQL point-in-time SQL joins its CTEs in nested loops (labels x matching rows), ~1.5 s
# here, where 1500 drivers and TTLs a day longer took ~6 s.
DRIVERS = 1000
FIRST_DRIVER = 1001
SEED = 23
START = datetime(2025, 3, 1, tzinfo=UTC)
STATS_DAYS = (0, 1, 2)  # one driver_hourly_stats row per driver on each of these days (hours 0-9 after midnight)
PROFILE_DAYS = (0, 2)  # one driver_profile row per driver on each of these days
LABEL_DAYS = (1, 2)  # one label per driver on each of these days at LABEL_HOUR; within the views' TTLs (stats 1 day,
LABEL_HOUR = 18  # profile 2 days) the join finds exactly that day's stats and the newest profile (day 0, resp. 2)

EXPERIMENT = "driver_churn"
CHAMPION = "driver_churn"
CHALLENGER = "driver_churn_challenger"
TRAIN_DATASET_NAME = FEATURE_SERVICE
HOLDOUT_DATASET_NAME = f"{FEATURE_SERVICE}_holdout"
FILES_MODEL = "driver_churn_files"  # trained on the file repo's join, in the same experiment
FILES_CHALLENGER = "driver_churn_files_challenger"  # the same data, another C, stage Staging
FILE_TRAIN_DATASET_NAME = FILE_FEATURE_SERVICE
FILE_HOLDOUT_DATASET_NAME = f"{FILE_FEATURE_SERVICE}_holdout"
ENTITY_PARQUET = "file_entity_df.parquet"  # the labels, the file repo's entity dataframe (read back by pandas)
SCALED_FEATURE = "conv_rate"
SCALE = 100.0
THRESHOLD = 0.5

STATS_DDL = (
    f"CREATE TABLE {PG_SCHEMA}.{STATS_TABLE} (driver_id bigint NOT NULL, event_timestamp timestamptz NOT NULL, "
    "created timestamptz NOT NULL, conv_rate double precision NOT NULL, acc_rate double precision NOT NULL, "
    "avg_daily_trips integer NOT NULL, PRIMARY KEY (driver_id, event_timestamp))"
)
PROFILE_DDL = (
    f"CREATE TABLE {PG_SCHEMA}.{PROFILE_TABLE} (driver_id bigint NOT NULL, event_timestamp timestamptz NOT NULL, "
    "created timestamptz NOT NULL, years_active integer NOT NULL, rating double precision NOT NULL, "
    "PRIMARY KEY (driver_id, event_timestamp))"
)
LABEL_DDL = (
    f"CREATE TABLE {PG_SCHEMA}.{LABEL_TABLE} (driver_id bigint NOT NULL, event_timestamp timestamptz NOT NULL, "
    "churned integer NOT NULL, PRIMARY KEY (driver_id, event_timestamp))"
)


@dataclass(frozen=True)
class FeastRepo:
    """One applied Feast repository in the world folder, and the URNs DataHub's ``feast`` source gives its parts."""

    name: str
    path: Path
    project: str
    feature_store_yaml: Path
    registry_db: Path
    registry_dump: Path  # `feast registry-dump`'s JSON output
    mcps: Path  # what DataHub's `feast` source wrote through a `file` sink (a JSON list of MCEs and MCPs)
    import_log: Path  # the canary: empty unless something imported the definitions after `feast apply`
    feature_views: dict[str, tuple[str, ...]]  # feature view -> its features
    source_urns: dict[str, str]  # feature view -> the dataset URN in its features' mlFeatureProperties.sources
    feature_services: dict[str, dict[str, tuple[str, ...]]]  # service -> feature view -> the features it selects
    ingestion: dict[str, Any] = field(default_factory=dict)  # the feast source's report (events, warnings)

    def feature_table_urn(self, view: str) -> str:
        return f"urn:li:mlFeatureTable:(urn:li:dataPlatform:feast,{self.project}.{view})"

    def feature_urn(self, view: str, feature: str) -> str:
        return f"urn:li:mlFeature:({self.project}.{view},{feature})"

    def primary_key_urn(self, view: str, entity: str = "driver") -> str:
        return f"urn:li:mlPrimaryKey:({self.project}.{view},{entity})"


@dataclass(frozen=True)
class FeastModel:
    name: str
    version: str
    stage: str
    urn: str
    group_urn: str
    run_id: str
    artifact_uri: str
    artifact_path: Path
    mlmodel_path: Path
    features: tuple[str, ...]
    holdout_auc: float


@dataclass(frozen=True)
class FeastWorld:
    dir: Path
    postgres_url: str
    database: str
    postgres: FeastRepo
    file: FeastRepo
    feature_service: str
    features: tuple[str, ...]
    label_column: str
    train_csv: Path
    holdout_csv: Path
    mlflow_db: Path
    mlflow_uri: str
    artifact_root: Path
    experiment_name: str
    champion: FeastModel  # driver_churn v1, stage Production
    challenger: FeastModel  # driver_churn_challenger v1, stage Staging
    stats_table_urn: str  # the tables as DataHub's postgres source would name them
    profile_table_urn: str
    mlflow_dataset_urn: str
    holdout_dataset_urn: str
    scaled_feature: str  # the hand-computed change: SCALED_FEATURE * SCALE on the holdout, threshold THRESHOLD
    scale: float
    threshold: float
    flip_rate: float  # the share of holdout rows whose champion prediction flips
    flips: int
    holdout_rows: int
    positive_rate: float  # the champion's share of predicted churn on the unchanged holdout
    # the file repo: Feast's join of driver_activity_file over the same labels (a pandas entity dataframe), split
    # like train/holdout, driver_churn_files v1 (stage Production) and driver_churn_files_challenger v1 (stage
    # Staging) trained on it; the same change by hand (for driver_churn_files)
    file_feature_service: str
    file_features: tuple[str, ...]
    file_train_csv: Path
    file_holdout_csv: Path
    files_model: FeastModel
    files_challenger: FeastModel  # driver_churn_files_challenger v1, stage Staging, on the same file data
    files_dataset_urn: str  # mlflow's datasets driver_activity_file (training) and its holdout (eval)
    files_holdout_dataset_urn: str
    files_flip_rate: float  # the share of file_holdout rows whose driver_churn_files prediction flips
    files_flips: int
    files_holdout_rows: int
    files_positive_rate: float
    row_counts: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def repos(self) -> tuple[FeastRepo, FeastRepo]:
        return (self.postgres, self.file)

    @property
    def models(self) -> tuple[FeastModel, FeastModel]:
        return (self.champion, self.challenger)


# ---------------------------------------------------------------------------------------------------- the Feast venv
def feast_executable() -> Path:
    """The Feast CLI: ``$PROVENANCE_FEAST``, else ``.venv/feast-cli/bin/feast``, installed first when missing or out
    of date (a file lock keeps parallel sessions from installing twice)."""
    return tool_executable(FEAST_VENV, REQUIREMENTS, "feast", FEAST_ENV_VAR, "Feast")


def _feast_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FEAST_", "FEATURE_REPO_", "DATAHUB_", "MLFLOW_"))
        and k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "HOME")
    }
    env.update(
        {
            "HOME": str(home),  # Feast and DataHub keep usage ids and config in ~
            "FEAST_USAGE": "False",
            "DATAHUB_TELEMETRY_ENABLED": "false",
            "PYTHONWARNINGS": "ignore",
        }
    )
    return env


# `feast apply` in every repository given, in one process of the Feast venv: `cli` is the click group the `feast`
# executable runs. Each repository's definitions have their own module name (two `driver_repo` modules would clash
# in one process).
APPLY_DRIVER = """
import json, os, sys
from feast.cli.cli import cli
for repo in json.loads(sys.argv[1]):
    try:
        cli.main(["--chdir", repo, "apply"], prog_name="feast", standalone_mode=False)
    except SystemExit as stop:
        if stop.code:
            sys.exit(f"feast apply in {repo} failed ({stop.code})")
"""

# In a second, fresh process (so that an import of the definitions would show in their canary log), which imports
# Feast and DataHub while `feast apply` runs and starts once it reads "go": for each repository `feast registry-dump`
# (the click command, run in the repository; the same JSON as the executable prints) and DataHub's `feast` source
# with a `file` sink; then the point-in-time join of the feature service over the label table, split 70/30, and the
# same for the file repo's feature service over the labels as a pandas DataFrame.
READ_DRIVER = """
import contextlib, io, json, os, sys, time
clock = time.perf_counter()
import numpy as np
job = json.loads(sys.argv[1])
from feast.cli.cli import cli
from datahub.ingestion.run.pipeline import Pipeline
report = {"ingestions": {}, "seconds": {"import": time.perf_counter() - clock}}
if sys.stdin.readline().strip() != "go":  # the builder says go once `feast apply` is done
    sys.exit("stopped before reading")
clock = time.perf_counter()
for repo in job["repos"]:
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(repo["path"])
    try:
        with contextlib.redirect_stdout(out):
            cli.main(["registry-dump"], prog_name="feast", standalone_mode=False)
    finally:
        os.chdir(cwd)
    text = out.getvalue()
    json.loads(text)
    with open(repo["dump"], "w") as f:
        f.write(text)
    report["seconds"]["dump_" + repo["name"]] = time.perf_counter() - clock
    recipe = {
        "source": {"type": "feast", "config": {"path": repo["path"]}},
        "sink": {"type": "file", "config": {"filename": repo["mcps"]}},
    }
    pipeline = Pipeline.create(recipe, report_to=None)
    pipeline.run()
    pipeline.raise_from_status()
    source = pipeline.source.get_report()
    report["ingestions"][repo["name"]] = {
        "workunits": source.events_produced,
        "warnings": [str(w) for w in source.warnings],
        "sink_warnings": [str(w) for w in pipeline.sink.get_report().warnings],
    }
    report["seconds"]["ingest_" + repo["name"]] = time.perf_counter() - clock

from feast import FeatureStore
import pandas as pd
def join(spec, entity_df, prefix):
    store = FeatureStore(repo_path=spec["repo"])
    service = store.get_feature_service(spec["service"])
    frame = store.get_historical_features(entity_df=entity_df, features=service).to_df()
    frame = frame.sort_values(["driver_id", "event_timestamp"]).reset_index(drop=True)
    columns = spec["features"] + [spec["label"]]
    missing = sorted(set(columns) - set(frame.columns))
    if missing:
        sys.exit(f"the join of {spec['service']} has no columns {missing}")
    report[prefix + "joined_rows"] = len(frame)
    report[prefix + "null_cells"] = int(frame[columns].isna().sum().sum())
    rng = np.random.default_rng(spec["seed"])
    holdout = np.zeros(len(frame), dtype=bool)
    for label in (0, 1):  # stratified: 30% of each class
        rows = np.flatnonzero(frame[spec["label"]].to_numpy() == label)
        holdout[rng.choice(rows, size=round(0.3 * len(rows)), replace=False)] = True
    frame.loc[~holdout, columns].to_csv(spec["train_csv"], index=False)
    frame.loc[holdout, columns].to_csv(spec["holdout_csv"], index=False)
    report["seconds"][prefix + "join"] = time.perf_counter() - clock
join(job["train"], job["train"]["entity_sql"], "")
# the file repo's service over the same labels, given as a pandas DataFrame (the file offline store takes no SQL)
join(job["file_train"], pd.read_parquet(job["file_train"]["entity_parquet"]), "file_")
with open(job["report"], "w") as f:
    json.dump(report, f, indent=2)
"""


def _run_feast_python(
    feast: Path, script: str, argument: Any, home: Path, cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(feast.parent / "python"), "-c", script, json.dumps(argument)],
        cwd=cwd,
        env=_feast_env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"the Feast venv's python failed ({done.returncode}):\n{(done.stdout + done.stderr)[-5000:]}"
        )
    return done


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()


# ---------------------------------------------------------------------------------------------------- PostgreSQL
def driver_frames(drivers: int = DRIVERS, seed: int = SEED) -> dict[str, pd.DataFrame]:
    """Synthetic drivers: hourly stats on days 0-2, a profile on days 0 and 2, a churn label on days 1 and 2 drawn
    from the feature values a point-in-time join gives that label (mostly low conv_rate, some low acc_rate, few trips,
    few years, low rating)."""
    rng = np.random.default_rng(seed)
    ids = np.arange(FIRST_DRIVER, FIRST_DRIVER + drivers)
    # a per-driver level, moved a little each day
    conv_level = rng.beta(2.0, 3.0, drivers)
    acc_level = rng.beta(6.0, 2.0, drivers)
    trips_level = rng.gamma(4.0, 3.0, drivers)
    stats = []
    for day in STATS_DAYS:
        at = START + timedelta(days=day) + pd.to_timedelta(rng.integers(0, 10 * 60, drivers), unit="min")
        stats.append(
            pd.DataFrame(
                {
                    "driver_id": ids,
                    "event_timestamp": at,
                    "created": at + pd.to_timedelta(rng.integers(1, 30, drivers), unit="min"),
                    "conv_rate": np.round(np.clip(conv_level + rng.normal(0, 0.04, drivers), 0.0, 1.0), 4),
                    "acc_rate": np.round(np.clip(acc_level + rng.normal(0, 0.03, drivers), 0.0, 1.0), 4),
                    "avg_daily_trips": np.maximum(0, np.round(trips_level + rng.normal(0, 1.5, drivers))).astype(int),
                    "day": day,
                }
            )
        )
    years_level = rng.integers(0, 15, drivers)
    rating_level = rng.normal(4.3, 0.35, drivers)
    profiles = []
    for day in PROFILE_DAYS:
        at = START + timedelta(days=day) + pd.to_timedelta(rng.integers(0, 10 * 60, drivers), unit="min")
        profiles.append(
            pd.DataFrame(
                {
                    "driver_id": ids,
                    "event_timestamp": at,
                    "created": at + pd.to_timedelta(rng.integers(1, 30, drivers), unit="min"),
                    "years_active": years_level + (day >= 2),
                    "rating": np.round(np.clip(rating_level + rng.normal(0, 0.05, drivers), 1.0, 5.0), 2),
                    "day": day,
                }
            )
        )
    labels = []
    for day in LABEL_DAYS:
        seen_stats = stats[STATS_DAYS.index(day)]  # that day's stats: the newest before LABEL_HOUR
        seen_profile = profiles[max(i for i, d in enumerate(PROFILE_DAYS) if d <= day)]
        logit = (
            -9.0 * (seen_stats["conv_rate"].to_numpy() - 0.4)
            - 3.0 * (seen_stats["acc_rate"].to_numpy() - 0.75)
            - 0.06 * (seen_stats["avg_daily_trips"].to_numpy() - 12)
            - 0.08 * (seen_profile["years_active"].to_numpy() - 7)
            - 1.2 * (seen_profile["rating"].to_numpy() - 4.3)
            - 0.7
        )
        churned = (rng.random(drivers) < 1 / (1 + np.exp(-logit))).astype(int)
        labels.append(
            pd.DataFrame(
                {
                    "driver_id": ids,
                    "event_timestamp": START + timedelta(days=day, hours=LABEL_HOUR),
                    LABEL_COLUMN: churned,
                }
            )
        )
    return {
        STATS_TABLE: pd.concat(stats, ignore_index=True).drop(columns="day"),
        PROFILE_TABLE: pd.concat(profiles, ignore_index=True).drop(columns="day"),
        LABEL_TABLE: pd.concat(labels, ignore_index=True),
    }


def make_tables(postgres_url: str, frames: dict[str, pd.DataFrame]) -> None:
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        for ddl in (STATS_DDL, PROFILE_DDL, LABEL_DDL):
            conn.execute(ddl.encode())
        with conn.cursor() as cur:
            for table, frame in frames.items():
                columns = ", ".join(frame.columns)
                with cur.copy(f"COPY {PG_SCHEMA}.{table} ({columns}) FROM STDIN".encode()) as copy:
                    for row in frame.itertuples(index=False):
                        copy.write_row(tuple(v.item() if isinstance(v, np.generic) else v for v in row))
        for table in frames:
            conn.execute(f"ANALYZE {PG_SCHEMA}.{table}".encode())


def _connection(postgres_url: str) -> dict[str, str]:
    url = urlparse(postgres_url)
    return {
        "FEAST_PG_HOST": url.hostname or "127.0.0.1",
        "FEAST_PG_PORT": str(url.port or 5432),
        "FEAST_PG_DATABASE": url.path.lstrip("/"),
        "FEAST_PG_USER": unquote(url.username or "postgres"),
        "FEAST_PG_PASSWORD": unquote(url.password or ""),
    }


def copy_repos(world_dir: Path, postgres_url: str, stats: pd.DataFrame) -> dict[str, Path]:
    """Copy both repositories into the world, fill in the PostgreSQL connection, write the file repo's parquet."""
    repos = {}
    for name in (POSTGRES_REPO, FILE_REPO):
        target = world_dir / name
        shutil.copytree(PROJECT_SOURCE / name, target, ignore=shutil.ignore_patterns("data", "__pycache__"))
        (target / "data").mkdir()
        repos[name] = target
    yaml = repos[POSTGRES_REPO] / "feature_store.yaml"
    text = yaml.read_text()
    for name, value in _connection(postgres_url).items():
        text = text.replace("${" + name + "}", value)
    yaml.write_text(text)
    stats.to_parquet(repos[FILE_REPO] / PARQUET, index=False)
    return repos


# ---------------------------------------------------------------------------------------------------- MLflow
def _pipeline(c: float) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    return Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(C=c, max_iter=1000))])


def train_models(
    world_dir: Path,
    train_csv: Path,
    holdout_csv: Path,
    mlflow_uri: str,
    files: tuple[Path, Path] | None = None,
) -> dict[str, Any]:
    """Train both pipelines on the joined frame, log them to MLflow, register them and set their stages; with
    ``files`` (the file repo's train and holdout CSVs) also FILES_MODEL (Production) and FILES_CHALLENGER (Staging)
    on those, in the same experiment."""
    import mlflow
    from mlflow import MlflowClient

    artifact_root = world_dir / "mlruns"
    artifact_root.mkdir(parents=True, exist_ok=True)
    postgres = (FEATURES, FEATURE_SERVICE, train_csv, holdout_csv, TRAIN_DATASET_NAME, HOLDOUT_DATASET_NAME)
    # (model, C, stage, (features, feature service, train CSV, holdout CSV, train input name, holdout input name))
    plan: list[tuple[str, float, str, tuple[tuple[str, ...], str, Path, Path, str, str]]] = [
        (CHAMPION, 1.0, "Production", postgres),
        (CHALLENGER, 0.05, "Staging", postgres),
    ]
    if files is not None:
        file_data = (FILE_FEATURES, FILE_FEATURE_SERVICE, *files, FILE_TRAIN_DATASET_NAME, FILE_HOLDOUT_DATASET_NAME)
        plan.append((FILES_MODEL, 1.0, "Production", file_data))
        plan.append((FILES_CHALLENGER, 0.05, "Staging", file_data))
    frames: dict[Path, pd.DataFrame] = {}
    trained: dict[str, Any] = {}
    with _mlflow_uris(mlflow_uri, world_dir):
        client = MlflowClient(tracking_uri=mlflow_uri, registry_uri=mlflow_uri)
        experiment_id = client.create_experiment(EXPERIMENT, artifact_location=artifact_root.as_uri())
        for name, c, stage, (features, service, train_path, holdout_path, train_name, holdout_name) in plan:
            for path in (train_path, holdout_path):
                if path not in frames:
                    frames[path] = pd.read_csv(path)
            train, holdout = frames[train_path], frames[holdout_path]
            run_id, pipeline, auc = _train_one(
                experiment_id,
                name,
                c,
                features,
                service,
                train,
                holdout,
                (str(train_path), train_name),
                (str(holdout_path), holdout_name),
            )
            version = str(client.search_model_versions(f"name = '{name}'")[0].version)
            client.transition_model_version_stage(name, version, stage, archive_existing_versions=False)
            trained[name] = {
                "pipeline": pipeline,
                "version": version,
                "stage": str(client.get_model_version(name, version).current_stage),
                "run_id": run_id,
                "artifact_uri": mlflow.get_run(run_id).info.artifact_uri,
                "auc": auc,
                "features": features,
            }
    return {"artifact_root": artifact_root, "models": trained}


def _train_one(
    experiment_id: str,
    name: str,
    c: float,
    features: tuple[str, ...],
    service: str,
    train: pd.DataFrame,
    holdout: pd.DataFrame,
    train_input: tuple[str, str],
    holdout_input: tuple[str, str],
) -> tuple[str, Any, float]:
    """Fit one pipeline on ``train[features]`` and log it (inputs: (source, name) of the training and eval
    datasets) as a run registering ``name``: its run id, the pipeline and its holdout AUC."""
    import mlflow
    import mlflow.sklearn
    import sklearn
    from mlflow.data.pandas_dataset import from_pandas
    from mlflow.models import infer_signature
    from sklearn.metrics import roc_auc_score

    pipeline = _pipeline(c)
    x_train = train[list(features)]
    pipeline.fit(x_train, train[LABEL_COLUMN])
    auc = float(roc_auc_score(holdout[LABEL_COLUMN], pipeline.predict_proba(holdout[list(features)])[:, 1]))
    with mlflow.start_run(experiment_id=experiment_id, run_name=f"train-{name}") as run:
        mlflow.log_input(from_pandas(train, source=train_input[0], name=train_input[1]), context="training")
        mlflow.log_input(from_pandas(holdout, source=holdout_input[0], name=holdout_input[1]), context="eval")
        mlflow.log_params({"model": "LogisticRegression", "C": c, "feature_service": service})
        mlflow.log_metric("holdout_auc", auc)
        mlflow.sklearn.log_model(
            pipeline,
            "model",
            signature=infer_signature(x_train, pipeline.predict_proba(x_train)),
            registered_model_name=name,
            pip_requirements=[f"scikit-learn=={sklearn.__version__}"],
        )
    return run.info.run_id, pipeline, auc


def flip_rate(pipeline: Any, holdout: pd.DataFrame, features: tuple[str, ...] = FEATURES) -> tuple[float, int, float]:
    """The share (and count) of holdout rows whose prediction at THRESHOLD changes when SCALED_FEATURE is multiplied
    by SCALE, and the share predicted positive before."""
    x = holdout[list(features)]
    before = pipeline.predict_proba(x)[:, 1] >= THRESHOLD
    changed = x.copy()
    changed[SCALED_FEATURE] = changed[SCALED_FEATURE] * SCALE
    after = pipeline.predict_proba(changed)[:, 1] >= THRESHOLD
    flips = int((before != after).sum())
    return flips / len(x), flips, float(before.mean())


def _model(name: str, trained: dict[str, Any]) -> FeastModel:
    artifact_uri = str(trained["artifact_uri"])
    model_dir = _local_path(artifact_uri) / "model"
    return FeastModel(
        name=name,
        version=trained["version"],
        stage=trained["stage"],
        urn=model_urn(name, trained["version"]),
        group_urn=model_group_urn(name),
        run_id=trained["run_id"],
        artifact_uri=artifact_uri,
        artifact_path=model_dir / "model.pkl",
        mlmodel_path=model_dir / "MLmodel",
        features=tuple(trained.get("features", FEATURES)),
        holdout_auc=trained["auc"],
    )


def mlflow_client(world: FeastWorld) -> Any:
    """An ``MlflowClient`` on the world's store, created inside the world's folder (see world.mlflow_client)."""
    from mlflow import MlflowClient

    with chdir(world.dir):
        return MlflowClient(tracking_uri=world.mlflow_uri, registry_uri=world.mlflow_uri)


def _warm_imports() -> None:
    """Import what training needs while the Feast venv works in its own process."""
    import mlflow.sklearn  # noqa: F401
    import sklearn.linear_model  # noqa: F401
    from mlflow.data.pandas_dataset import from_pandas  # noqa: F401
    from mlflow.models import infer_signature  # noqa: F401


# ---------------------------------------------------------------------------------------------------- the world
def read_registry_dump(path: Path) -> dict[str, Any]:
    """The parts of a ``feast registry-dump`` JSON the tests need: each feature view's features and batch source
    (a PostgreSQLSource's ``customOptions.configuration`` is base64 of a JSON object with name, query and table: it
    is decoded here), and each feature service's projections (feature view -> the selected features)."""
    dump = json.loads(path.read_text())
    views: dict[str, Any] = {}
    for view in dump.get("featureViews", []):
        spec = view["spec"]
        source = spec["batchSource"]
        described: dict[str, Any] = {"name": source["name"], "class": source.get("dataSourceClassType", "")}
        if "customOptions" in source:
            described.update(json.loads(base64.b64decode(source["customOptions"]["configuration"])))
        if "fileOptions" in source:
            described["path"] = source["fileOptions"]["uri"]
        views[spec["name"]] = {
            "features": tuple(f["name"] for f in spec.get("features", [])),
            "entities": tuple(spec.get("entities", [])),
            "source": described,
        }
    services = {
        service["spec"]["name"]: {
            projection["featureViewName"]: tuple(f["name"] for f in projection.get("featureColumns", []))
            for projection in service["spec"]["features"]
        }
        for service in dump.get("featureServices", [])
    }
    return {"project": dump.get("project"), "feature_views": views, "feature_services": services}


def read_mcps(path: Path) -> dict[str, dict[str, Any]]:
    """What the ``file`` sink wrote, by URN: aspect name -> aspect (MCE snapshot aspects by their short class
    name, e.g. ``MLFeatureProperties``; MCP aspects by aspectName, e.g. ``browsePathsV2``)."""
    found: dict[str, dict[str, Any]] = {}
    for record in json.loads(path.read_text()):
        if "proposedSnapshot" in record:
            ((_, snapshot),) = record["proposedSnapshot"].items()
            for aspect in snapshot["aspects"]:
                ((kind, value),) = aspect.items()
                found.setdefault(snapshot["urn"], {})[kind.rsplit(".", 1)[-1]] = value
        else:
            found.setdefault(record["entityUrn"], {})[record["aspectName"]] = record["aspect"]["json"]
    return found


def _repo(name: str, path: Path, project: str, ingestion: dict[str, Any]) -> FeastRepo:
    """The repository as `feast registry-dump` describes it, checked against what DataHub's feast source wrote."""
    dump = path / "registry-dump.json"
    registry = read_registry_dump(dump)
    repo = FeastRepo(
        name=name,
        path=path,
        project=project,
        feature_store_yaml=path / "feature_store.yaml",
        registry_db=path / "data" / "registry.db",
        registry_dump=dump,
        mcps=path / "feast-mcps.json",
        import_log=path / IMPORT_LOG,
        feature_views={view: v["features"] for view, v in registry["feature_views"].items()},
        source_urns={view: _source_urn(v["source"]) for view, v in registry["feature_views"].items()},
        feature_services=registry["feature_services"],
        ingestion=ingestion,
    )
    if registry["project"] != project:
        raise RuntimeError(f"{name}: registry-dump names project {registry['project']}, expected {project}")
    written = read_mcps(repo.mcps)
    for view, features in repo.feature_views.items():
        expected = {
            repo.feature_table_urn(view): "MLFeatureTableProperties",
            repo.primary_key_urn(view): "MLPrimaryKeyProperties",
            **{repo.feature_urn(view, f): "MLFeatureProperties" for f in features},
        }
        for urn, aspect in expected.items():
            if aspect not in written.get(urn, {}):
                raise RuntimeError(f"{name}: the feast source wrote no {aspect} for {urn}")
            if aspect != "MLFeatureTableProperties" and written[urn][aspect]["sources"] != [repo.source_urns[view]]:
                raise RuntimeError(f"{name}: {urn} has sources {written[urn][aspect]['sources']}")
    return repo


def _source_urn(source: dict[str, Any]) -> str:
    """The dataset URN DataHub's feast source gives a batch source: FileSource -> platform ``file``, the path with
    "://" and "/" made dots; a PostgreSQLSource (not among the classes it knows) -> ``unknown,unknown``."""
    if "path" in source:
        return dataset_urn("file", source["path"].replace("://", ".").replace("/", "."))
    return UNKNOWN_SOURCE_URN


def build_feast_world(folder: Path, postgres_url: str) -> FeastWorld:
    """Fill the (empty) PostgreSQL database ``postgres_url`` with the driver tables, apply both Feast repositories,
    dump their registries, run DataHub's ``feast`` source on each, join the training frame with Feast, and train,
    log and register the four models."""
    seconds: dict[str, float] = {}
    started = clock = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[step] = round(now - clock, 2)
        clock = now

    world_dir = folder.resolve()
    world_dir.mkdir(parents=True, exist_ok=True)
    feast = feast_executable()
    lap("feast_venv")
    frames = driver_frames()
    make_tables(postgres_url, frames)
    repos = copy_repos(world_dir, postgres_url, frames[STATS_TABLE])
    entity_parquet = world_dir / ENTITY_PARQUET
    frames[LABEL_TABLE].to_parquet(entity_parquet, index=False)
    lap("tables")
    train_csv, holdout_csv = world_dir / "train.csv", world_dir / "holdout.csv"
    file_train_csv, file_holdout_csv = world_dir / "file_train.csv", world_dir / "file_holdout.csv"
    report_path = world_dir / "feast-report.json"
    job = {
        "repos": [
            {
                "name": name,
                "path": str(path),
                "dump": str(path / "registry-dump.json"),
                "mcps": str(path / "feast-mcps.json"),
            }
            for name, path in repos.items()
        ],
        "train": {
            "repo": str(repos[POSTGRES_REPO]),
            "service": FEATURE_SERVICE,
            "entity_sql": f"SELECT driver_id, event_timestamp, {LABEL_COLUMN} FROM {PG_SCHEMA}.{LABEL_TABLE}",
            "features": list(FEATURES),
            "label": LABEL_COLUMN,
            "seed": SEED,
            "train_csv": str(train_csv),
            "holdout_csv": str(holdout_csv),
        },
        "file_train": {
            "repo": str(repos[FILE_REPO]),
            "service": FILE_FEATURE_SERVICE,
            "entity_parquet": str(entity_parquet),
            "features": list(FILE_FEATURES),
            "label": LABEL_COLUMN,
            "seed": SEED,
            "train_csv": str(file_train_csv),
            "holdout_csv": str(file_holdout_csv),
        },
        "report": str(report_path),
    }
    import_logs = {name: path / IMPORT_LOG for name, path in repos.items()}
    with tempfile.TemporaryDirectory(prefix="feast-home-") as home, ExitStack() as stack:
        # The reading process imports Feast and DataHub while `feast apply` runs, then waits for "go" on stdin.
        log = stack.enter_context(open(Path(home) / "read.log", "w+"))
        reading = subprocess.Popen(
            [str(feast.parent / "python"), "-c", READ_DRIVER, json.dumps(job)],
            cwd=world_dir,
            env=_feast_env(Path(home)),
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        stack.callback(_stop, reading)
        _run_feast_python(feast, APPLY_DRIVER, [str(path) for path in repos.values()], Path(home), world_dir)
        for name, import_log in import_logs.items():
            if not import_log.is_file() or not import_log.read_text():
                raise RuntimeError(f"feast apply did not import {name}'s definitions (nothing in {import_log})")
            import_log.write_text("")
        lap("feast_apply")
        assert reading.stdin is not None
        with suppress(BrokenPipeError):  # it failed: its log says why
            reading.stdin.write("go\n")
            reading.stdin.close()
        _warm_imports()
        if reading.wait(timeout=600) != 0:
            log.seek(0)
            raise RuntimeError(f"the Feast venv's python failed ({reading.returncode}):\n{log.read()[-5000:]}")
    report = json.loads(report_path.read_text())
    for name, import_log in import_logs.items():
        if import_log.read_text():
            raise RuntimeError(f"{name}'s definitions were imported after feast apply: {import_log.read_text()}")
    seconds.update({f"feast_{k}": round(v, 2) for k, v in report["seconds"].items()})
    postgres_repo = _repo(POSTGRES_REPO, repos[POSTGRES_REPO], POSTGRES_PROJECT, report["ingestions"][POSTGRES_REPO])
    file_repo = _repo(FILE_REPO, repos[FILE_REPO], FILE_PROJECT, report["ingestions"][FILE_REPO])
    served = tuple(f for features in file_repo.feature_services[FILE_FEATURE_SERVICE].values() for f in features)
    if served != FILE_FEATURES:
        raise RuntimeError(f"{FILE_FEATURE_SERVICE} serves {served}, expected {FILE_FEATURES}")
    lap("registry_dump_ingest_join")
    mlflow_db = world_dir / "mlflow.db"
    mlflow_uri = f"sqlite:///{mlflow_db}"
    trained = train_models(world_dir, train_csv, holdout_csv, mlflow_uri, files=(file_train_csv, file_holdout_csv))
    holdout = pd.read_csv(holdout_csv)
    rate, flips, positive = flip_rate(trained["models"][CHAMPION]["pipeline"], holdout)
    file_holdout = pd.read_csv(file_holdout_csv)
    files_rate, files_flips, files_positive = flip_rate(
        trained["models"][FILES_MODEL]["pipeline"], file_holdout, FILE_FEATURES
    )
    lap("train")
    database = urlparse(postgres_url).path.lstrip("/")
    world = FeastWorld(
        dir=world_dir,
        postgres_url=postgres_url,
        database=database,
        postgres=postgres_repo,
        file=file_repo,
        feature_service=FEATURE_SERVICE,
        features=FEATURES,
        label_column=LABEL_COLUMN,
        train_csv=train_csv,
        holdout_csv=holdout_csv,
        mlflow_db=mlflow_db,
        mlflow_uri=mlflow_uri,
        artifact_root=trained["artifact_root"],
        experiment_name=EXPERIMENT,
        champion=_model(CHAMPION, trained["models"][CHAMPION]),
        challenger=_model(CHALLENGER, trained["models"][CHALLENGER]),
        stats_table_urn=dataset_urn("postgres", f"{database}.{PG_SCHEMA}.{STATS_TABLE}"),
        profile_table_urn=dataset_urn("postgres", f"{database}.{PG_SCHEMA}.{PROFILE_TABLE}"),
        mlflow_dataset_urn=dataset_urn("mlflow", TRAIN_DATASET_NAME),
        holdout_dataset_urn=dataset_urn("mlflow", HOLDOUT_DATASET_NAME),
        scaled_feature=SCALED_FEATURE,
        scale=SCALE,
        threshold=THRESHOLD,
        flip_rate=rate,
        flips=flips,
        holdout_rows=len(holdout),
        positive_rate=positive,
        file_feature_service=FILE_FEATURE_SERVICE,
        file_features=FILE_FEATURES,
        file_train_csv=file_train_csv,
        file_holdout_csv=file_holdout_csv,
        files_model=_model(FILES_MODEL, trained["models"][FILES_MODEL]),
        files_challenger=_model(FILES_CHALLENGER, trained["models"][FILES_CHALLENGER]),
        files_dataset_urn=dataset_urn("mlflow", FILE_TRAIN_DATASET_NAME),
        files_holdout_dataset_urn=dataset_urn("mlflow", FILE_HOLDOUT_DATASET_NAME),
        files_flip_rate=files_rate,
        files_flips=files_flips,
        files_holdout_rows=len(file_holdout),
        files_positive_rate=files_positive,
        row_counts={
            **{table: len(frame) for table, frame in frames.items()},
            "joined": int(report["joined_rows"]),
            "train": int(len(pd.read_csv(train_csv))),
            "holdout": len(holdout),
            "file_joined": int(report["file_joined_rows"]),
            "file_train": int(len(pd.read_csv(file_train_csv))),
            "file_holdout": len(file_holdout),
        },
        seconds={**seconds, "total": round(time.perf_counter() - started, 2)},
    )
    mlflow_client(world)
    return world


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: python -m tests.realworld.feast_world DIR [POSTGRES_URL]", file=sys.stderr)
        return 2
    target = Path(argv[0])
    if target.exists() and any(target.iterdir()):
        print(f"{target} is not empty", file=sys.stderr)
        return 2
    cluster = None
    if len(argv) == 2:
        postgres_url = argv[1]
    else:
        from tests.postgres import start_cluster

        cluster = start_cluster()
        postgres_url = cluster.create_database()
    try:
        world = build_feast_world(target, postgres_url)
    finally:
        if cluster is not None:
            cluster.stop()
    print(f"built in {world.seconds['total']:.1f} s: {world.dir}")
    for name, value in vars(world).items():
        print(f"  {name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
