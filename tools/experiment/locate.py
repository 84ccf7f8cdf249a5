"""Finding on this machine the files a model binding names, and resolving the catalog's keys into a ModelBinding.

URIs are the ones people have: a path (absolute, or relative to the catalog file's folder), `file://…`, or any
URI MLflow's artifact repositories handle (`runs:/…`, `models:/…`, `mlflow-artifacts:/…`, `s3://…`), fetched with
`mlflow.artifacts.download_artifacts` into a local cache (MLflow is imported only then). A URI naming an MLflow
model directory (it holds an `MLmodel` file) stands for its model file (flavours.py: sklearn, lightgbm, xgboost).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from pydantic import BaseModel, ConfigDict

from tools.experiment.binding import (
    ARTIFACT_SHA256,
    ARTIFACT_URI,
    DECISION_THRESHOLD,
    EVAL_DATA_URI,
    LABEL_COLUMN,
    MLFLOW_MODEL,
    MLFLOW_RUN_ID,
    MLFLOW_VERSION,
    TASK,
    BindingError,
    ModelBinding,
    missing_keys,
    parse_task,
    parse_threshold,
)
from tools.experiment.flavours import MLMODEL_FILE, model_file
from tools.experiment.trust import (
    ArtifactRoots,
    RegistryVouch,
    check_local,
    check_remote,
    check_vouched_hash,
    configured_roots,
    untrusted_hint,
    vouch,
)

CACHE_FOLDER = "artifact-cache"  # under the catalog file's folder: downloads of non-local URIs


class LocatedArtifact(BaseModel):
    """Where an artifact URI's model file is on this machine, and how it was serialised."""

    model_config = ConfigDict(frozen=True)

    path: Path
    serialization_format: str | None = None
    model_class: str | None = None
    mlflow_model_dir: bool = False


def is_local_uri(uri: str) -> bool:
    """A path or `file://` URI (also `C:\\…`-style paths, whose "scheme" is a drive letter)."""
    scheme = urlparse(uri).scheme
    return scheme in ("", "file") or len(scheme) == 1


def _local_path(uri: str, base_dir: Path) -> Path:
    text = uri.strip()
    if text.startswith("file://"):
        text = unquote(text.removeprefix("file://"))
    elif text.startswith("file:"):  # file:/abs/path
        text = unquote(text.removeprefix("file:"))
    path = Path(text).expanduser()
    # normalised, not resolved: a link stays a link, so the trust check can say where it leads
    return path if path.is_absolute() else Path(os.path.abspath(base_dir / path))


def _download(uri: str, cache_dir: Path, code: str) -> Path:
    """A local copy of a non-local URI, under `cache_dir/<digest of the URI>/` (stable across runs, so evidence
    and replays name the same path). Fetched again every time: the cache only names the place."""
    try:
        from mlflow.artifacts import download_artifacts
    except ImportError as exc:
        raise BindingError(
            "unresolvable_uri",
            f"{uri} is not a local path and MLflow is not installed to fetch it; install provenance[mlflow] "
            "(pip install 'provenance[mlflow]') and set MLFLOW_TRACKING_URI",
        ) from exc
    target = cache_dir / hashlib.sha256(uri.encode()).hexdigest()[:16]
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".download-", dir=cache_dir))
    try:
        try:
            # MLflow's client for a sqlite:// store makes its default artifact root ./mlruns in the current
            # directory: let that happen in the staging folder, not in the user's.
            with contextlib.chdir(staging):
                fetched = Path(download_artifacts(artifact_uri=uri, dst_path=str(staging)))
        except Exception as exc:  # MLflow raises its own, OSError, botocore… errors
            text = " ".join(str(exc).split())[:400] or type(exc).__name__
            unresolvable = "artifact repository" in text.lower() or "not a valid" in text.lower()
            raise BindingError(
                "unresolvable_uri" if unresolvable else code,
                f"{uri} could not be fetched through MLflow ({text}); check the URI and MLFLOW_TRACKING_URI",
            ) from exc
        fetched = _inside(fetched, staging)
        if fetched.is_dir() and (fetched / MLMODEL_FILE).is_file():
            keep = [fetched / MLMODEL_FILE, model_file(fetched, uri).path]
        elif fetched.is_dir():
            raise BindingError(code, f"{uri} is a folder without an {MLMODEL_FILE} file, not a model or a data file")
        else:
            keep = [fetched]
        target.mkdir(parents=True, exist_ok=True)
        for source in keep:
            destination = target / (source.relative_to(fetched) if fetched.is_dir() else source.name)
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, destination)  # atomic: a concurrent reader sees the old or the new file, whole
        return target if fetched.is_dir() else target / fetched.name
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _inside(path: Path, folder: Path) -> Path:
    """MLflow returns a path under `dst_path`; anything else is copied there first (never moved)."""
    try:
        path.resolve().relative_to(folder.resolve())
        return path
    except ValueError:
        copy = folder / "copy" / path.name
        if path.is_dir():
            shutil.copytree(path, copy)
        else:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
        return copy


