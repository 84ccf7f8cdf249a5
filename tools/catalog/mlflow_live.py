"""The MLflow model registry's current stage and aliases of the models DataHub's mlflow source ingested.

DataHub's mlflow source (with the MLflow 2.20 client) records no aliases (`versionProperties.aliases` stays empty:
it lists versions with `search_model_versions`, which returns none) and turns the stage into a global tag at
ingestion time. When `MLFLOW_TRACKING_URI` is set, the registry itself is asked, version by version, with
`get_model_version` (which does return aliases): it is the authoritative source of which version is in production.
MLflow is imported lazily (`provenance[mlflow]`); without it, or without the variable, nothing is asked.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Any

from tools.errors import ServiceFailure

TRACKING_ENV = "MLFLOW_TRACKING_URI"
_MLFLOW_MODEL = re.compile(r"^urn:li:mlModel:\(urn:li:dataPlatform:mlflow,(?P<name>.+)_(?P<version>\d+),[^,()]+\)$")


class RegistryReadError(ServiceFailure, RuntimeError):
    """The registry named by MLFLOW_TRACKING_URI could not be read; the message says what to do."""

    service = "MLflow registry"


@dataclass(frozen=True)
class RegistryState:
    where: str  # "MLflow registry at <uri>: <name> version <v>"
    stage: str
    aliases: list[str]


def mlflow_model_version(urn: str) -> tuple[str, str] | None:
    """(registered name, version) of a DataHub model the mlflow source named `<name>_<version>`."""
    match = _MLFLOW_MODEL.match(urn)
    return (match["name"], match["version"]) if match else None


class LiveRegistry:
    """One MLflow registry, asked for the current stage and aliases of model versions."""

    def __init__(self, tracking_uri: str) -> None:
        try:
            from mlflow import MlflowClient
        except ImportError as exc:
            raise RegistryReadError(
                f"{TRACKING_ENV} is set, but MLflow is not installed: install provenance[mlflow], "
                f"or unset {TRACKING_ENV} to rely on the catalog's production markers only"
            ) from exc
        self.tracking_uri = tracking_uri
        # A sqlite:// store makes ./mlruns in the current directory when the client is built: build it elsewhere.
        with tempfile.TemporaryDirectory(prefix="provenance-mlflow-") as scratch, contextlib.chdir(scratch):
            self.client: Any = MlflowClient(tracking_uri=tracking_uri, registry_uri=tracking_uri)

    @classmethod
    def from_environment(cls) -> LiveRegistry | None:
        uri = os.environ.get(TRACKING_ENV, "").strip()
        return cls(uri) if uri else None

    def states(self, model_urns: list[str]) -> dict[str, RegistryState]:
        """The registry's answer for each mlflow model URN it knows (other URNs are left out)."""
        out: dict[str, RegistryState] = {}
        for urn in model_urns:
            parsed = mlflow_model_version(urn)
            if parsed is None:
                continue
            name, version = parsed
            try:
                found = self.client.get_model_version(name, version)
            except Exception as exc:
                if getattr(exc, "error_code", None) == "RESOURCE_DOES_NOT_EXIST":
                    continue  # e.g. `name_1` is version 1 of `name`, or a registered model named `name_1` elsewhere
                raise RegistryReadError(
                    f"MLflow registry at {self.tracking_uri} could not be read for {name} version {version}: {exc}; "
                    f"fix {TRACKING_ENV} or unset it to rely on the catalog's production markers only"
                ) from exc
            out[urn] = RegistryState(
                where=f"MLflow registry at {self.tracking_uri}: {name} version {version}",
                stage=str(found.current_stage or "None"),
                aliases=sorted(str(a) for a in (getattr(found, "aliases", None) or [])),
            )
        return out
