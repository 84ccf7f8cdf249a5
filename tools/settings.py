"""Environment-driven settings shared by the CLI, the agent and the chat (documented in the README)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from tools.errors import BadRequest
from tools.runtime.lanes import BULK_IN_FLIGHT


class ProvenanceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", extra="ignore", frozen=True)

    provenance_home: Path = Field(default=Path(".provenance"), description="Runs, catalog, checkpoints, traces.")
    provenance_catalog: Literal["embedded", "datahub"] = Field(
        default="embedded", description="embedded = DataHub Lite file behind the local endpoint; datahub = a real GMS."
    )
    provenance_lite_db: Path | None = Field(default=None, description="Overrides $PROVENANCE_HOME/catalog.db.")
    datahub_gms_url: str | None = Field(default=None, description="A real GMS (PROVENANCE_CATALOG=datahub).")
    datahub_gms_token: str | None = Field(default=None, description="Token for DATAHUB_GMS_URL.")
    provenance_catalog_url: str | None = Field(
        default=None,
        description="A running mcp-server-datahub over streamable HTTP (what `provenance catalog serve` prints), "
        "read through instead of starting one; its endpoint is DATAHUB_GMS_URL / DATAHUB_GMS_TOKEN.",
    )
    provenance_database_url: str | None = Field(
        default=None,
        description="postgresql://… : LangGraph checkpoints and chat history in PostgreSQL (many instances); "
        "unset: SQLite files in $PROVENANCE_HOME.",
    )
    provenance_artifact_roots: str | None = Field(
        default=None,
        description="Comma-separated folders and remote URI prefixes model artifacts and evaluation data may be "
        "read from (tools/experiment/trust.py); unset: $PROVENANCE_HOME and the embedded catalog file's folder. "
        "MLflow's models:/, runs:/ and mlflow-artifacts:/ URIs are always fetched through MLFLOW_TRACKING_URI.",
    )
    provenance_skops_trusted: str | None = Field(
        default=None,
        description="Comma-separated types a skops artifact may hold beyond skops' default trusted types (e.g. "
        "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor); unset: the defaults only.",
    )
    provenance_sample_half_width: float = Field(
        default=0.005,
        ge=0,
        lt=0.5,
        description="Flip-rate 95% CI half-width the evaluation sample is sized for (0.005 = 0.5 points, "
        "38,415 rows); larger evaluation data is sampled, stratified by label. 0 disables sampling.",
    )
    provenance_sample_seed: int = Field(default=1402, description="Seed of the evaluation-data sample.")
    provenance_workers: int | None = Field(
        default=None, ge=1, description="Experiment jobs run at once (threads or processes); unset: the number of CPUs."
    )
    provenance_catalog_bulk_calls: int = Field(
        default=BULK_IN_FLIGHT,
        ge=1,
        description="Batch (non-interactive) MCP calls in flight per catalog session; a person's catalog question "
        "skips this queue (tools/runtime/lanes.py).",
    )
    provenance_checkpoint_connections: int = Field(
        default=4,
        ge=1,
        description="SQLite connections of the checkpointer: conversations saving at once before one waits "
        "(tools/runtime/checkpoint_pool.py); PostgreSQL uses its own pool.",
    )
    provenance_cluster: str | None = Field(
        default=None,
        description="A Dask scheduler address (e.g. tcp://10.0.0.5:8786) a tolerance scan's doses run on "
        "(tools/runtime/cluster.py); unset: threads of this process.",
    )
    provenance_service: Literal["auto", "off"] = Field(
        default="auto",
        description="auto: a command that reads the catalog leaves a warm local service for this home behind (the "
        "catalog endpoint, its MCP server, the assessment service), which later commands use; off (and CI=true): "
        "everything runs in each command's process.",
    )
    provenance_service_idle: int = Field(
        default=900, ge=10, description="Seconds without a request after which the warm local service exits."
    )
    provenance_warehouse_url: str | None = Field(
        default=None,
        description="A SQLAlchemy URL of the warehouse (or duckdb:///file.duckdb): derivations checked on real rows, "
        "union branch counts, re-runs of a dataset's SQL, and `provenance diff`'s two sides.",
    )
    provenance_tasks: str | None = Field(
        default=None,
        description="Comma-separated Python modules that each register an ML task beyond binary, multiclass and "
        "regression (tools/task_registry.py); a model is bound to one with provenance.task=<its name>.",
    )
    provenance_mcp_forkserver: str | None = Field(
        default=None,
        description="The socket of a running fork server MCP servers are forked from, warm "
        "(tools/catalog/mcp_forkserver.py); unset: each MCP server is a new process.",
    )
    provenance_cli_forkserver: str | None = Field(
        default=None,
        description="The socket of a running `python -m agent.cli.forkserver SOCKET`: each `provenance` command is "
        "forked from it, its libraries already imported (agent/cli/forkserver.py); unset, or a command whose "
        "interpreter or environment differs: each command is a new process. Read by the command before settings "
        "load.",
    )
    provenance_executor: Literal["auto", "thread", "process"] = Field(
        default="auto",
        description="Where experiment jobs run: a thread pool, a pool of worker processes, or auto (processes "
        "in the chat, threads in one-shot CLI commands).",
    )

    @property
    def home(self) -> Path:
        return self.provenance_home.expanduser().resolve()

    @property
    def lite_db(self) -> Path:
        return (self.provenance_lite_db or self.home / "catalog.db").expanduser().resolve()

    @property
    def database_url(self) -> str | None:
        """PROVENANCE_DATABASE_URL, or None (also when set but empty): the embedded SQLite files."""
        url = (self.provenance_database_url or "").strip()
        return url or None

    @property
    def workers(self) -> int:
        """PROVENANCE_WORKERS, or the number of CPUs: the experiment's thread pool size."""
        return self.provenance_workers or os.cpu_count() or 1

    def executor_kind(self, long_lived: bool) -> Literal["thread", "process"]:
        """PROVENANCE_EXECUTOR, with auto resolved: worker processes for a long-lived server (the chat), where
        their start (~2-3 s of imports, once) pays off; threads for a one-shot command, which would pay it every
        time."""
        if self.provenance_executor == "auto":
            return "process" if long_lived else "thread"
        return self.provenance_executor

    @property
    def cluster(self) -> str | None:
        """PROVENANCE_CLUSTER, or None (also when set but empty)."""
        return (self.provenance_cluster or "").strip() or None

    @property
    def warm_service(self) -> bool:
        """Whether commands leave a warm service behind: PROVENANCE_SERVICE=auto, not in CI, the embedded catalog."""
        in_ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
        return (
            self.provenance_service == "auto"
            and not in_ci
            and self.provenance_catalog == "embedded"
            and not self.provenance_catalog_url
        )

    @property
    def warehouse_url(self) -> str | None:
        """PROVENANCE_WAREHOUSE_URL, or None (also when set but empty)."""
        return (self.provenance_warehouse_url or "").strip() or None

    @property
    def task_modules(self) -> tuple[str, ...]:
        """PROVENANCE_TASKS' module names."""
        return tuple(m.strip() for m in (self.provenance_tasks or "").split(",") if m.strip())

    @property
    def forkserver(self) -> str | None:
        """PROVENANCE_MCP_FORKSERVER, or None (also when set but empty)."""
        return (self.provenance_mcp_forkserver or "").strip() or None

    @property
    def logs(self) -> Path:
        return self.home / "logs"


class SettingsError(BadRequest, ValueError):
    """An environment variable Provenance reads holds a value it cannot use; the message names it and the rule."""


def load_settings() -> ProvenanceSettings:
    try:
        return ProvenanceSettings()
    except ValidationError as exc:
        problems = "; ".join(
            f"{str(e['loc'][0]).upper() if e['loc'] else 'a setting'}={e.get('input')!r}: {e['msg']}"
            for e in exc.errors()
        )
        raise SettingsError(f"{problems} (see the README's configuration table)") from None
