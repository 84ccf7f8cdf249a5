"""One dose search (a model × an axis) as a job an executor can run anywhere: in this process, or on a cluster
worker (tools/runtime/cluster.py). The job names its model and files, never carries a frame or a pipeline: a worker
prepares the model itself (verifying the artifact's sha256 before unpickling it, as `assess` does) and keeps it for
the next axis of the same model, with the baseline it computed."""

from __future__ import annotations

import threading
from pathlib import Path

from policies import LoadedPolicy
from tools.catalog.discovery import AffectedModel
from tools.experiment.job import process_cache
from tools.experiment.prepare import PreparedModel, prepare_model
from tools.experiment.sampling import SampleSpec
from tools.mutations import Kind, column_kind, parse_mutation
from tools.tolerance.bisection import DosePoint, search
from tools.tolerance.doses import DoseAxis, axes_for
from tools.tolerance.measure import measure_dose
from tools.tolerance.schema import AxisResult

PROBE = parse_mutation("null_inject", {})  # fits every column: what preparing a model needs to know of the change
_PREPARED: dict[tuple[str, str, str], PreparedModel | str] = {}
_KEEP = 8  # prepared models kept per process (each holds its sampled rows): a long-lived chat worker stays bounded
_LOCKS: dict[tuple[str, str, str], threading.Lock] = {}
_GUARD = threading.Lock()


def prepared_model(model: AffectedModel, base_dir: Path, sampling: SampleSpec) -> PreparedModel | str:
    """This process's prepared copy of the model, or why it cannot be prepared (INCOMPLETE's message)."""
    # The same model reached from another column has other feature links (what the change lands in): another key.
    links = sorted((f.urn, f.column, f.link, f.dataset_urn, tuple(f.non_identity_transforms)) for f in model.features)
    key = (model.urn, str(base_dir), repr(sorted(model.custom_properties.items())) + repr(sampling) + repr(links))
    with _GUARD:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        with _GUARD:
            kept = _PREPARED.get(key)
        if kept is not None:
            return kept
        found = prepare_model(model, PROBE, base_dir, sampling=sampling)
        value = (
            found
            if isinstance(found, PreparedModel)
            else "; ".join(r.message for r in found.reasons) or "the model could not be prepared"
        )
        with _GUARD:
            _PREPARED[key] = value
            for stale in list(_PREPARED)[:-_KEEP]:  # oldest first; a job using one keeps its own reference
                _PREPARED.pop(stale, None)
                _LOCKS.pop(stale, None)
        return value


def axes_of(prepared: PreparedModel, kind: Kind | None) -> list[DoseAxis]:
    values = prepared.frame[prepared.feature_columns[0]]
    return axes_for(kind or column_kind(values), values)


def axis_job(
    model: AffectedModel, kind: Kind | None, axis_name: str, base_dir: Path, loaded: LoadedPolicy, sampling: SampleSpec
) -> AxisResult:
    prepared = prepared_model(model, base_dir, sampling)
    if isinstance(prepared, str):
        raise RuntimeError(f"{model.name} could not be prepared on this worker: {prepared}")
    [axis] = [a for a in axes_of(prepared, kind) if a.name == axis_name]
    cache = process_cache()

    def judge(dose: float) -> DosePoint:
        return measure_dose(prepared, axis.mutation(dose), dose, loaded, cache)

    found = search(axis.grid, judge)
    labels = {d: axis.label(d) for d in axis.grid}
    return AxisResult(axis=axis.name, op=axis.op, unit=axis.unit, search=found, labels=labels)
