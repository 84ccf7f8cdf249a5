"""MLflow's model registry, read and tagged through MLflow's own client (imported lazily: `provenance[mlflow]`).

A model is named the way people name it: the registered name (`credit_default`), the name and version as
DataHub's `mlflow` source names the DataHub model (`credit_default_1`), or that model's URN
(`urn:li:mlModel:(urn:li:dataPlatform:mlflow,credit_default_1,PROD)`).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import logging
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any

from tools.errors import BadRequest, ServiceFailure
from tools.experiment.trust import source_uri

log = logging.getLogger(__name__)

TRACKING_ENV = "MLFLOW_TRACKING_URI"
CONTEXT_TAG = "mlflow.data.context"  # what mlflow.log_input(..., context=…) records
EVAL_CONTEXTS = ("eval", "evaluation", "test", "testing", "holdout", "validation")
PRODUCTION_STAGE = "Production"
# The version's registered-model aliases, written by `bind` as a model-version tag: DataHub's mlflow source copies
# version tags into customProperties (it records no aliases itself), where conventions.yaml's alias_properties
# read them, so an alias marks production without MLflow access at assessment time.
ALIASES_TAG = "provenance.aliases"
MLFLOW_PLATFORM = "mlflow"

_URN = re.compile(r"^urn:li:mlModel:\(urn:li:dataPlatform:(?P<platform>[^,]+),(?P<name>.+),(?P<env>[^,()]+)\)$")
_NAME_VERSION = re.compile(r"^(?P<name>.+)_(?P<version>\d+)$")


class RegistryError(BadRequest, ValueError):
    """Bad input, or a refusal: the CLI prints it and exits 2; nothing was written."""


class RegistryUnavailable(ServiceFailure, RuntimeError):
    """MLflow is not installed, or its tracking store could not be read."""

    service = "MLflow registry"


@dataclass(frozen=True)
class ModelRef:
    """What the user typed, split: a DataHub URN gives its name part (and env); a version may be in the name."""

    given: str
    name: str
    urn: str | None = None
    env: str = "PROD"

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        text = text.strip()
        if not text:
            raise RegistryError("name the model: its MLflow registered name, name_version, or DataHub mlModel URN")
        if text.startswith("urn:"):
            match = _URN.match(text)
            if match is None:
                raise RegistryError(
                    f"{text!r} is not an mlModel URN; expected "
                    "urn:li:mlModel:(urn:li:dataPlatform:mlflow,<name>_<version>,PROD)"
                )
            if match["platform"] != MLFLOW_PLATFORM:
                raise RegistryError(
                    f"{text} is a {match['platform']} model; `provenance bind` binds models registered in MLflow "
                    "(platform mlflow). Set the provenance.* custom properties on it in DataHub instead"
                )
            return cls(given=text, name=match["name"], urn=text, env=match["env"])
        return cls(given=text, name=text)


@dataclass(frozen=True)
class ModelVersionInfo:
    name: str
    version: str
    stage: str
    source: str  # where MLflow says the model's files are (a path, file://, runs:/, mlflow-artifacts:/, …)
    run_id: str | None
    tags: dict[str, str]
    chosen: str  # why this version: "--version 2", "the version in stage Production", …
    aliases: tuple[str, ...] = ()  # the registered model's aliases that point at this version

    @property
    def models_uri(self) -> str:
        return f"models:/{self.name}/{self.version}"

    def datahub_urn(self, env: str = "PROD") -> str:
        """The DataHub model DataHub's `mlflow` source writes for this version (default separator `_`)."""
        return f"urn:li:mlModel:(urn:li:dataPlatform:{MLFLOW_PLATFORM},{self.name}_{self.version},{env})"


@dataclass(frozen=True)
class LoggedInput:
    """A dataset logged on a run with `mlflow.log_input`."""

    name: str
    context: str | None
    source_type: str
    uri: str | None  # from the source JSON (uri / url / path), when there is one
    columns: list[str] = field(default_factory=list)

    @property
    def held_out(self) -> bool:
        return (self.context or "").strip().lower() in EVAL_CONTEXTS


def _mlflow() -> Any:
    try:
        import mlflow
        from mlflow import MlflowClient
    except ImportError as exc:
        raise RegistryUnavailable(
            "MLflow is not installed; install provenance[mlflow] (pip install 'provenance[mlflow]')"
        ) from exc
    return mlflow, MlflowClient


def _not_found(exc: Exception) -> bool:
    return getattr(exc, "error_code", None) == "RESOURCE_DOES_NOT_EXIST"


