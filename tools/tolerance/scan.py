"""Scanning the production models downstream of one column: for each model and each dose axis that fits the column,
the doses at which the policy says WARNING and BLOCK (bisection.py), measured by the experiment engine as `assess`
measures one change (measure.py).

Each (model, axis) search is one job (jobs.py) for an `ExperimentExecutor`: threads in this process by default, a
Dask cluster when PROVENANCE_CLUSTER is set (tools/runtime/cluster.py). A process prepares each model once (binding
verified, evaluation data read and sampled as `assess` samples it) and reuses it, with its baseline, for every dose
of every axis it runs; the sample is fixed here, so every worker draws the same rows.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from policies import LoadedPolicy
from tools.catalog.conventions import load_conventions
from tools.catalog.discovery import AffectedModel, Discovery
from tools.evidence.build import environment, policy_record
from tools.evidence.schema import new_run_id
from tools.experiment.measure import not_tested
from tools.experiment.prepare import CATALOG_KINDS, sample_spec
from tools.experiment.sampling import SampleSpec
from tools.mutations import Kind
from tools.runtime.cluster import DaskExecutor
from tools.runtime.executor import ExperimentExecutor, make_executor
from tools.tolerance.jobs import axes_of, axis_job, prepared_model
from tools.tolerance.schema import AxisResult, ModelScan, ScanResult


def scan_executor(cluster: str | None) -> ExperimentExecutor:
    """The cluster `cluster` names (PROVENANCE_CLUSTER, tools/settings.py), else threads of this process."""
    return DaskExecutor(cluster) if cluster else make_executor("thread")


def scan(
    discovery: Discovery,
    base_dir: Path,
    loaded: LoadedPolicy,
    axes: list[str] | None = None,
    executor: ExperimentExecutor | None = None,
    cluster: str | None = None,
) -> ScanResult:
    """The tolerance map of every production model `discovery` reached; `axes` limits the dose axes by name. Runs
    on `executor`, else on the Dask cluster `cluster` names, else on threads of this process."""

    async def run() -> ScanResult:
        chosen = executor or scan_executor(cluster)
        try:
            return await scan_async(discovery, base_dir, loaded, axes, chosen)
        finally:
            if executor is None:
                await chosen.aclose()

    return asyncio.run(run())


async def scan_async(
    discovery: Discovery,
    base_dir: Path,
    loaded: LoadedPolicy,
    axes: list[str] | None,
    executor: ExperimentExecutor,
) -> ScanResult:
    started = time.perf_counter()
    sampling = sample_spec()
    kind: Kind | None = CATALOG_KINDS.get(discovery.field_type.upper())
    models = [_model_scan(m, kind, base_dir, sampling, axes) for m in discovery.production_models]
    jobs = [
        executor.run(axis_job, model, kind, axis, base_dir, loaded, sampling)
        for model, scanned in zip(discovery.production_models, models, strict=True)
        for axis in scanned.axis_names
    ]
    results: list[AxisResult] = list(await asyncio.gather(*jobs))
    for scanned in models:
        scanned.axes, results = results[: len(scanned.axis_names)], results[len(scanned.axis_names) :]
    return ScanResult(
        scan_id=f"scan-{new_run_id()}",
        dataset_urn=discovery.dataset.urn,
        field=discovery.field,
        field_type=discovery.field_type,
        models=[m.done() for m in models],
        not_tested=not_tested(discovery),
        coverage=discovery.coverage,
        policy=policy_record(loaded),
        conventions_sha256=load_conventions().sha256,
        experiments=sum(len(a.search.points) for m in models for a in m.axes),
        seconds=round(time.perf_counter() - started, 2),
        environment=environment(),
    )


class _Pending:
    """A model's scan while its axis jobs run: the axes chosen, then their results."""

    def __init__(self, scan: ModelScan, axis_names: list[str]) -> None:
        self.scan, self.axis_names = scan, axis_names
        self.axes: list[AxisResult] = []

    def done(self) -> ModelScan:
        return self.scan.model_copy(update={"axes": self.axes})


def _model_scan(
    model: AffectedModel, kind: Kind | None, base_dir: Path, sampling: SampleSpec, names: list[str] | None
) -> _Pending:
    prepared = prepared_model(model, base_dir, sampling)
    if isinstance(prepared, str):
        return _Pending(ModelScan(urn=model.urn, name=model.name, not_scanned=prepared), [])
    axis_names = [a.name for a in axes_of(prepared, kind) if names is None or a.name in names]
    scanned = ModelScan(
        urn=model.urn,
        name=model.name,
        task=prepared.task.task,
        column=prepared.feature_columns[0],
        artifact_sha256=prepared.binding.artifact_sha256,
        eval_data_sha256=prepared.eval_sha256,
        rows=len(prepared.frame),
    )
    return _Pending(scanned, axis_names)
