"""Working out a model version's binding from what MLflow recorded, and checking a binding that exists.

`propose` finds the version's scikit-learn pickle (hashes its bytes and unpickles exactly those to see a
classifier with `predict_proba`), the held-out data among the run's logged inputs, and the label; it refuses
(RegistryError) rather than write a binding `provenance assess` could not use. `check` reads a binding's keys the
way `assess` does, and never unpickles an artifact whose bytes do not match the recorded sha256.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from policies import TaskName
from tools import task_registry
from tools.experiment.binding import (
    ARTIFACT_SHA256,
    ARTIFACT_URI,
    DECISION_THRESHOLD,
    EVAL_DATA_URI,
    LABEL_COLUMN,
    MLFLOW_MODEL,
    MLFLOW_RUN_ID,
    MLFLOW_VERSION,
    REQUIRED_KEYS,
    BindingError,
    missing_keys,
    parse_threshold,
)
from tools.experiment.loading import (
    check_label,
    expected_columns,
    load_pipeline_bytes,
    load_verified_pipeline,
    read_artifact_bytes,
    read_table,
    sha256_bytes,
)
from tools.experiment.locate import is_local_uri, locate_artifact, locate_file, resolve_binding
from tools.experiment.task import TaskDecision, check_labels, decide_task
from tools.registry.mlflow_registry import (
    ALIASES_TAG,
    EVAL_CONTEXTS,
    LoggedInput,
    MlflowRegistry,
    ModelRef,
    ModelVersionInfo,
    RegistryError,
)

BINDING_KEYS = (*REQUIRED_KEYS, DECISION_THRESHOLD, MLFLOW_RUN_ID, MLFLOW_MODEL, MLFLOW_VERSION)


@dataclass(frozen=True)
class BindOptions:
    version: str | None = None
    eval_data: str | None = None
    label: str | None = None
    threshold: float | None = None


@dataclass
class Proposal:
    """What `bind` would write, and what it found on the way."""

    version: ModelVersionInfo
    tags: dict[str, str]  # the whole binding, in the order it is shown and written
    findings: list[str]  # how each value was found, for the person confirming

    @property
    def changed(self) -> dict[str, str]:
        return {k: v for k, v in self.tags.items() if self.version.tags.get(k) != v}


def propose(registry: MlflowRegistry, ref: ModelRef, options: BindOptions, cwd: Path | None = None) -> Proposal:
    """The binding for the version `ref`/`options` name; RegistryError (nothing written) when it cannot be made."""
    cwd = cwd or Path.cwd()
    version = registry.find_version(ref, options.version)
    findings = [f"{version.name} version {version.version} (stage {version.stage}; chosen: {version.chosen})"]
    threshold = _threshold(options.threshold, version.tags.get(DECISION_THRESHOLD))
    with tempfile.TemporaryDirectory(prefix="provenance-bind-") as scratch:
        cache = Path(scratch)
        try:
            artifact_uri, pipeline, digest, artifact_note = _artifact(version, cwd, cache)
            findings.append(artifact_note)
            inputs = expected_columns(pipeline)
            eval_uri, eval_note = _eval_uri(registry, version, options.eval_data, cwd)
            frame, _ = read_table(locate_file(eval_uri, cwd, cache))
        except BindingError as exc:
            raise RegistryError(f"cannot bind {version.name} version {version.version}: {exc}") from exc
    label, label_note = _label(options.label, frame, inputs, eval_uri, pipeline)
    try:
        decision = _checked_task(pipeline, frame, label, eval_uri, echo=True)
    except BindingError as exc:
        raise RegistryError(f"cannot bind {version.name} version {version.version}: {exc}") from exc
    if inputs is not None:
        absent = [c for c in inputs if c not in frame.columns]
        if absent:
            raise RegistryError(
                f"cannot bind {version.name} version {version.version}: the evaluation data {eval_uri} lacks the "
                f"model's input column(s) {', '.join(absent)} (it has {', '.join(map(str, frame.columns))}); "
                "pass --eval-data with data that holds every input"
            )
    findings.append(
        f"{eval_note}: {len(frame)} rows; label {label!r} ({label_note}): {_label_counts(decision, frame[label])}"
    )
    if inputs is None:
        findings.append(
            "the pipeline records no input column names (feature_names_in_): assess will read every evaluation "
            "column except the label, and cannot tell which table columns it uses; fit it on a pandas DataFrame"
        )
    tags = {
        ARTIFACT_URI: artifact_uri,
        ARTIFACT_SHA256: digest,
        EVAL_DATA_URI: eval_uri,
        LABEL_COLUMN: label,
    }
    if threshold is not None:
        tags[DECISION_THRESHOLD] = threshold
        if options.threshold is None:
            findings.append(f"keeps the decision threshold {threshold} the version already has")
    if version.run_id:
        tags[MLFLOW_RUN_ID] = version.run_id
    tags[MLFLOW_MODEL] = version.name
    tags[MLFLOW_VERSION] = version.version
    if version.aliases or ALIASES_TAG in version.tags:  # an alias moved away: clear the stale marker too
        tags[ALIASES_TAG] = ",".join(version.aliases)
        findings.append(
            f"aliases {', '.join(version.aliases)}: recorded as {ALIASES_TAG}, which DataHub's mlflow source carries"
            if version.aliases
            else f"no alias points at this version any more: {ALIASES_TAG} cleared"
        )
    return Proposal(version=version, tags=tags, findings=findings)


def _artifact(version: ModelVersionInfo, cwd: Path, cache: Path) -> tuple[str, Any, str, str]:
    """(the URI to record, the unpickled classifier, sha256 of the unpickled bytes, a description)."""
    candidates = [version.source] if version.source else []
    candidates.append(version.models_uri)
    errors: list[str] = []
    for uri in [_absolute(u, cwd) for u in candidates]:
        try:
            located = locate_artifact(uri, cwd, cache)
            data = read_artifact_bytes(located.path)
        except BindingError as exc:
            if exc.code == "not_a_pipeline":  # found, but not scikit-learn: no other URI will do better
                raise
            errors.append(str(exc))
            continue
        digest = sha256_bytes(data)
        # exactly the bytes hashed; any task assess measures (binary, multiclass, regression: task.py decides)
        pipeline = load_pipeline_bytes(
            data, located.serialization_format, uri, any_task=True, model_class=located.model_class
        )
        inputs = expected_columns(pipeline)
        fmt = located.serialization_format or "joblib"
        note = (
            f"artifact {uri} → {located.path.name} ({fmt}, sha256 {digest[:12]}…): a {type(pipeline).__name__}, "
            f"{decide_task(pipeline).basis}; inputs {', '.join(inputs) if inputs else 'not recorded'}"
        )
        return uri, pipeline, digest, note
    raise BindingError("missing_artifact", "the version's model files could not be read: " + "; ".join(errors))


def _eval_uri(registry: MlflowRegistry, version: ModelVersionInfo, given: str | None, cwd: Path) -> tuple[str, str]:
    if given:
        return _absolute(given, cwd), f"evaluation data {given} (--eval-data)"
    inputs = registry.run_inputs(version.run_id) if version.run_id else []
    held_out = [i for i in inputs if i.held_out]
    usable = [i for i in held_out if i.uri]
    if not usable:
        seen = ", ".join(f"{i.name} ({i.context or 'no context'})" for i in inputs) or "none"
        why = f"held-out inputs without a readable source: {', '.join(i.name for i in held_out)}; " if held_out else ""
        raise RegistryError(
            f"cannot bind {version.name} version {version.version}: no held-out evaluation data found — "
            f"{why}run {version.run_id or '(none: the version has no run)'} logged inputs: {seen}. A held-out input "
            f"is one logged with mlflow.log_input(..., context=…) in {'/'.join(EVAL_CONTEXTS)}. "
            "Pass --eval-data URI (CSV or Parquet with the model's input columns and the label)"
        )
    uris = sorted({i.uri for i in usable if i.uri})
    if len(uris) > 1:
        listed = "; ".join(f"{i.name} ({i.context}): {i.uri}" for i in usable)
        raise RegistryError(
            f"cannot bind {version.name} version {version.version}: the run logged more than one held-out dataset "
            f"({listed}); choose one with --eval-data"
        )
    chosen: LoggedInput = usable[0]
    uri = _absolute(uris[0], cwd)
    moved = f", recorded as {uri}" if uri != uris[0] else ""
    return uri, f"evaluation data {chosen.name!r} (run input, context {chosen.context}; source {uris[0]}{moved})"


def _absolute(uri: str, cwd: Path) -> str:
    """A relative path would later resolve against the catalog's folder: record where it is now."""
    if is_local_uri(uri):
        text = uri.removeprefix("file://")
        if not Path(text).expanduser().is_absolute():
            return str((cwd / text).resolve())
    return uri