def locate_file(
    uri: str,
    base_dir: Path,
    cache_dir: Path,
    *,
    code: str = "missing_eval_data",
    roots: ArtifactRoots | None = None,
    vouched: RegistryVouch | None = None,
    hint: str = "",
) -> Path:
    """The local file a data URI names (downloaded when it is not local). With `roots`, only from where the trust
    boundary allows (trust.py); `vouched` adds the registry version's own source. None: no check (`provenance
    bind`, reading what the person running it named)."""
    what = "model artifact" if code == "missing_artifact" else "evaluation data"
    extra = vouched.folders if vouched is not None else ()
    logged = vouched is not None and _logged(uri, vouched.data_uris, base_dir)  # the registry vouches for it
    if is_local_uri(uri):
        path = _local_path(uri, base_dir)
        if roots is None or logged:
            return path
        return check_local(path, roots, what, code, extra=extra, hint=hint)
    if roots is not None and not logged and not _vouched_uri(uri, vouched):
        check_remote(uri, roots, what)
    return _download(uri, cache_dir, code)


def _logged(uri: str, logged: tuple[str, ...], base_dir: Path) -> bool:
    """`uri` is one of the locations the version's run logged (local paths compared as paths)."""
    if uri in logged:
        return True
    if not is_local_uri(uri):
        return False
    path = _local_path(uri, base_dir)
    return any(is_local_uri(other) and _local_path(other, Path.cwd()) == path for other in logged)


def _vouched_uri(uri: str, vouched: RegistryVouch | None) -> bool:
    if vouched is None:
        return False
    source = vouched.source.rstrip("/")
    return uri in (vouched.models_uri, source) or (bool(source) and uri.startswith(source + "/"))


def locate_artifact(
    uri: str,
    base_dir: Path,
    cache_dir: Path,
    *,
    roots: ArtifactRoots | None = None,
    vouched: RegistryVouch | None = None,
    hint: str = "",
) -> LocatedArtifact:
    """The local model file an artifact URI names: the file itself, or an MLflow model directory's model file."""
    path = locate_file(uri, base_dir, cache_dir, code="missing_artifact", roots=roots, vouched=vouched, hint=hint)
    if path.is_dir() and (path / MLMODEL_FILE).is_file():
        found = model_file(path, uri)
        if roots is not None and is_local_uri(uri):  # MLmodel names the file: it may not lead out of the folder
            extra = vouched.folders if vouched is not None else ()
            check_local(found.path, roots, "model artifact", "missing_artifact", extra=(*extra, path.resolve()))
        return LocatedArtifact(
            path=found.path,
            serialization_format=found.serialization_format,
            model_class=found.model_class,
            mlflow_model_dir=True,
        )
    return LocatedArtifact(path=path)


def resolve_binding(
    custom_properties: dict[str, str],
    base_dir: Path,
    cache_dir: Path | None = None,
    *,
    roots: ArtifactRoots | None = None,
) -> ModelBinding:
    """Validate the keys and find the files they name (non-local URIs are downloaded under `cache_dir`, by
    default `<base_dir>/artifact-cache`), only where the trust boundary allows (`roots`; None: the settings'),
    with the registry's word on the hash when the binding names an MLflow version. Nothing is unpickled here."""
    missing = missing_keys(custom_properties)
    if missing:
        raise BindingError(
            "missing_binding",
            f"the model has no {', '.join(missing)} custom propert{'y' if len(missing) == 1 else 'ies'}; "
            "add them in DataHub (see the model-binding contract in docs/models.md) so Provenance can test it; "
            "for a model registered in MLflow, `provenance bind MODEL` writes them as model-version tags",
        )
    digest = custom_properties[ARTIFACT_SHA256].strip().lower()
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise BindingError("bad_binding", f"{ARTIFACT_SHA256} must be a 64-character hex sha256, got {digest!r}")
    threshold = parse_threshold(custom_properties.get(DECISION_THRESHOLD, "0.5"))
    task = parse_task(custom_properties.get(TASK))
    cache = cache_dir or base_dir / CACHE_FOLDER
    artifact_uri = custom_properties[ARTIFACT_URI].strip()
    eval_uri = custom_properties[EVAL_DATA_URI].strip()
    roots = roots or configured_roots(base_dir)
    vouched = vouch(custom_properties, artifact_uri)
    check_vouched_hash(digest, vouched)
    hint = untrusted_hint(custom_properties, artifact_uri)
    artifact = locate_artifact(artifact_uri, base_dir, cache, roots=roots, vouched=vouched, hint=hint)
    return ModelBinding(
        artifact_path=artifact.path,
        artifact_sha256=digest,
        eval_data_path=locate_file(eval_uri, base_dir, cache, roots=roots, vouched=vouched, hint=hint),
        label_column=custom_properties[LABEL_COLUMN].strip(),
        decision_threshold=threshold,
        task=task,
        artifact_uri=artifact_uri,
        eval_data_uri=eval_uri,
        serialization_format=artifact.serialization_format,
        model_class=artifact.model_class,
        mlflow_model=custom_properties.get(MLFLOW_MODEL) or None,
        mlflow_version=custom_properties.get(MLFLOW_VERSION) or None,
        mlflow_run_id=custom_properties.get(MLFLOW_RUN_ID) or None,
    )
