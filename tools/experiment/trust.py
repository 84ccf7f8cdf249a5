"""Where model bytes and evaluation data may come from: the trust boundary between a catalog writer and this host.

A catalog writer names an artifact, its sha256 and the evaluation data; the hash stops accidents, not a writer, who
can record the hash of any file. So the catalog alone never decides what this host reads or unpickles:

- a local file is read only inside the artifact roots (`PROVENANCE_ARTIFACT_ROOTS`; by default the Provenance home
  and the embedded catalog file's folder, against which relative bindings resolve), after symlinks are resolved;
  never under /proc, /sys, /dev, /etc, /run or /boot, and never a device, FIFO or socket;
- a remote URI is fetched only through the MLflow tracking server the operator configured (`models:/`, `runs:/`,
  `mlflow-artifacts:/`), or when it starts with a URI prefix listed in the roots (`s3://models-bucket/…`);
- when the binding names an MLflow model version and `MLFLOW_TRACKING_URI` is set, the registry vouches: its
  version's own `provenance.artifact_sha256` tag must equal the catalog's, and the version's source folder counts
  as a root for that model's artifact.

Loaders (loading.py): skops files load without unpickling, trusted types only; XGBoost's format is data; joblib and
MLflow's pickle/cloudpickle run code when loaded, which is why their location must be trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from tools.experiment.binding import ARTIFACT_SHA256, MLFLOW_MODEL, MLFLOW_VERSION, BindingError
from tools.settings import ProvenanceSettings, load_settings

ROOTS_ENV = "PROVENANCE_ARTIFACT_ROOTS"
TRACKING_ENV = "MLFLOW_TRACKING_URI"
# Whatever the roots say: kernel and device interfaces, host configuration and secrets.
SYSTEM_FOLDERS = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/etc", "/run", "/boot", "/var/run"))
# Schemes MLflow resolves through the configured tracking server (never an address the catalog chose).
TRACKING_SCHEMES = ("models", "runs", "mlflow-artifacts")


@dataclass(frozen=True)
class ArtifactRoots:
    """The folders (resolved) and remote URI prefixes model bytes and evaluation data may come from."""

    folders: tuple[Path, ...]
    uri_prefixes: tuple[str, ...] = ()
    source: str = "default"  # how they were chosen, for messages

    def describe(self) -> str:
        listed = [str(f) for f in self.folders] + list(self.uri_prefixes)
        return f"{', '.join(listed) or 'none'} ({self.source})"

    def with_folder(self, folder: Path) -> ArtifactRoots:
        return ArtifactRoots((*self.folders, _real(folder)), self.uri_prefixes, self.source)


def parse_roots(text: str | None, defaults: list[Path]) -> ArtifactRoots:
    """`PROVENANCE_ARTIFACT_ROOTS`: comma-separated folders and URI prefixes (commas, since `s3://…` has colons).
    Unset or blank: `defaults`. A relative folder is taken from the current directory."""
    if text is None or not text.strip():
        return ArtifactRoots(tuple(_real(p) for p in defaults), (), f"default; set {ROOTS_ENV} to change")
    folders: list[Path] = []
    prefixes: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        scheme = urlparse(item).scheme
        if scheme in ("", "file") or len(scheme) == 1:
            folders.append(_real(Path(item.removeprefix("file://")).expanduser()))
        else:
            prefixes.append(item if item.endswith("/") else item + "/")  # s3://bucket never matches s3://bucket-evil
    return ArtifactRoots(tuple(folders), tuple(prefixes), ROOTS_ENV)


def configured_roots(base_dir: Path | None = None, settings: ProvenanceSettings | None = None) -> ArtifactRoots:
    """The roots the environment sets; by default the home and the catalog file's folder (`base_dir`, against which
    relative bindings resolve; the settings' embedded catalog folder when not given)."""
    settings = settings or load_settings()
    defaults = [settings.home, base_dir if base_dir is not None else settings.lite_db.parent]
    return parse_roots(settings.provenance_artifact_roots, list(dict.fromkeys(defaults)))


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path.expanduser()))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def check_local(
    path: Path, roots: ArtifactRoots, what: str, code: str, *, extra: tuple[Path, ...] = (), hint: str = ""
) -> Path:
    """`path` if reading it is allowed (an absent file is allowed here: the loader says it is missing)."""
    real = _real(path)
    if any(_inside(real, folder) for folder in SYSTEM_FOLDERS):
        raise BindingError(
            "untrusted_location",
            f"{what} {path} resolves into a system folder ({real.parent}); Provenance never reads files there. "
            f"Bind a file under the artifact roots ({roots.describe()})",
        )
    if not any(_inside(real, folder) for folder in (*roots.folders, *extra)):
        via = f" (a link to {real})" if real != Path(os.path.abspath(path)) else ""
        raise BindingError(
            "untrusted_location",
            f"{what} {path}{via} is outside the artifact roots {roots.describe()}: a catalog entry cannot make "
            f"Provenance read or load files elsewhere. Move the file under a root, or add its folder to {ROOTS_ENV}"
            f"{hint}",
        )
    with contextlib.suppress(FileNotFoundError):
        mode = real.stat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise BindingError(code, f"{what} {path} is not a regular file; bind a file")
    return path


def untrusted_hint(custom_properties: dict[str, str], artifact_uri: str) -> str:
    """What else would vouch for the files: the registry, when the binding names a version but none is set."""
    if registry_version(custom_properties, artifact_uri) is None or os.environ.get(TRACKING_ENV, "").strip():
        return ""
    return f"; or set {TRACKING_ENV} so the MLflow registry vouches for the model version the binding names"