def _label(
    given: str | None, frame: pd.DataFrame, inputs: list[str] | None, where: str, pipeline: Any = None
) -> tuple[str, str]:
    """(the label column, how it was chosen): --label; else the one column that is not a model input; else the one
    such column holding what the model predicts (a classifier's classes, a regressor's numbers: ids and unused
    features are not labels, and a 0/1 column is no label for a three-class model)."""
    if given:
        return given, "--label"
    if inputs is None:
        raise RegistryError(
            "the pipeline records no input column names, so the label column cannot be told apart: pass --label"
        )
    others = [str(c) for c in frame.columns if c not in inputs]
    if len(others) == 1:
        return others[0], "the one column that is not a model input"
    if not others:
        raise RegistryError(f"{where} has only the model's input columns, no label column; pass --eval-data")
    binary = [c for c in others if _is_binary(frame[c])]
    predicted = [c for c in others if _predicts(pipeline, frame[c])] if pipeline is not None else binary
    if len(predicted) == 1:
        rest = ", ".join(c for c in others if c != predicted[0])
        kind = "0/1 column" if predicted[0] in binary else "column holding what the model predicts"
        return predicted[0], f"the one {kind} that is not a model input (also not inputs: {rest})"
    raise RegistryError(
        f"{where} has more than one column besides the model's inputs ({', '.join(others)})"
        + (f", and {len(binary)} of them hold 0/1 values" if binary else "")
        + "; say which is the label with --label"
    )