class MlflowRegistry:
    """One tracking URI's model registry."""

    def __init__(self, tracking_uri: str) -> None:
        _, client_class = _mlflow()
        self.tracking_uri = tracking_uri
        # The client builds its store now, and a sqlite:// store makes its default artifact root ./mlruns in the
        # current directory (MLflow caches the store per URI): build it in a scratch folder, not the user's.
        with tempfile.TemporaryDirectory(prefix="provenance-mlflow-") as scratch, contextlib.chdir(scratch):
            self.client = client_class(tracking_uri=tracking_uri)

    # ------------------------------------------------------------------------------------------- reads
    def _registered_names(self) -> list[str]:
        """Every registered model's name (for a did-you-mean); empty when the registry cannot list them."""
        try:
            return [m.name for m in self.client.search_registered_models(max_results=1000)]
        except Exception as exc:  # the lookup already failed with a clear message; a suggestion is a bonus
            log.warning("could not list the registered models to suggest a name: %s", exc)
            return []

    def _registered(self, name: str) -> Any | None:
        try:
            return self.client.get_registered_model(name)
        except Exception as exc:
            if _not_found(exc):
                return None
            raise RegistryUnavailable(f"MLflow at {self.tracking_uri} could not be read: {exc}") from exc

    def find_version(self, ref: ModelRef, version: str | None) -> ModelVersionInfo:
        """The registered model version `ref` and `--version` name; else the one in stage Production; else the
        latest (and `chosen` says which rule applied)."""
        name, implied = ref.name, None
        registered = self._registered(name)
        if registered is None:
            match = _NAME_VERSION.match(name)
            if match is not None:
                registered = self._registered(match["name"])
                if registered is not None:
                    name, implied = match["name"], match["version"]
        if registered is None:
            close = difflib.get_close_matches(ref.name, self._registered_names(), n=3, cutoff=0.6)
            guess = f"; did you mean {', '.join(close)}?" if close else ""
            raise RegistryError(
                f"no registered model {ref.name!r} in MLflow at {self.tracking_uri}{guess} "
                "(give the registered name, name_version, or the DataHub mlModel URN)"
            )
        if version is not None and implied is not None and str(version) != implied:
            raise RegistryError(f"{ref.given} names version {implied}, but --version says {version}")
        wanted = str(version) if version is not None else implied
        if wanted is not None:
            chosen = f"--version {wanted}" if version is not None else f"version {wanted} from {ref.given}"
            return self._version(name, wanted, chosen)
        latest = list(getattr(registered, "latest_versions", None) or [])
        if not latest:
            raise RegistryError(f"registered model {name!r} has no versions in MLflow at {self.tracking_uri}")
        production = [v for v in latest if v.current_stage == PRODUCTION_STAGE]
        if production:
            pick = max(production, key=lambda v: int(v.version))
            return self._version(name, str(pick.version), f"the version in stage {PRODUCTION_STAGE}")
        pick = max(latest, key=lambda v: int(v.version))
        return self._version(
            name, str(pick.version), f"the latest version: no version of {name} is in stage {PRODUCTION_STAGE}"
        )

    def _version(self, name: str, version: str, chosen: str) -> ModelVersionInfo:
        try:
            mv = self.client.get_model_version(name, version)
        except Exception as exc:
            if _not_found(exc):
                raise RegistryError(f"registered model {name!r} has no version {version}") from exc
            raise RegistryUnavailable(f"MLflow at {self.tracking_uri} could not be read: {exc}") from exc
        return ModelVersionInfo(
            name=name,
            version=str(mv.version),
            stage=str(mv.current_stage or "None"),
            source=str(mv.source or ""),
            run_id=mv.run_id or None,
            tags=dict(mv.tags or {}),
            chosen=chosen,
            aliases=tuple(sorted(str(a) for a in (getattr(mv, "aliases", None) or []))),
        )

    def run_inputs(self, run_id: str) -> list[LoggedInput]:
        try:
            run = self.client.get_run(run_id)
        except Exception as exc:
            if _not_found(exc):
                return []
            raise RegistryUnavailable(f"MLflow at {self.tracking_uri} could not read run {run_id}: {exc}") from exc
        inputs = getattr(run, "inputs", None)
        return [_logged_input(item) for item in (getattr(inputs, "dataset_inputs", None) or [])]

    def version_tags(self, name: str, version: str) -> dict[str, str]:
        return self._version(name, version, "").tags

    # ------------------------------------------------------------------------------------------ writes
    def set_tags(self, name: str, version: str, tags: dict[str, str]) -> None:
        for key, value in tags.items():
            self.client.set_model_version_tag(name, version, key, value)


def _logged_input(item: Any) -> LoggedInput:
    dataset = item.dataset
    tags = {tag.key: tag.value for tag in (item.tags or [])}
    return LoggedInput(
        name=str(dataset.name),
        context=tags.get(CONTEXT_TAG),
        source_type=str(dataset.source_type or ""),
        uri=source_uri(dataset.source),
        columns=_schema_columns(dataset.schema),
    )


def _schema_columns(schema: str | None) -> list[str]:
    try:
        parsed = json.loads(schema or "")
    except json.JSONDecodeError:
        return []
    specs = parsed.get("mlflow_colspec") if isinstance(parsed, dict) else None
    return [str(s["name"]) for s in specs or [] if isinstance(s, dict) and "name" in s]