def check_remote(uri: str, roots: ArtifactRoots, what: str) -> None:
    """A non-local URI may be fetched: the configured MLflow server's schemes, or a listed prefix."""
    scheme = urlparse(uri).scheme
    if scheme in TRACKING_SCHEMES or any(uri.startswith(prefix) for prefix in roots.uri_prefixes):
        return
    raise BindingError(
        "untrusted_location",
        f"{what} {uri} is not under the artifact roots {roots.describe()}: only the configured MLflow tracking "
        f"server's URIs ({', '.join(s + ':' for s in TRACKING_SCHEMES)}) and listed prefixes are fetched. Add its "
        f"bucket or folder (e.g. {scheme}://bucket/models/) to {ROOTS_ENV}",
    )


# --- the registry vouches -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RegistryVouch:
    """What the MLflow registry says of the binding's model version."""

    where: str  # "MLflow model fraud 3 at sqlite:///…"
    source: str  # the version's source: its files' URI or path
    sha256: str | None  # the version's own provenance.artifact_sha256 tag, when it has one
    models_uri: str
    folders: tuple[Path, ...] = field(default=())  # the version's local source folder, when it is local
    data_uris: tuple[str, ...] = field(default=())  # where the version's run logged its input datasets


def registry_version(custom_properties: dict[str, str], artifact_uri: str) -> tuple[str, str] | None:
    """(name, version) the binding names: its provenance.mlflow_model/_version keys, or a models:/NAME/VERSION URI."""
    name = (custom_properties.get(MLFLOW_MODEL) or "").strip()
    version = (custom_properties.get(MLFLOW_VERSION) or "").strip()
    if name and version:
        return name, version
    parsed = urlparse(artifact_uri)
    parts = [p for p in (parsed.netloc + parsed.path).split("/") if p]
    if parsed.scheme == "models" and len(parts) == 2 and parts[1].isdigit():
        return parts[0], parts[1]
    return None


def vouch(custom_properties: dict[str, str], artifact_uri: str) -> RegistryVouch | None:
    """The registry's word on the binding's version; None when the binding names none or no tracking URI is set.
    A registry that cannot be read is INCOMPLETE (`registry_unavailable`), never a silent fallback to the catalog."""
    named = registry_version(custom_properties, artifact_uri)
    tracking = os.environ.get(TRACKING_ENV, "").strip()
    if named is None or not tracking:
        return None
    name, version = named
    where = f"MLflow model {name} version {version} at {tracking}"
    try:
        from mlflow import MlflowClient
    except ImportError as exc:
        raise BindingError(
            "registry_unavailable",
            f"{TRACKING_ENV} is set but MLflow is not installed to ask {where} for the artifact's hash; "
            "install provenance[mlflow] or unset MLFLOW_TRACKING_URI",
        ) from exc
    try:
        # A sqlite:// store makes ./mlruns in the current directory when the client is built: not in the user's.
        with tempfile.TemporaryDirectory(prefix="provenance-mlflow-") as scratch, contextlib.chdir(scratch):
            client: Any = MlflowClient(tracking_uri=tracking)
        found: Any = client.get_model_version(name, version)
    except Exception as exc:  # MLflow raises its own, OSError, HTTP errors…
        text = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise BindingError(
            "registry_unavailable",
            f"{where} could not be read to check the artifact against the registry ({text}); the catalog's hash "
            "alone is not trusted while the registry is configured",
        ) from exc
    source = str(found.source or "")
    tags = dict(found.tags or {})
    folders: tuple[Path, ...] = ()
    scheme = urlparse(source).scheme
    if source and (scheme in ("", "file") or len(scheme) == 1):
        folders = (_real(Path(source.removeprefix("file://"))),)
    digest = (tags.get(ARTIFACT_SHA256) or "").strip().lower() or None
    data = _logged_inputs(client, found.run_id, where) if found.run_id else ()
    return RegistryVouch(where, source, digest, f"models:/{name}/{version}", folders, data)


def _logged_inputs(client: Any, run_id: str, where: str) -> tuple[str, ...]:
    """The sources of the datasets the version's run logged (mlflow.log_input): `provenance bind` takes the
    evaluation data from there, so the registry vouches for them as it does for the model's files."""
    try:
        run: Any = client.get_run(run_id)
    except Exception as exc:  # MLflow raises its own, OSError, HTTP errors…
        text = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise BindingError("registry_unavailable", f"the run {run_id} of {where} could not be read ({text})") from exc
    inputs = getattr(getattr(run, "inputs", None), "dataset_inputs", None) or []
    return tuple(uri for item in inputs if (uri := source_uri(item.dataset.source)) is not None)


def source_uri(source: str | None) -> str | None:
    """The location in an MLflow dataset source's JSON: `uri` (files, artifact repositories), `url` (HTTP), `path`."""
    try:
        parsed = json.loads(source or "")
    except json.JSONDecodeError:
        return None
    if not isinstance(parsed, dict):
        return None
    for key in ("uri", "url", "path"):
        value = parsed.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def check_vouched_hash(catalog_sha256: str, vouched: RegistryVouch | None) -> None:
    if vouched is None or vouched.sha256 is None or vouched.sha256 == catalog_sha256:
        return
    raise BindingError(
        "hash_disagrees",
        f"the catalog records {ARTIFACT_SHA256} {catalog_sha256[:12]}…, but {vouched.where} records "
        f"{vouched.sha256[:12]}…; nothing was loaded. If the version was re-bound, re-ingest it into DataHub "
        "(or run `provenance bind` again)",
    )