def _checked_task(
    pipeline: Any, frame: pd.DataFrame, label: str, where: str, override: TaskName | None = None, *, echo: bool = False
) -> TaskDecision:
    """The task assess will measure the model as, with the label checked against it as assess checks it. `echo`:
    a missing label lists the file's columns (only for a file the person running `bind` named)."""
    if label not in frame.columns:
        check_label(frame, label, where, echo=echo)  # raises
    decision = decide_task(pipeline, override)
    check_labels(decision, frame[label], label, where)
    return decision


def _label_counts(decision: TaskDecision, labels: pd.Series) -> str:
    return task_registry.get(decision.task).label_summary(labels, decision.classes)


def _predicts(pipeline: Any, values: pd.Series) -> bool:
    """`values` are what `pipeline` predicts: a classifier's classes (at least two of them), or, for a regressor,
    numbers that are not a 0/1 flag."""
    classes = getattr(pipeline, "classes_", None)
    present = pd.unique(values.dropna())
    if classes is not None:
        known = {_as_key(c) for c in classes}
        return len(present) >= 2 and {_as_key(v) for v in present} <= known
    return pd.api.types.is_numeric_dtype(values) and not _is_binary(values) and len(present) > 2


def _as_key(value: Any) -> str:
    """A label as a class: 1, 1.0, True and "1" alike (a CSV reads labels back in another type than trained)."""
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return str(value)


def _is_binary(values: pd.Series) -> bool:
    return bool(values.notna().all()) and set(pd.unique(values)) <= {0, 1} and values.nunique() == 2


def _threshold(given: float | None, existing: str | None) -> str | None:
    text = repr(given) if given is not None else existing
    if text is None:
        return None
    try:
        parse_threshold(text)
    except BindingError as exc:
        raise RegistryError(f"--threshold: {exc}") from exc
    return text


# --- checking ---------------------------------------------------------------------------------------------------


@dataclass
class CheckResult:
    """One source's binding (MLflow's version tags, or DataHub's custom properties) as assess would read it."""

    where: str
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ok: list[str] = field(default_factory=list)
    code: str | None = None  # the reason code assess would give (missing_binding, hash_mismatch, …)

    @property
    def valid(self) -> bool:
        return not self.missing and not self.problems


def binding_keys(properties: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in properties.items() if k in BINDING_KEYS}


def check(properties: dict[str, str], base_dir: Path, where: str) -> CheckResult:
    """Is this binding complete and usable? The artifact is unpickled only when its bytes match the sha256."""
    result = CheckResult(where=where)
    result.missing = missing_keys(properties)
    if result.missing:
        result.code = "missing_binding"
        return result
    with tempfile.TemporaryDirectory(prefix="provenance-check-") as scratch:
        try:
            binding = resolve_binding(properties, base_dir, cache_dir=Path(scratch))
            result.ok.append(f"artifact {properties[ARTIFACT_URI]} resolves to {binding.artifact_path}")
            pipeline = load_verified_pipeline(binding)
            decision = decide_task(pipeline, binding.task)  # a task_mismatch is reported like assess reports it
            result.ok.append(
                f"sha256 matches ({binding.artifact_sha256[:12]}…); a {type(pipeline).__name__}, {decision.basis}"
            )
            frame, _ = read_table(binding.eval_data_path)
            _checked_task(pipeline, frame, binding.label_column, str(binding.eval_data_path), binding.task)
        except BindingError as exc:
            result.code = exc.code
            result.problems.append(f"{exc.code}: {exc}")
            return result
    result.ok.append(
        f"evaluation data {properties[EVAL_DATA_URI]}: {len(frame)} rows, label {binding.label_column!r}: "
        f"{_label_counts(decision, frame[binding.label_column])}"
    )
    inputs = expected_columns(pipeline)
    if inputs is None:
        result.ok.append("the pipeline records no input column names (assess uses every non-label column)")
    else:
        absent = [c for c in inputs if c not in frame.columns]
        if absent:
            result.code = "columns_missing"
            result.problems.append(f"columns_missing: the evaluation data lacks input column(s) {', '.join(absent)}")
        else:
            result.ok.append(f"every model input is in the evaluation data ({', '.join(inputs)})")
    return result
